/**
 * The documentation is tested where it shows code: every ```ts block of README.md and docs/*.md type-checks against
 * this checkout's source, as its own module, importing the package by name; every relative link points to a file
 * (and heading) that exists. How a block says what it uses without defining it: test/support/snippets.ts.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import ts from "typescript";
import { beforeAll, describe, expect, it } from "vitest";
import {
  entryPoints,
  extractSnippets,
  headingAnchors,
  markdownFiles,
  relativeLinks,
  type Snippet,
} from "../support/snippets.js";

const root = join(import.meta.dirname, "..", "..");

/**
 * Import specifier → source file the blocks compile against. Derived from package.json "exports" (`./x` with
 * `types: ./dist/x/index.d.ts` → `src/x/index.ts`), so a new subpath export needs no change here; add a line only
 * for an entry whose types are not at `./dist/<path>.d.ts`, e.g. `"langgraph-guards/x": "src/x/entry.ts"`.
 */
const ENTRY_POINTS = entryPoints(root, {});

/** The compiler options a reader's project would have (strict, NodeNext). */
const COMPILER_OPTIONS: ts.CompilerOptions = {
  strict: true,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  target: ts.ScriptTarget.ES2022,
  lib: ["lib.es2023.d.ts"],
  types: ["node"],
  skipLibCheck: true,
  noEmit: true,
};

/** README.md must stay short: the depth lives in docs/. */
const README_MAX_BYTES = 10_000;

const files = markdownFiles(root);
const texts = new Map(files.map((f) => [f, readFileSync(join(root, f), "utf8")]));
const snippets = files.flatMap((f) => extractSnippets(f, texts.get(f) ?? ""));
const checked = snippets.filter((s) => !s.skip);
const skipped = snippets.filter((s) => s.skip);
const at = (s: Snippet) => `${s.file}:${s.line}`;

/** The virtual module of a block (ESM: .mts), next to the Markdown file so that errors read naturally. */
const moduleName = (s: Snippet) => join(root, `${s.file}.L${s.line}.mts`);
const moduleText = (s: Snippet) => `${s.preamble}\n${s.code}\nexport {};\n`;

/** TypeScript's diagnostics for every checked block, by block; one program for all of them. */
let diagnostics: Map<Snippet, string[]>;

function typeCheck(): Map<Snippet, string[]> {
  const virtual = new Map(checked.map((s) => [moduleName(s), s]));
  const host = ts.createCompilerHost(COMPILER_OPTIONS, true);
  const { getSourceFile, fileExists, readFile } = host;
  host.getSourceFile = (name, version, onError, create) => {
    const s = virtual.get(name);
    return s ? ts.createSourceFile(name, moduleText(s), version, true) : getSourceFile(name, version, onError, create);
  };
  host.fileExists = (name) => virtual.has(name) || fileExists(name);
  host.readFile = (name) => {
    const s = virtual.get(name);
    return s ? moduleText(s) : readFile(name);
  };
  const cache = ts.createModuleResolutionCache(root, (x) => x, COMPILER_OPTIONS);
  host.resolveModuleNameLiterals = (literals, containingFile, redirected, options, containingSource) =>
    literals.map((literal) => {
      const source = ENTRY_POINTS.get(literal.text);
      if (source) return { resolvedModule: { resolvedFileName: source, extension: ts.Extension.Ts } };
      const mode = ts.getModeForUsageLocation(containingSource, literal, options);
      return ts.resolveModuleName(literal.text, containingFile, options, host, cache, redirected, mode);
    });
  const program = ts.createProgram([...virtual.keys()], COMPILER_OPTIONS, host);
  const global = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()];
  if (global.length > 0) throw new Error(ts.formatDiagnostics(global, formatHost));
  const result = new Map<Snippet, string[]>();
  for (const [name, s] of virtual) {
    const sourceFile = program.getSourceFile(name);
    if (!sourceFile) throw new Error(`${at(s)}: not in the program`);
    const preambleLines = s.preamble.split("\n").length;
    const found = [...program.getSyntacticDiagnostics(sourceFile), ...program.getSemanticDiagnostics(sourceFile)];
    result.set(
      s,
      found.map((d) => {
        const message = ts.flattenDiagnosticMessageText(d.messageText, "\n");
        if (d.start === undefined) return `${at(s)}: TS${d.code}: ${message}`;
        const { line, character } = sourceFile.getLineAndCharacterOfPosition(d.start);
        const place =
          line < preambleLines
            ? `${at(s)} (in its preamble)`
            : `${s.file}:${s.line + line - preambleLines}:${character + 1}`;
        return `${place}: TS${d.code}: ${message}`;
      }),
    );
  }
  return result;
}

const formatHost: ts.FormatDiagnosticsHost = {
  getCanonicalFileName: (f) => f,
  getCurrentDirectory: () => root,
  getNewLine: () => "\n",
};

