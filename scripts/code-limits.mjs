// Code size limits (issue 32): no source file in src/ over 700 lines, no function over 80 lines of code, and the two
// adapters thin: the tool node at most 150 lines of code, the guard middleware at most 130.
//
//   node scripts/code-limits.mjs            (npm run check:limits) prints a table of the offenders, exits 1 if any
//   node scripts/code-limits.mjs --json     prints the offenders as JSON instead
//
// It also runs the layers check of scripts/layers.mjs on src/ (no folder or file cycle, type imports counted; pure
// cores free of LangChain; no guard importing another; src/common/ importing nothing above it): its violations follow the table, and in --json they join the array
// as `{ kind: "layers", rule, message, files }`.
//
// A file's size is its count of lines. A function's size is its count of lines of code from its first line (after
// its doc comment) to its last: lines that hold at least one token, so blank lines and lines with only a comment do
// not count. Every function counts: declarations, methods, constructors, accessors, function expressions and arrow
// functions (a nested function counts in its own size and in the one around it). The parse is TypeScript's own
// (the `typescript` compiler API), so a `//` inside a string or a `/*` inside a regular expression is no comment.
// test/package/code-limits.test.ts imports `codeLimits` and runs the same check.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { checkLayers, LAYERS } from "./layers.mjs";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The limits of issue 32. */
export const MAX_FILE_LINES = 700;
export const MAX_FUNCTION_LINES = 80;
/** The adapters on the agent layer, and the most lines of code each may have (they only translate). */
export const ADAPTER_LIMITS = { "src/tool-calls/tool-node.ts": 150, "src/tool-calls/middleware.ts": 130 };

/** The TypeScript files below `dir`, as paths relative to `root` with `/` separators, sorted. */
function sourceFiles(root, dir) {
  const out = [];
  for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...sourceFiles(root, rel));
    else if (/\.(ts|mts|cts|tsx)$/.test(entry.name) && !entry.name.endsWith(".d.ts")) out.push(rel);
  }
  return out.sort();
}

/** Whether `node` is a JSDoc comment or a part of one (the tree holds doc comments as nodes). */
function isJSDocNode(node) {
  return node.kind >= ts.SyntaxKind.FirstJSDocNode && node.kind <= ts.SyntaxKind.LastJSDocNode;
}

/** For each line (0-based) of `sf`, whether it holds a token: a line of code. */
function codeLines(sf) {
  const lines = new Array(sf.getLineStarts().length).fill(false);
  const visit = (node) => {
    if (isJSDocNode(node)) return;
    const children = node.getChildren(sf);
    if (children.length > 0) {
      for (const child of children) visit(child);
      return;
    }
    const start = node.getStart(sf);
    if (node.getEnd() <= start) return; // end of file, an omitted expression
    const first = sf.getLineAndCharacterOfPosition(start).line;
    const last = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
    for (let line = first; line <= last; line += 1) lines[line] = true;
  };
  visit(sf);
  const text = sf.getLineStarts().map((s, i, starts) => sf.text.slice(s, starts[i + 1] ?? sf.text.length));
  return lines.map((code, i) => code && text[i].trim() !== ""); // a blank line inside a template literal
}

/** A readable name for a function node: `name`, `Class.method`, `const name = () =>`, or `(anonymous)`. */
function functionName(node) {
  const own = node.name && (ts.isIdentifier(node.name) || ts.isPrivateIdentifier(node.name)) ? node.name.text : "";
  const parent = node.parent;
  let name = own;
  if (!name && ts.isConstructorDeclaration(node)) name = "constructor";
  if (!name && parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && parent.name)
    name = ts.isIdentifier(parent.name) ? parent.name.text : parent.name.getText();
  if (!name && parent && ts.isPropertyDeclaration(parent) && ts.isIdentifier(parent.name)) name = parent.name.text;
  const owner = ts.isClassLike(parent) && parent.name ? `${parent.name.text}.` : "";
  return name ? `${owner}${name}` : "(anonymous)";
}

/** Whether `node` is a function of any form. */
function isFunction(node) {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isFunctionExpression(node) ||
    ts.isArrowFunction(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node)
  );
}

