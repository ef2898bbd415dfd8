/**
 * Every import of the package that the documentation shows names something its entry point exports: the `@example`
 * blocks of the source's doc comments (TypeDoc publishes them; they are not compiled), and every ```ts block of the
 * README and docs/ (those not compiled by docs.test.ts included). A wrong entry point ("`guardMiddleware` from
 * `langgraph-guards`", which only `langgraph-guards/middleware` exports) fails here, naming the file and line.
 * Issue 61, item 12a: also an import anywhere in a page (inline code, any fence) or in a notebook's cells, and what
 * the prose says is exported from an entry point (docs.test.ts compiles blocks, which never saw a sentence).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { entryPoints, extractSnippets, markdownFiles, sourceFiles } from "../support/snippets.js";

const root = join(import.meta.dirname, "..", "..");
const ENTRY_POINTS = entryPoints(root, {});

/** An import of the package in a piece of documentation: where it is, from which entry point, which names. */
interface ShownImport {
  where: string;
  from: string;
  names: string[];
}

const IMPORT = /import\s+(?:type\s+)?\{([^}]*)\}\s*from\s*["'](langgraph-guards(?:\/[\w-]+)?)["']/g;

/** The package's imports in `code`, a block that starts at line `line` of `file`. */
function importsIn(code: string, file: string, line: number): ShownImport[] {
  return [...code.matchAll(IMPORT)].map((m) => {
    const before = code.slice(0, m.index).split("\n").length - 1;
    const names = (m[1] ?? "")
      .split(",")
      .map((n) =>
        n
          .trim()
          .replace(/^type\s+/, "")
          .split(/\s+as\s+/)[0]
          ?.trim(),
      )
      .filter((n): n is string => n !== undefined && n !== "");
    return { where: `${file}:${line + before}`, from: m[2] as string, names };
  });
}

/** The code of the `@example` blocks of a source file's doc comments, with the line each starts at. */
function exampleBlocks(text: string): { code: string; line: number }[] {
  const lines = text.split("\n");
  const blocks: { code: string; line: number }[] = [];
  let inExample = false;
  let body: string[] | undefined;
  let start = 0;
  lines.forEach((raw, i) => {
    const line = raw.replace(/^\s*\*\s?/, "");
    if (/^\s*\*\s*@example/.test(raw)) inExample = true;
    else if (/^\s*\*\s*@\w/.test(raw) || /\*\/\s*$/.test(raw)) {
      if (body === undefined) inExample = false;
    }
    if (!inExample) return;
    if (line.trim().startsWith("```")) {
      if (body === undefined) {
        body = [];
        start = i + 2;
      } else {
        blocks.push({ code: body.join("\n"), line: start });
        body = undefined;
        inExample = false;
      }
    } else if (body !== undefined) body.push(line);
  });
  return blocks;
}

/** Each entry point's exported names (values and types), read by TypeScript from its source. */
function exportedNames(): Map<string, Set<string>> {
  const program = ts.createProgram([...ENTRY_POINTS.values()], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    noEmit: true,
    skipLibCheck: true,
  });
  const checker = program.getTypeChecker();
  const names = new Map<string, Set<string>>();
  for (const [specifier, file] of ENTRY_POINTS) {
    const source = program.getSourceFile(file);
    const symbol = source === undefined ? undefined : checker.getSymbolAtLocation(source);
    names.set(specifier, new Set(symbol === undefined ? [] : checker.getExportsOfModule(symbol).map((s) => s.name)));
  }
  return names;
}

/** The imports among `shown` that name an entry point that does not exist, or a name it does not export. */
function wrongImports(shown: readonly ShownImport[], exported: ReadonlyMap<string, ReadonlySet<string>>) {
  return shown.flatMap(({ where, from, names }) => {
    const entry = exported.get(from);
    if (entry === undefined) return [`${where}: "${from}" is not an entry point of the package`];
    return names.filter((n) => !entry.has(n)).map((n) => `${where}: "${from}" does not export ${n}`);
  });
}