describe("documentation", () => {
  beforeAll(() => {
    diagnostics = typeCheck();
  });

  it("has ts blocks to check, and every entry point maps to a source file", () => {
    expect(checked.length).toBeGreaterThan(0);
    for (const [specifier, source] of ENTRY_POINTS) expect(existsSync(source), `${specifier} → ${source}`).toBe(true);
  });

  it.each(checked.map((s) => [at(s), s] as const))("%s type-checks", (_, s) => {
    expect([...s.errors.map((e) => `${at(s)}: ${e}`), ...(diagnostics.get(s) ?? [])]).toEqual([]);
  });

  // Blocks marked <!-- snippet: skip --> are listed here, as skipped tests.
  for (const s of skipped) it.skip(`${at(s)} (<!-- snippet: skip -->)`, () => {});

  it("every relative link points to a file that exists (and to a heading of it)", () => {
    const broken: string[] = [];
    for (const file of files) {
      for (const { line, target } of relativeLinks(texts.get(file) ?? "")) {
        const [path = "", anchor] = target.split("#");
        const resolved = path === "" ? join(root, file) : join(root, dirname(file), decodeURIComponent(path));
        if (!existsSync(resolved)) {
          broken.push(`${file}:${line}: ${target} (no ${relative(root, resolved)})`);
        } else if (anchor && resolved.endsWith(".md") && !headingAnchors(readFileSync(resolved, "utf8")).has(anchor)) {
          broken.push(`${file}:${line}: ${target} (no heading #${anchor} in ${relative(root, resolved)})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it(`README.md is at most ${README_MAX_BYTES} bytes and links every docs page`, () => {
    expect(statSync(join(root, "README.md")).size).toBeLessThanOrEqual(README_MAX_BYTES);
    const linked = new Set(relativeLinks(texts.get("README.md") ?? "").map((l) => l.target.split("#")[0]));
    const pages = files.filter((f) => f.startsWith("docs/"));
    expect(pages.filter((f) => !linked.has(f))).toEqual([]);
  });

  it("README.md names every entry point (issue 61, 12b: `/classes` was missing)", () => {
    const readme = texts.get("README.md") ?? "";
    const unnamed = [...ENTRY_POINTS.keys()].filter((e) => {
      const sub = e.slice("langgraph-guards".length);
      return !readme.includes(`\`${e}\``) && (sub === "" || !readme.includes(`\`${sub}\``));
    });
    expect(unnamed).toEqual([]);
  });

  it("docs/README.md links every other docs page", () => {
    const linked = new Set(
      relativeLinks(texts.get("docs/README.md") ?? "").map((l) => `docs/${l.target.split("#")[0]}`),
    );
    const pages = files.filter((f) => f.startsWith("docs/") && f !== "docs/README.md");
    expect(pages.filter((f) => !linked.has(f))).toEqual([]);
  });

  it("the README's measured figures are the ones docs/replay.md explains (a cut of its table)", () => {
    const readme = policyTables(texts.get("README.md") ?? "");
    expect(readme).toHaveLength(1);
    const [cut] = readme as [PolicyTable];
    expect(cut.rows.size).toBeGreaterThan(0);
    // The table of docs/replay.md with every column of the README's: each README cell is its cell, policy by policy.
    const full = policyTables(texts.get("docs/replay.md") ?? "").find((t) =>
      cut.headers.every((h) => t.headers.includes(h)),
    );
    expect(full, "a table in docs/replay.md with the README's columns").toBeDefined();
    for (const [policy, cells] of cut.rows) expect(full?.rows.get(policy), policy).toMatchObject(cells);
  });

  it("no page points readers to a folder beside the repository", () => {
    const outside = [".", "./shared"].join(".");
    const found = files.flatMap((f) =>
      (texts.get(f) ?? "").split("\n").flatMap((l, i) => (l.includes(outside) ? [`${f}:${i + 1}`] : [])),
    );
    expect(found).toEqual([]);
  });
});

/** A Markdown table whose first column is "policy": its headers, and each row's cells by header, by policy. */
interface PolicyTable {
  headers: string[];
  rows: Map<string, Record<string, string>>;
}

/** The tables of a Markdown text whose header row starts with "| policy |" (bold marks dropped from cells). */
function policyTables(text: string): PolicyTable[] {
  const cells = (line: string) =>
    line
      .slice(1, -1)
      .split("|")
      .map((c) => c.trim().replaceAll("**", ""));
  const lines = text.split("\n");
  const tables: PolicyTable[] = [];
  lines.forEach((line, i) => {
    if (!line.startsWith("| policy |")) return;
    const headers = cells(line);
    const rows = new Map<string, Record<string, string>>();
    for (let j = i + 2; j < lines.length && lines[j]?.startsWith("|"); j += 1) {
      const row = cells(lines[j] as string);
      rows.set(row[0] as string, Object.fromEntries(headers.map((h, k) => [h, row[k] ?? ""])));
    }
    tables.push({ headers, rows });
  });
  return tables;
}