/** The functions of one file with their lines of code: `{ name, line, loc }` (`line` 1-based). */
export function functionSizes(fileName, text) {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const code = codeLines(sf);
  const out = [];
  const visit = (node) => {
    if (isFunction(node) && node.body !== undefined) {
      const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const last = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
      let loc = 0;
      for (let line = first; line <= last; line += 1) if (code[line]) loc += 1;
      out.push({ name: functionName(node), line: first + 1, loc });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** A whole file's lines of code (lines that hold a token). */
export function fileLinesOfCode(fileName, text) {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  return codeLines(sf).filter(Boolean).length;
}

/** The number of lines of a file's text (a final newline ends the last line, it does not start one). */
function lineCount(text) {
  if (text === "") return 0;
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

/**
 * The offenders below `root`/src: files over `maxFileLines` lines, functions over `maxFunctionLines` lines of code,
 * adapters over their lines of code ({@link ADAPTER_LIMITS}). Each: `{ kind: "file" | "function" | "adapter", path,
 * line, name, size, limit }`, `path` relative to `root`.
 */
export function codeLimits({
  root = repoRoot,
  maxFileLines = MAX_FILE_LINES,
  maxFunctionLines = MAX_FUNCTION_LINES,
} = {}) {
  const offenders = [];
  for (const file of sourceFiles(root, "src")) {
    const text = readFileSync(path.join(root, file), "utf8");
    const lines = lineCount(text);
    if (lines > maxFileLines)
      offenders.push({ kind: "file", path: file, line: 1, name: "", size: lines, limit: maxFileLines });
    for (const fn of functionSizes(file, text))
      if (fn.loc > maxFunctionLines)
        offenders.push({
          kind: "function",
          path: file,
          line: fn.line,
          name: fn.name,
          size: fn.loc,
          limit: maxFunctionLines,
        });
    const adapterLimit = ADAPTER_LIMITS[file];
    if (adapterLimit !== undefined) {
      const loc = fileLinesOfCode(file, text);
      if (loc > adapterLimit)
        offenders.push({ kind: "adapter", path: file, line: 1, name: "", size: loc, limit: adapterLimit });
    }
  }
  return offenders;
}

/** The adapters' lines of code, as `path: loc / limit`. */
function adapterSizes(root = repoRoot) {
  return Object.entries(ADAPTER_LIMITS)
    .map(([file, limit]) => `${file} ${fileLinesOfCode(file, readFileSync(path.join(root, file), "utf8"))}/${limit}`)
    .join(", ");
}

/** The offenders as a table. */
function table(offenders) {
  const rows = offenders.map((o) => [o.kind, `${o.path}:${o.line}`, o.name, String(o.size), String(o.limit)]);
  const all = [["kind", "where", "name", "size", "limit"], ...rows];
  const widths = all[0].map((_, c) => Math.max(...all.map((row) => row[c].length)));
  return all
    .map((row) =>
      row
        .map((cell, c) => cell.padEnd(widths[c]))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

/** The layers violations as rows of `rule  message`, the rule names padded to one width. */
function layersTable(violations) {
  const width = Math.max(...violations.map((v) => v.rule.length));
  return violations.map((v) => `${v.rule.padEnd(width)}  ${v.message}`).join("\n");
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const offenders = codeLimits();
  const violations = checkLayers(repoRoot, LAYERS);
  if (process.argv.includes("--json"))
    console.log(JSON.stringify([...offenders, ...violations.map((v) => ({ kind: "layers", ...v }))], null, 2));
  else {
    if (offenders.length === 0)
      console.log(
        `code limits: no file over ${MAX_FILE_LINES} lines, no function over ${MAX_FUNCTION_LINES} lines of code; ` +
          `adapters' lines of code: ${adapterSizes()}`,
      );
    else {
      console.log(table(offenders));
      console.log(
        `\n${offenders.length} over the limits (files: ${MAX_FILE_LINES} lines; functions: ${MAX_FUNCTION_LINES} lines of code; adapters: ${adapterSizes()})`,
      );
    }
    if (violations.length === 0)
      console.log(
        "layers: no folder or file cycle (type imports counted), pure cores free of LangChain, no guard importing another, common/ a floor",
      );
    else {
      console.log(`\n${layersTable(violations)}`);
      console.log(`\n${violations.length} layers violations (the rules: scripts/layers.mjs)`);
    }
  }
  process.exitCode = offenders.length + violations.length > 0 ? 1 : 0;
}
