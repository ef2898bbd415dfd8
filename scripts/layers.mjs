// The layers check (run by scripts/code-limits.mjs, `npm run check:limits`): the import graph of src/ keeps the
// layout's promises. Imports are read with TypeScript's own parser; a relative `./x.js` is the file `./x.ts` (or
// `./x/index.ts`); non-relative imports count only for rule 3. Every rule counts every import, type-only ones
// (`import type`, `export type`, `import("./x.js").T`) included: a type names what it depends on as surely as a
// value does, and a circle of types is a circle one must read all at once.
//
// 1. folder-cycle: no cycle between folders (a file's folder is its directory; a parent and its child folder are two
//    folders). A folder is a unit one can read, move or delete: in a cycle, no folder of it can be understood, or
//    loaded, without the others. Each strongly connected set is reported once, with one cycle through it and, for
//    each edge, one file import that makes it.
// 2. file-cycle: no cycle between files. Through values, a cycle of ES modules means one module runs before the
//    bindings it imports exist (a TDZ error, or `undefined` in a re-export); through types, two files that can only
//    be read together.
// 3. pure-core: a file under a `pure` prefix imports no `impure` package (`@langchain/*`, `langchain`), directly or
//    through any file it imports: the decision cores run and are tested without LangChain, and a core's types must
//    not tie it to LangChain's either. The message gives the shortest chain.
// 4. guard-import: a file under one `guards` folder imports no file under another: each guard stands alone, so it
//    can be read, changed, or left out on its own; what two guards share lives in src/common/.
// 5. floor: a file under the `floor` folder (src/common/) imports no file outside it: what every guard stands on
//    knows none of them. Shared vocabulary (a stop's reason, the guard artifacts) lives down there.
// 6. stale-config: every guard folder, pure prefix and the floor hold a file, or a moved folder would escape the check.
//
// test/package/layers.test.ts plants small trees and checks each rule; it also runs the check on src/ with LAYERS.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";

/** The target layout: the guard folders, the pure cores, the packages a pure core may not reach. */
export const LAYERS = {
  dir: "src",
  guards: ["src/tool-calls", "src/loop", "src/repeat-query", "src/fs"],
  pure: [
    "src/tool-calls/core/",
    "src/loop/core/",
    "src/repeat-query/core/",
    "src/common/identity/",
    "src/common/similarity/",
  ],
  impure: ["@langchain/*", "langchain"],
  floor: "src/common/",
};

/** The TypeScript files below `dir` (relative to `root`, `/`-separated, sorted). */
function sourceFiles(root, dir) {
  return readdirSync(path.join(root, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.(ts|mts|cts|tsx)$/.test(e.name) && !e.name.endsWith(".d.ts"))
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)).split(path.sep).join("/"))
    .sort();
}

/** Whether an import or export declaration is type-only (`import type`, or every named specifier `type`). */
function isTypeOnly(node) {
  if (ts.isImportDeclaration(node)) {
    const clause = node.importClause;
    if (!clause) return false; // `import "./x.js"`: run for its effects
    if (clause.isTypeOnly) return true;
    const named = clause.namedBindings;
    return (
      !clause.name &&
      !!named &&
      ts.isNamedImports(named) &&
      named.elements.length > 0 &&
      named.elements.every((e) => e.isTypeOnly)
    );
  }
  if (node.isTypeOnly) return true;
  const named = node.exportClause;
  return !!named && ts.isNamedExports(named) && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly);
}

