// Builds dist/: the ES modules and their .d.ts (tsc -p tsconfig.build.json), then, for require() on Node 20.19+,
// one CommonJS file per entry point of package.json "exports" (`module.exports = require("./index.js")`: the same
// ES module, so there is one copy of every class and channel) and a .d.cts twin of every .d.ts (its relative
// imports pointed at the twins), which TypeScript reads for a CommonJS consumer under node16 or nodenext.
//
//   node scripts/build.mjs               (npm run build) always builds
//   node scripts/build.mjs --if-changed  (prepare, prepack) skips the build when dist/ is what a build of the
//                                        current sources would give: `npm ci` then `npm pack` builds once
//
// Its messages go to stderr, so that `npm pack --json` (which runs prepack and prepare) prints only JSON on stdout.
// --if-changed compares a digest of the inputs (src/, the tsconfigs, package.json's "exports", this script, the
// TypeScript version) and one of dist/ with those the last build stored in node_modules/.cache (never packed).
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dist = path.join(root, "dist");
const stampFile = path.join(root, "node_modules", ".cache", "langgraph-guards", "build.json");
const ifChanged = process.argv.includes("--if-changed");

/** Every file below `dir` (absolute paths, sorted), or none when it does not exist. */
function filesBelow(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
}

/** A digest of these files' paths (relative to the root) and contents. */
function digest(files, extra = "") {
  const hash = createHash("sha256").update(extra);
  for (const file of files) hash.update(`\0${path.relative(root, file)}\0`).update(readFileSync(file));
  return hash.digest("hex");
}

function typescript() {
  try {
    const require = createRequire(path.join(root, "package.json"));
    return { tsc: require.resolve("typescript/bin/tsc"), version: require("typescript/package.json").version };
  } catch {
    console.error("build: typescript is not installed; run `npm ci` (with the dev dependencies) first");
    process.exit(1);
  }
}

const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
const ts = typescript();
const inputs = digest(
  [
    ...filesBelow(path.join(root, "src")),
    path.join(root, "tsconfig.json"),
    path.join(root, "tsconfig.build.json"),
    fileURLToPath(import.meta.url),
  ],
  `typescript ${ts.version}\0${JSON.stringify(pkg.exports)}`,
);

if (ifChanged && existsSync(stampFile)) {
  const stamp = JSON.parse(readFileSync(stampFile, "utf8"));
  if (stamp.inputs === inputs && stamp.outputs === digest(filesBelow(dist))) {
    console.error("build: dist/ is up to date with src/ (skipped; `npm run build` builds anyway)");
    process.exit(0);
  }
}

const started = Date.now();
rmSync(dist, { recursive: true, force: true });
execFileSync(process.execPath, [ts.tsc, "-p", path.join(root, "tsconfig.build.json")], { stdio: ["ignore", 2, 2] });

// The .d.cts twins: the same declarations, read as CommonJS; relative imports point at the twins.
const relativeJs = /(\bfrom\s*|\bimport\(\s*)(["'])(\.\.?\/[^"'\n]*?)\.js\2/g;
const declarations = filesBelow(dist).filter((f) => f.endsWith(".d.ts"));
for (const file of declarations) {
  const text = readFileSync(file, "utf8").replace(relativeJs, "$1$2$3.cjs$2");
  writeFileSync(file.replace(/\.d\.ts$/, ".d.cts"), text);
}

// One CommonJS file per entry point with a "require" target: the ES module itself, through require(esm). The root's
// also registers the zod state forms in the registry of LangGraph's CommonJS copy, which a CommonJS caller's
// StateGraph reads (the ES module registered them in the ES module copy's only).
const cjsExtras = {
  ".":
    "// The zod forms' reducers, also where LangGraph's CommonJS copy looks for them (registerZodForms).\n" +
    'require("./channels/index.js").registerZodForms(require("@langchain/langgraph/zod").schemaMetaRegistry);\n',
};
const wrappers = [];
for (const [subpath, target] of Object.entries(pkg.exports ?? {})) {
  const cjs = typeof target === "object" ? target.require?.default : undefined;
  if (!cjs) continue;
  const esm = typeof target.import === "object" ? target.import.default : target.import;
  const file = path.join(root, cjs);
  const from = path.relative(path.dirname(file), path.join(root, esm));
  if (!esm || !existsSync(path.join(root, esm))) {
    console.error(`build: exports["${subpath}"].require has no ES module to load (${esm})`);
    process.exit(1);
  }
  writeFileSync(
    file,
    `"use strict";\n// ${pkg.name}${subpath.slice(1)} for require() (Node 20.19+): the ES module itself.\n` +
      `module.exports = require("./${from.split(path.sep).join("/")}");\n` +
      (cjsExtras[subpath] ?? ""),
  );
  wrappers.push(cjs);
}

mkdirSync(path.dirname(stampFile), { recursive: true });
writeFileSync(stampFile, `${JSON.stringify({ inputs, outputs: digest(filesBelow(dist)) })}\n`);
console.error(
  `build: dist/ in ${((Date.now() - started) / 1000).toFixed(1)}s: ${declarations.length} .d.ts (and .d.cts), ` +
    `${wrappers.length} CommonJS entry points`,
);
