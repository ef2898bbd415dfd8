/**
 * `langchain` is an optional peer: every entry point, `/middleware` included, imports without it (users of
 * createReactAgent or their own graphs need not install it; .ci/check-install.mjs imports them in a project without
 * it). So the source imports only types from it statically; what needs its values loads it when called
 * (`await import("langchain")`), which only a createAgent run does. `@opentelemetry/api`, the other optional peer,
 * is not imported statically at all, not even for types (they would reach the published .d.ts): `guardMetrics`
 * loads it with `import()` when it is installed.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { sourceFiles } from "../support/snippets.js";

const root = join(import.meta.dirname, "..", "..");

/** The static imports and re-exports of `langchain` in a file that are not type-only, as `file:line`. */
function valueImports(file: string, text: string, pkg = /^langchain(\/|$)/, typesToo = false): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const found: string[] = [];
  for (const node of source.statements) {
    if (!ts.isImportDeclaration(node) && !ts.isExportDeclaration(node)) continue;
    const from = node.moduleSpecifier;
    if (from === undefined || !ts.isStringLiteral(from) || !pkg.test(from.text)) continue;
    const typeOnly = ts.isImportDeclaration(node)
      ? node.importClause?.isTypeOnly === true ||
        (node.importClause?.name === undefined &&
          node.importClause?.namedBindings !== undefined &&
          ts.isNamedImports(node.importClause.namedBindings) &&
          node.importClause.namedBindings.elements.every((e) => e.isTypeOnly))
      : node.isTypeOnly;
    if (!typeOnly || typesToo) found.push(`${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`);
  }
  return found;
}

describe("langchain, an optional peer", () => {
  it("is imported for its types only, never loaded with an entry point", () => {
    const found = sourceFiles(root, "src").flatMap((f) => valueImports(f, readFileSync(join(root, f), "utf8")));
    expect(found).toEqual([]);
  });

  it("finds a value import, and lets a type-only one pass", () => {
    expect(valueImports("a.ts", 'import { toolStrategy } from "langchain";\n')).toEqual(["a.ts:1"]);
    expect(valueImports("b.ts", 'import type { createMiddleware } from "langchain";\n')).toEqual([]);
    expect(valueImports("c.ts", 'import { type ToolStrategy } from "langchain";\n')).toEqual([]);
    expect(valueImports("d.ts", 'export { createAgent } from "langchain";\n')).toEqual(["d.ts:1"]);
  });
});

describe("@opentelemetry/api, an optional peer", () => {
  const otel = /^@opentelemetry\//;
  it("is never imported statically, not even for its types", () => {
    const found = sourceFiles(root, "src").flatMap((f) =>
      valueImports(f, readFileSync(join(root, f), "utf8"), otel, true),
    );
    expect(found).toEqual([]);
  });

  it("finds a type-only import too", () => {
    expect(valueImports("a.ts", 'import type { Meter } from "@opentelemetry/api";\n', otel, true)).toEqual(["a.ts:1"]);
  });
});