/** Names a piece of prose means: the leading identifier of each code span (`guardVerdict(result)`: guardVerdict). */
const namesIn = (text: string) => [...text.matchAll(/`([A-Za-z_$][\w$]*)/g)].map((m) => m[1] as string);
const ENTRY = /`(langgraph-guards(?:\/[\w-]+)?)`/g;
/** A clause saying where names come from: "exported from `E`", "(from `E`)", "exported by `E`". */
const WHERE = /\b(?:from|by)\s+(?:the root\s+)?`langgraph-guards(?:\/[\w-]+)?`/;

/**
 * What the prose of a Markdown text says is exported from an entry point: per clause (a sentence, or a part of one
 * between semicolons) that says "from `E`" or "by `E`", the names it means (of a clause that names none and starts
 * with They/These/Both, those of the first sentence of the paragraph before), each to be exported by every entry
 * point it names.
 */
function proseClaims(file: string, text: string, known: ReadonlySet<string>): ShownImport[] {
  const claims: ShownImport[] = [];
  let line = 1;
  let before: string[] = [];
  for (const block of text.split(/(\n\s*\n)/)) {
    const fenced = block.trimStart().startsWith("```");
    const paragraph = fenced ? "" : block.replace(/\s+/g, " ");
    for (const clause of paragraph.split(/(?<=[.;:!?])\s+(?=[`A-Z(])|;/)) {
      if (!WHERE.test(clause)) continue;
      const own = namesIn(clause.replace(ENTRY, "")).filter((n) => known.has(n));
      const names = own.length === 0 && /^\s*(They|These|Both)\b/.test(clause) ? before : own;
      for (const m of clause.matchAll(ENTRY))
        claims.push({ where: `${file}:${line} (prose)`, from: m[1] as string, names });
    }
    // What a pronoun means: the names of the paragraph's first sentence (where it says what it is about).
    if (paragraph.trim() !== "")
      before = namesIn(paragraph.split(/(?<=[.!?])\s+/)[0] ?? "").filter((n) => known.has(n));
    line += block.split("\n").length - 1;
  }
  return claims;
}

/** The code cells of a notebook, as one text per cell. */
function notebookCells(text: string): string[] {
  const cells = (JSON.parse(text) as { cells: { cell_type: string; source: string | string[] }[] }).cells;
  return cells
    .filter((c) => c.cell_type === "code")
    .map((c) => (Array.isArray(c.source) ? c.source.join("") : c.source));
}

describe("imports shown in the documentation", () => {
  const exported = exportedNames();
  const fromExamples = sourceFiles(root, "src").flatMap((file) =>
    exampleBlocks(readFileSync(join(root, file), "utf8")).flatMap((b) => importsIn(b.code, file, b.line)),
  );
  const fromDocs = markdownFiles(root).flatMap((file) =>
    extractSnippets(file, readFileSync(join(root, file), "utf8")).flatMap((s) => importsIn(s.code, file, s.line)),
  );

  it("every entry point is read, and the examples and docs import from it", () => {
    for (const names of exported.values()) expect(names.size).toBeGreaterThan(0);
    expect(fromExamples.length).toBeGreaterThanOrEqual(10);
    expect(fromDocs.length).toBeGreaterThan(20);
  });

  it("every @example of the source imports what its entry point exports", () => {
    expect(wrongImports(fromExamples, exported)).toEqual([]);
  });

  it("every ts block of the README and docs/ imports what its entry point exports", () => {
    expect(wrongImports(fromDocs, exported)).toEqual([]);
  });

  const pages = [
    ...markdownFiles(root),
    "examples/README.md",
    "examples/server/README.md",
    "examples/notebooks/README.md",
  ];
  const notebooks = readdirSync(join(root, "examples/notebooks")).filter((f) => f.endsWith(".ipynb"));
  const known = new Set([...exported.values()].flatMap((names) => [...names]));

  it("every import in a page (inline code and every fence), an example or a notebook names a real export", () => {
    const shown = [
      ...pages.flatMap((file) => importsIn(readFileSync(join(root, file), "utf8"), file, 1)),
      ...sourceFiles(root, "examples").flatMap((file) => importsIn(readFileSync(join(root, file), "utf8"), file, 1)),
      ...notebooks.flatMap((name) => {
        const file = `examples/notebooks/${name}`;
        return notebookCells(readFileSync(join(root, file), "utf8")).flatMap((code, i) =>
          importsIn(code, `${file} (code cell ${i + 1})`, 1),
        );
      }),
    ];
    expect(shown.length).toBeGreaterThan(fromDocs.length);
    expect(wrongImports(shown, exported)).toEqual([]);
  });

  it("what the prose says an entry point exports, it exports", () => {
    const claims = pages.flatMap((file) => proseClaims(file, readFileSync(join(root, file), "utf8"), known));
    expect(claims.length).toBeGreaterThan(3);
    expect(wrongImports(claims, exported)).toEqual([]);
  });

  it("a planted wrong claim in prose is found, a pronoun's names taken from the paragraph before", () => {
    const planted = [
      "The guards are middleware: `guardMiddleware` and `loopDetectMiddleware`. They act as `GuardedToolNode`.",
      "",
      "They are exported from `langgraph-guards` and from `langgraph-guards/middleware`. Read `x`.",
      "`guardVerdict(result)` (from `langgraph-guards`) reads the end; `planTurn` is exported by `langgraph-guards/core`.",
    ].join("\n");
    expect(wrongImports(proseClaims("docs/planted.md", planted, known), exported)).toEqual([
      'docs/planted.md:3 (prose): "langgraph-guards" does not export guardMiddleware',
      'docs/planted.md:3 (prose): "langgraph-guards" does not export loopDetectMiddleware',
    ]);
  });

  it("a planted wrong import is found, with its file and line", () => {
    const planted = 'const a = 1;\nimport { guardMiddleware, GuardedToolNode as G } from "langgraph-guards";\n';
    const found = wrongImports(importsIn(planted, "docs/planted.md", 10), exported);
    expect(found).toEqual(['docs/planted.md:11: "langgraph-guards" does not export guardMiddleware']);
    const example = exampleBlocks(
      [
        "/**",
        " * Does it.",
        " *",
        " * @example",
        " * ```ts",
        ' * import { nope } from "langgraph-guards/core";',
        " * ```",
        " */",
      ].join("\n"),
    );
    expect(wrongImports(importsIn(example[0]?.code ?? "", "src/x.ts", example[0]?.line ?? 0), exported)).toEqual([
      'src/x.ts:6: "langgraph-guards/core" does not export nope',
    ]);
  });
});