/** The imports of one file's text: `{ spec, typeOnly, line }` (`line` 1-based). */
export function fileImports(fileName, text) {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const out = [];
  const add = (node, literal, typeOnly) => {
    if (literal && ts.isStringLiteralLike(literal))
      out.push({ spec: literal.text, typeOnly, line: sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1 });
  };
  const visit = (node) => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) add(node, node.moduleSpecifier, isTypeOnly(node));
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference))
      add(node, node.moduleReference.expression, node.isTypeOnly);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword)
      add(node, node.arguments[0], false);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node, node.argument.literal, true);
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** The source file a relative specifier names (`./x.js` -> `x.ts`, `./d` -> `d/index.ts`), or undefined. */
function resolve(from, spec, files) {
  if (!spec.startsWith("./") && !spec.startsWith("../")) return undefined;
  const base = path.posix.join(path.posix.dirname(from), spec);
  const stem = base.replace(/\.(js|jsx|mjs|cjs)$/, "");
  const ext = { js: ".ts", jsx: ".tsx", mjs: ".mts", cjs: ".cts" }[base.match(/\.(js|jsx|mjs|cjs)$/)?.[1]] ?? ".ts";
  return [`${stem}${ext}`, base, `${base}.ts`, `${base}/index.ts`].find((f) => files.has(f));
}

/** Whether the package of a bare specifier (`@scope/name` or `name`) matches a pattern (`@scope/*` or `name`). */
function isImpure(spec, patterns) {
  if (spec.startsWith(".") || spec.startsWith("node:")) return false;
  const parts = spec.split("/");
  const pkg = spec.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
  return patterns.some((p) => (p.endsWith("/*") ? pkg.startsWith(p.slice(0, -1)) : pkg === p));
}

/** The strongly connected sets of more than one node of `adj` (Map node -> Map next -> edge), Tarjan's way. */
function cycleSets(adj) {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const sets = [];
  const connect = (v) => {
    index.set(v, index.size);
    low.set(v, index.get(v));
    stack.push(v);
    onStack.add(v);
    for (const w of adj.get(v)?.keys() ?? []) {
      if (!index.has(w)) connect(w);
      if (onStack.has(w)) low.set(v, Math.min(low.get(v), low.get(w)));
    }
    if (low.get(v) !== index.get(v)) return;
    const set = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      set.push(w);
    } while (w !== v);
    if (set.length > 1) sets.push(set.sort());
  };
  for (const v of [...adj.keys()].sort()) if (!index.has(v)) connect(v);
  return sets.sort((a, b) => (a[0] < b[0] ? -1 : 1));
}

/** A shortest cycle through the first node of `set`, as its edges `[from, to, edge]`. */
function cycleThrough(set, adj) {
  const start = set[0];
  const inSet = new Set(set);
  const prev = new Map([[start, undefined]]);
  const queue = [start];
  for (let i = 0; i < queue.length; i += 1) {
    const u = queue[i];
    for (const w of [...(adj.get(u)?.keys() ?? [])].sort()) {
      if (w === start) {
        const edges = [[u, start, adj.get(u).get(start)]];
        for (let v = u; v !== start; v = prev.get(v)) edges.unshift([prev.get(v), v, adj.get(prev.get(v)).get(v)]);
        return edges;
      }
      if (inSet.has(w) && !prev.has(w)) {
        prev.set(w, u);
        queue.push(w);
      }
    }
  }
  return [];
}

/** One violation per strongly connected set of `adj`: a cycle through it, and the file imports of its edges. */
function cycleViolations(rule, adj) {
  return cycleSets(adj).map((set) => {
    const edges = cycleThrough(set, adj);
    const folders = rule === "folder-cycle";
    const loop = [...edges.map(([from, , e]) => (folders ? from : `${from}:${e.line}`)), set[0]].join(" -> ");
    const others = set.filter((n) => !edges.some(([from]) => from === n));
    const how = folders ? `; ${edges.map(([, , e]) => `${e.from}:${e.line} imports ${e.to}`).join("; ")}` : "";
    const more = others.length > 0 ? ` (its strongly connected set also holds ${others.join(", ")})` : "";
    const files = [...new Set(edges.flatMap(([, , e]) => [e.from, e.to]))];
    return { rule, message: `${rule.replace("-", " ")} ${loop}${how}${more}`, files };
  });
}

/** Adds the edge `from -> to` with its example file import, keeping the first. */
function addEdge(adj, from, to, edge) {
  if (!adj.has(from)) adj.set(from, new Map());
  if (!adj.get(from).has(to)) adj.get(from).set(to, edge);
}

