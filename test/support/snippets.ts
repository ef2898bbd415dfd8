/**
 * Reading the documentation for test/docs.test.ts: the ```ts blocks of README.md and docs/*.md with what each needs
 * in front of it to compile, their relative links, and the package's entry points.
 *
 * A block is checked as its own module. What it may use without defining it is said in an HTML comment on the
 * line(s) right above its fence (readers see the block, not the comment):
 *
 *   <!-- snippet: uses llm, tools, checkpointer -->   declarations from USES below
 *   <!-- snippet-preamble: declare function decide(s: unknown): Promise<{}>; -->   any code, put in front
 *   <!-- snippet: skip -->                            not compiled (listed as skipped; keep it rare)
 *
 * Output, payloads and other text that is not TypeScript is fenced ```text or ```json, never ```ts.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

/**
 * What `<!-- snippet: uses NAME -->` declares: the things a reader brings (a chat model, tools, a checkpointer,
 * a compiled graph, ...). Types are written as `import("...")` types so that they never clash with the block's own
 * imports.
 */
export const USES: Readonly<Record<string, string>> = {
  llm: `declare const llm: import("@langchain/core/language_models/chat_models").BaseChatModel;`,
  model: `declare const model: import("@langchain/core/language_models/chat_models").BaseChatModel;`,
  tools: `declare const tools: import("@langchain/core/tools").StructuredToolInterface[];`,
  checkpointer: `declare const checkpointer: import("@langchain/langgraph").BaseCheckpointSaver;`,
  config: `declare const config: { configurable: { thread_id: string } };`,
  input: `declare const input: { messages: { role: "user"; content: string }[] };`,
  graph: `declare const graph: import("@langchain/langgraph").CompiledStateGraph<(typeof import("langgraph-guards").GuardMessagesState)["State"], (typeof import("langgraph-guards").GuardMessagesState)["Update"], string>;`,
  agent: `declare const agent: ReturnType<typeof import("@langchain/langgraph/prebuilt").createReactAgent<typeof import("langgraph-guards").GuardMessagesState>>;`,
  callModel: `declare function callModel(state: (typeof import("langgraph-guards").GuardMessagesState)["State"]): Promise<(typeof import("langgraph-guards").GuardMessagesState)["Update"]>;`,
};

/** One ```ts block. */
export interface Snippet {
  /** The Markdown file, relative to the repository root (`docs/guards.md`). */
  file: string;
  /** 1-based line of the block's first line of code. */
  line: number;
  code: string;
  /** What goes in front of the code (from `uses` and `snippet-preamble` comments). */
  preamble: string;
  skip: boolean;
  /** Bad `snippet` comments above the block (an unknown name, an unknown directive). */
  errors: string[];
}

/** The TypeScript source files below `dir` (no `.d.ts`), relative to `root`. */
export function sourceFiles(root: string, dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts") && !e.name.endsWith(".d.ts"))
    .map((e) => relative(root, join(e.parentPath, e.name)));
}

/** README.md and every docs/*.md, relative to `root`. */
export function markdownFiles(root: string): string[] {
  const docs = readdirSync(join(root, "docs"), { withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(".md"))
    .map((e) => `docs/${e.name}`)
    .sort();
  return ["README.md", ...docs];
}

const FENCE = /^(\s*)(`{3,}|~{3,})\s*([^`\s]*)/;

interface Fence {
  /** 0-based line of the opening fence. */
  open: number;
  /** 0-based line of the closing fence (lines.length when unclosed). */
  close: number;
  lang: string;
  body: string[];
}

