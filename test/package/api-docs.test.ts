/**
 * The API reference (`npm run docs`: TypeDoc over every entry point of package.json "exports", written to docs/api/)
 * documents the whole public surface. TypeDoc's validation fails on an export, property or method without a doc
 * comment and on a link that does not resolve; what it does not check is checked here, on this checkout's source:
 * typedoc.json covers every entry point, and every export of every entry point has a summary and an `@example`.
 */
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { entryPoints } from "../support/snippets.js";

const root = join(import.meta.dirname, "..", "..");

/** Import specifier → source file, from package.json "exports" (`./core` → `src/core/index.ts`). */
const ENTRY_POINTS = entryPoints(root, {});

/** typedoc.json is JSON with comments (TypeDoc reads it with TypeScript's config reader). */
function typedocConfig(): { entryPoints?: string[] } {
  const file = join(root, "typedoc.json");
  const { config, error } = ts.readConfigFile(file, (path) => readFileSync(path, "utf8"));
  if (error) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, "\n"));
  return config as { entryPoints?: string[] };
}

/** Whether a declaration's doc comment has a summary and an `@example` (a class or function may carry either on
 * any of its declarations, e.g. an overload). */
function docOf(symbol: ts.Symbol, checker: ts.TypeChecker): { summary: boolean; example: boolean } {
  const summary = ts.displayPartsToString(symbol.getDocumentationComment(checker)).trim() !== "";
  const example = symbol.getJsDocTags(checker).some((tag) => tag.name === "example");
  return { summary, example };
}

describe("API reference", () => {
  it("typedoc.json documents every entry point of package.json exports", () => {
    const configured = (typedocConfig().entryPoints ?? []).map((p) => join(root, p)).sort();
    expect(configured).toEqual([...ENTRY_POINTS.values()].sort());
  });

  it("every export of every entry point has a summary and an @example", () => {
    const program = ts.createProgram([...ENTRY_POINTS.values()], {
      strict: true,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      types: ["node"],
      skipLibCheck: true,
      noEmit: true,
    });
    const checker = program.getTypeChecker();
    const missing: string[] = [];
    let checked = 0;
    for (const [specifier, file] of ENTRY_POINTS) {
      const source = program.getSourceFile(file);
      const moduleSymbol = source && checker.getSymbolAtLocation(source);
      if (moduleSymbol === undefined) throw new Error(`${specifier}: ${file} is not a module`);
      for (const exported of checker.getExportsOfModule(moduleSymbol)) {
        const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
        const declaration = symbol.declarations?.[0];
        const where = declaration
          ? `${relative(root, declaration.getSourceFile().fileName)}:${
              declaration.getSourceFile().getLineAndCharacterOfPosition(declaration.getStart()).line + 1
            }`
          : "?";
        const { summary, example } = docOf(symbol, checker);
        checked += 1;
        if (!summary) missing.push(`${specifier} ${exported.name} (${where}): no summary`);
        if (!example) missing.push(`${specifier} ${exported.name} (${where}): no @example`);
      }
    }
    expect(checked).toBeGreaterThan(100);
    expect(missing).toEqual([]);
  });
});