/** The shortest import chain from `start` to an impure package: its files, and as `a.ts:3 -> b.ts:7 -> @pkg`. */
function impureChain(start, graph, patterns) {
  const prev = new Map([[start, undefined]]); // file -> the import that reached it
  const queue = [start];
  for (let i = 0; i < queue.length; i += 1) {
    const file = queue[i];
    const bad = graph.get(file).find((imp) => isImpure(imp.spec, patterns));
    if (bad) {
      const hops = [bad];
      for (let f = file; prev.get(f); f = prev.get(f).from) hops.unshift(prev.get(f));
      const text = [...hops.map((imp) => `${imp.from}:${imp.line}`), bad.spec].join(" -> ");
      return { files: hops.map((imp) => imp.from), text };
    }
    for (const imp of graph.get(file))
      if (imp.to && !prev.has(imp.to)) {
        prev.set(imp.to, imp);
        queue.push(imp.to);
      }
  }
  return undefined;
}

/** The guard folder `file` lies under (the longest that matches), or undefined. */
const guardOf = (file, guards) => guards.filter((g) => file.startsWith(`${g}/`)).sort((a, b) => b.length - a.length)[0];

/**
 * The violations of the layers rules (see the header of this file) below `root`/`config.dir`: each
 * `{ rule, message, files }`, `files` relative to `root` (`src/agent/turn.ts`), `message` naming them.
 */
export function checkLayers(root, config = LAYERS) {
  const files = sourceFiles(root, config.dir ?? "src");
  const fileSet = new Set(files);
  const graph = new Map();
  for (const from of files)
    graph.set(
      from,
      fileImports(from, readFileSync(path.join(root, from), "utf8")).map((imp) => ({
        ...imp,
        from,
        to: resolve(from, imp.spec, fileSet),
      })),
    );
  const folders = new Map();
  const fileAdj = new Map();
  for (const imp of [...graph.values()].flat()) {
    if (!imp.to) continue;
    addEdge(fileAdj, imp.from, imp.to, imp);
    const [a, b] = [path.posix.dirname(imp.from), path.posix.dirname(imp.to)];
    if (a !== b) addEdge(folders, a, b, imp);
  }
  const violations = [...cycleViolations("folder-cycle", folders), ...cycleViolations("file-cycle", fileAdj)];
  for (const file of files.filter((f) => config.pure.some((p) => f.startsWith(p)))) {
    const found = impureChain(file, graph, config.impure);
    if (found)
      violations.push({ rule: "pure-core", message: `pure ${file} reaches ${found.text}`, files: found.files });
  }
  for (const imp of [...graph.values()].flat()) {
    const [g, h] = [guardOf(imp.from, config.guards), imp.to && guardOf(imp.to, config.guards)];
    if (g && h && g !== h) {
      const kind = imp.typeOnly ? " (type-only)" : "";
      const message = `guard ${g} imports guard ${h}: ${imp.from}:${imp.line} imports ${imp.to}${kind}`;
      violations.push({ rule: "guard-import", message, files: [imp.from, imp.to] });
    }
  }
  const floor = config.floor;
  for (const imp of [...graph.values()].flat())
    if (floor && imp.from.startsWith(floor) && imp.to && !imp.to.startsWith(floor)) {
      const kind = imp.typeOnly ? " (type-only)" : "";
      const message = `floor ${floor} imports above it: ${imp.from}:${imp.line} imports ${imp.to}${kind}`;
      violations.push({ rule: "floor", message, files: [imp.from, imp.to] });
    }
  for (const p of [...config.guards.map((g) => `${g}/`), ...config.pure, ...(floor ? [floor] : [])])
    if (!files.some((f) => f.startsWith(p)))
      violations.push({
        rule: "stale-config",
        message: `no file under ${p} (a guard, pure core or the floor of the config)`,
        files: [],
      });
  return violations;
}