/** The fenced blocks of a Markdown text. */
function fences(lines: readonly string[]): Fence[] {
  const found: Fence[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = FENCE.exec(lines[i] ?? "");
    if (!m) continue;
    const [, indent = "", marker = "", lang = ""] = m;
    let close = i + 1;
    while (close < lines.length) {
      const t = (lines[close] ?? "").trim();
      if (t.startsWith(marker) && /^(`+|~+)$/.test(t) && t[0] === marker[0] && t.length >= marker.length) break;
      close++;
    }
    const body = lines.slice(i + 1, close).map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l.trimStart()));
    found.push({ open: i, close, lang: lang.toLowerCase(), body });
    i = close;
  }
  return found;
}

/** The HTML comments on the lines right above line `at` (0-based), nearest last; a blank line ends them. */
function commentsAbove(lines: readonly string[], at: number): string[] {
  const comments: string[] = [];
  let end = at - 1;
  while (end >= 0 && (lines[end] ?? "").trim().endsWith("-->")) {
    let start = end;
    while (start >= 0 && !(lines[start] ?? "").includes("<!--")) start--;
    if (start < 0) break;
    const text = lines.slice(start, end + 1).join("\n");
    comments.unshift(text.slice(text.indexOf("<!--") + 4, text.lastIndexOf("-->")).trim());
    end = start - 1;
  }
  return comments;
}

/** Every ```ts block of one Markdown file, with the preamble its comments ask for. */
export function extractSnippets(file: string, text: string): Snippet[] {
  const lines = text.split("\n");
  return fences(lines)
    .filter((f) => f.lang === "ts" || f.lang === "typescript")
    .map((f) => {
      const preamble: string[] = [];
      const errors: string[] = [];
      let skip = false;
      for (const comment of commentsAbove(lines, f.open)) {
        const directive = /^snippet(-preamble)?\s*:\s*([\s\S]*)$/.exec(comment);
        if (!directive) continue; // another comment (e.g. <!-- quick-start -->)
        const [, isPreamble, rest = ""] = directive;
        const command = rest.trim();
        if (isPreamble) {
          preamble.push(command);
        } else if (command === "skip") {
          skip = true;
        } else if (command.startsWith("uses ")) {
          for (const name of command
            .slice("uses ".length)
            .split(/[\s,]+/)
            .filter(Boolean)) {
            const declaration = USES[name];
            if (declaration) preamble.push(declaration);
            else
              errors.push(`unknown name "${name}" in <!-- snippet: uses -->; known: ${Object.keys(USES).join(", ")}`);
          }
        } else {
          errors.push(`unknown <!-- snippet: ${command} --> (known: "uses NAME, ...", "skip"; or snippet-preamble)`);
        }
      }
      return { file, line: f.open + 2, code: f.body.join("\n"), preamble: preamble.join("\n"), skip, errors };
    });
}

/** A relative link of a Markdown file. */
export interface Link {
  /** 1-based. */
  line: number;
  /** As written: `../examples/demo.ts`, `guards.md#level-3`, `#install`. */
  target: string;
}

/**
 * The links of a Markdown text that are not URLs: `[text](target)`, `![alt](target)` and `[ref]: target`,
 * outside fenced blocks and inline code.
 */
export function relativeLinks(text: string): Link[] {
  const lines = text.split("\n");
  const inFence = new Set(
    fences(lines).flatMap((f) => Array.from({ length: f.close - f.open + 1 }, (_, k) => f.open + k)),
  );
  const links: Link[] = [];
  lines.forEach((raw, i) => {
    if (inFence.has(i)) return;
    const line = raw.replace(/(`+)[\s\S]*?\1/g, "");
    const targets = [
      ...Array.from(line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g), (m) => m[1] ?? ""),
      ...Array.from(line.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/g), (m) => m[1] ?? ""),
    ];
    for (const target of targets) {
      if (target && !/^[a-z][a-z0-9+.-]*:/i.test(target)) links.push({ line: i + 1, target });
    }
  });
  return links;
}

/** The anchors GitHub gives the headings of a Markdown text (`## Quick start` → `quick-start`). */
export function headingAnchors(text: string): Set<string> {
  const lines = text.split("\n");
  const inFence = new Set(
    fences(lines).flatMap((f) => Array.from({ length: f.close - f.open + 1 }, (_, k) => f.open + k)),
  );
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  lines.forEach((line, i) => {
    const m = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m || inFence.has(i)) return;
    const slug = (m[1] ?? "")
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
      .replace(/<[^>]+>/g, "")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  });
  return anchors;
}

/** One entry of package.json "exports", e.g. `./core` with `types: ./dist/core/index.d.ts`. */
type ExportEntry = string | { types?: string; import?: string | { types?: string } };

/**
 * Import specifier → source file (absolute), from package.json "exports": an entry `./x` whose `types` is
 * `./dist/x/index.d.ts` maps `<name>/x` to `src/x/index.ts` (`.` maps the name itself). Entries without types
 * (`./package.json`) are left out; an entry whose types are elsewhere is an error, to be added to `extra`.
 */
export function entryPoints(root: string, extra: Readonly<Record<string, string>> = {}): Map<string, string> {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
    name: string;
    exports: Record<string, ExportEntry>;
  };
  const map = new Map<string, string>();
  for (const [subpath, entry] of Object.entries(pkg.exports)) {
    const specifier = subpath === "." ? pkg.name : `${pkg.name}/${subpath.replace(/^\.\//, "")}`;
    if (extra[specifier]) continue;
    const types =
      typeof entry === "object"
        ? (entry.types ?? (typeof entry.import === "object" ? entry.import.types : undefined))
        : undefined;
    if (!types) continue;
    const m = /^\.\/dist\/(.+)\.d\.ts$/.exec(types);
    if (!m) throw new Error(`package.json exports["${subpath}"].types is ${types}: add ${specifier} to the table`);
    map.set(specifier, join(root, "src", `${m[1]}.ts`));
  }
  for (const [specifier, file] of Object.entries(extra)) map.set(specifier, join(root, file));
  return map;
}
