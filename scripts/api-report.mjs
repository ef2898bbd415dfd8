// API reports: one api-extractor report per entry point of package.json "exports", checked in under api/.
//
//   node scripts/api-report.mjs check    (npm run api:check)  fails when the built surface differs from a report,
//                                                              when an entry point has no report, or a report has
//                                                              no entry point
//   node scripts/api-report.mjs update   (npm run api:update) rewrites the reports (and deletes orphaned ones)
//
// Both read the built .d.ts files: run `npm run build` first. Every entry of "exports" with a `types` path is
// analysed; the report of "." is api/<name>.api.md, the one of "./a/b" is api/<name>-a-b.api.md. Adding or removing
// an entry point needs no change here. Settings shared by all entries are in api-extractor.json (this script fills in
// the entry point, the report's name and the compiler's file list; api-extractor's scratch files go to temp/).
// Declarations that an entry point uses without exporting them are in its report too ("ae-forgotten-export" notes),
// since changing them changes the surface. Notes on missing doc comments ("(undocumented)") are left out of the
// reports: writing docs does not require an update. After an intended change of the API:
//   npm run build && npm run api:update     then commit api/ with the change
//
// Options (used by test/package/api-report.int.test.ts to run the check on a copy of the package):
//   --package-dir <dir>   the package to analyse (its package.json and built .d.ts); default: this repository
//   --reports-dir <dir>   where the reports live; default: <package-dir>/api
//   --verbose             print api-extractor's informational messages too
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { CompilerState, Extractor, ExtractorConfig, ExtractorLogLevel } from "@microsoft/api-extractor";
import { createTwoFilesPatch } from "diff";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const REPORT_SUFFIX = ".api.md";
const UPDATE_HINT = "npm run build && npm run api:update";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    "package-dir": { type: "string" },
    "reports-dir": { type: "string" },
    verbose: { type: "boolean", default: false },
  },
});
const mode = positionals[0];
if ((mode !== "check" && mode !== "update") || positionals.length !== 1) {
  console.error("usage: node scripts/api-report.mjs check|update [--package-dir DIR] [--reports-dir DIR] [--verbose]");
  process.exit(2);
}
const packageDir = path.resolve(values["package-dir"] ?? repoRoot);
const reportsDir = path.resolve(values["reports-dir"] ?? path.join(packageDir, "api"));
const tempDir = path.join(packageDir, "temp", "api-report");
const rel = (file) => {
  const relative = path.relative(process.cwd(), file);
  return relative.startsWith("..") || path.isAbsolute(relative) ? file : relative || ".";
};

const packageJsonPath = path.join(packageDir, "package.json");
const packageJson = JSON.parse(readFileSync(packageJsonPath, "utf8"));
const entries = entryPoints(packageJson);
if (entries.length === 0) fail(`${rel(packageJsonPath)}: no entry of "exports" has a "types" path`);

const started = Date.now();
const missingBuilds = entries.filter((e) => !existsSync(e.dtsPath));
if (missingBuilds.length) {
  fail(
    missingBuilds.map((e) => `entry point "${e.subpath}": ${rel(e.dtsPath)} does not exist`).join("\n") +
      "\nBuild first: npm run build",
  );
}
warnIfBuildIsStale(entries);

const baseConfig = ExtractorConfig.loadFile(path.join(repoRoot, "api-extractor.json"));
const configs = entries.map((entry) => prepareConfig(entry));
// One TypeScript program for all entry points: api-extractor analyses each entry from it.
const compilerState = CompilerState.create(configs[0], { additionalEntryPoints: entries.map((e) => e.dtsPath) });

const problems = [];
for (const [i, entry] of entries.entries()) {
  const messages = [];
  const tempReport = path.join(tempDir, entry.reportFile);
  rmSync(tempReport, { force: true });
  const result = Extractor.invoke(configs[i], {
    // api-extractor only writes its report to temp/; comparing with and writing to api/ is done here, on the
    // normalized text (see normalizeReport).
    localBuild: false,
    compilerState,
    messageCallback: (message) => {
      message.handled = true;
      // A dependency that ships .ts sources as its types (@langchain/protocol, under @langchain/langgraph) trips
      // api-extractor's "inputs must be .d.ts" check; it only concerns our own files, so drop it for node_modules.
      if (
        message.messageId === "ae-wrong-input-file-type" &&
        /[\\/]node_modules[\\/]/.test(message.sourceFilePath ?? "")
      ) {
        message.logLevel = ExtractorLogLevel.None;
        return;
      }
      // Report-file bookkeeping is ours (below): drop api-extractor's own notes about it.
      if (String(message.messageId).startsWith("console-api-report")) return;
      if (message.logLevel === ExtractorLogLevel.None) return;
      const important = message.logLevel === ExtractorLogLevel.Error || message.logLevel === ExtractorLogLevel.Warning;
      if (important || values.verbose) messages.push(message);
    },
  });
  for (const m of messages) {
    const where = m.sourceFilePath ? ` (${rel(m.sourceFilePath)}:${m.sourceFileLine ?? "?"})` : "";
    const line = `[${entry.subpath}] ${m.logLevel} ${m.messageId}: ${m.text}${where}`;
    if (m.logLevel === ExtractorLogLevel.Error || m.logLevel === ExtractorLogLevel.Warning) console.error(line);
    else console.log(line);
  }
  const problemMessages = messages.filter(
    (m) => m.logLevel === ExtractorLogLevel.Error || m.logLevel === ExtractorLogLevel.Warning,
  );
  if (problemMessages.length || result.errorCount > 0) {
    problems.push(
      `entry point "${entry.subpath}" (${rel(entry.dtsPath)}): api-extractor reported ${problemMessages.length} ` +
        "error(s)/warning(s), listed above",
    );
  }
  const actual = readReport(tempReport);
  const expectedPath = path.join(reportsDir, entry.reportFile);
  const expected = readReport(expectedPath);
  if (actual === undefined) {
    problems.push(`entry point "${entry.subpath}": api-extractor wrote no report`);
  } else if (mode === "update") {
    if (actual !== expected) {
      mkdirSync(reportsDir, { recursive: true });
      writeFileSync(expectedPath, actual);
      console.log(
        `api: ${expected === undefined ? "created" : "updated"} ${rel(expectedPath)} (entry point "${entry.subpath}")`,
      );
    }
  } else if (expected === undefined) {
    problems.push(
      `entry point "${entry.subpath}" (${rel(entry.dtsPath)}) has no API report: ${rel(expectedPath)} is missing`,
    );
  } else if (expected !== actual) {
    const patch = createTwoFilesPatch(
      `${rel(expectedPath)} (checked in)`,
      `${rel(entry.dtsPath)} (built)`,
      expected,
      actual,
    );
    problems.push(
      `entry point "${entry.subpath}" (${rel(entry.dtsPath)}): the public API differs from ${rel(expectedPath)}\n` +
        patch.split("\n").slice(1).join("\n").trimEnd(),
    );
  }
}

// Reports left for entry points that no longer exist.
const expectedFiles = new Set(entries.map((e) => e.reportFile));
const orphans = existsSync(reportsDir)
  ? readdirSync(reportsDir).filter((f) => f.endsWith(REPORT_SUFFIX) && !expectedFiles.has(f))
  : [];
for (const orphan of orphans) {
  const file = path.join(reportsDir, orphan);
  if (mode === "update") {
    rmSync(file);
    console.log(`api: deleted ${rel(file)} (no entry point in package.json "exports" has this report)`);
  } else {
    problems.push(`${rel(file)} belongs to no entry point of package.json "exports" (entry points: ${subpaths()})`);
  }
}

const seconds = ((Date.now() - started) / 1000).toFixed(1);
if (problems.length) {
  console.error(`\nAPI report ${mode} failed:\n`);
  for (const p of problems) console.error(`- ${p}\n`);
  if (mode === "check") {
    console.error(
      "If the change of the public API is intended, update the reports and commit them with it:\n" +
        `  ${UPDATE_HINT}\n`,
    );
  }
  process.exit(1);
}
console.log(
  mode === "check"
    ? `api: the public API of ${entries.length} entry point(s) (${subpaths()}) matches ${rel(reportsDir)}/ (${seconds} s)`
    : `api: reports for ${entries.length} entry point(s) (${subpaths()}) are in ${rel(reportsDir)}/ (${seconds} s)`,
);

function subpaths() {
  return entries.map((e) => e.subpath).join(", ");
}

function fail(text) {
  console.error(`API report ${mode}: ${text}`);
  process.exit(1);
}

// Every entry point of package.json "exports" with a `types` path (the first one found in its conditions, which in
// this ESM-only package is the one TypeScript uses for `import`). Entries without types (./package.json) are skipped.
function entryPoints(pkg) {
  let exportsField = pkg.exports;
  if (exportsField === undefined) exportsField = pkg.types ? { ".": { types: pkg.types } } : {};
  if (
    typeof exportsField === "string" ||
    Array.isArray(exportsField) ||
    !Object.keys(exportsField)[0]?.startsWith(".")
  ) {
    exportsField = { ".": exportsField }; // "exports": "./x.js" or "exports": { "types": ..., "import": ... }
  }
  const unscoped = pkg.name.replace(/^@[^/]+\//, "");
  const list = [];
  for (const [subpath, target] of Object.entries(exportsField)) {
    const types = findTypes(target);
    if (types === undefined) continue;
    if (subpath.includes("*") || types.includes("*")) {
      fail(`entry point "${subpath}": subpath patterns are not supported; list the entry points one by one`);
    }
    const suffix = subpath === "." ? "" : `-${subpath.replace(/^\.\//, "").replace(/[^A-Za-z0-9_.-]+/g, "-")}`;
    list.push({
      subpath,
      dtsPath: path.resolve(packageDir, types),
      reportFile: `${unscoped}${suffix}${REPORT_SUFFIX}`,
    });
  }
  const byFile = new Map();
  for (const e of list) {
    const other = byFile.get(e.reportFile);
    if (other) fail(`entry points "${other.subpath}" and "${e.subpath}" would share the report ${e.reportFile}`);
    byFile.set(e.reportFile, e);
  }
  return list;
}

function findTypes(target) {
  if (target === null || typeof target !== "object") return undefined;
  if (Array.isArray(target)) {
    for (const t of target) {
      const found = findTypes(t);
      if (found) return found;
    }
    return undefined;
  }
  for (const [condition, value] of Object.entries(target)) {
    if (condition === "types" && typeof value === "string") return value;
    const found = findTypes(value);
    if (found) return found;
  }
  return undefined;
}

function prepareConfig(entry) {
  const configObject = structuredClone(baseConfig);
  configObject.projectFolder = packageDir;
  configObject.mainEntryPointFilePath = entry.dtsPath;
  configObject.apiReport = {
    ...configObject.apiReport,
    reportFileName: entry.reportFile,
    reportFolder: reportsDir,
    reportTempFolder: tempDir,
  };
  // The built .d.ts files only (not src/ or test/), with this repository's compiler options.
  configObject.compiler = {
    overrideTsconfig: {
      extends: path.join(repoRoot, "tsconfig.json"),
      compilerOptions: { noEmit: true, skipLibCheck: true },
      include: [],
      files: entries.map((e) => e.dtsPath),
    },
  };
  return ExtractorConfig.prepare({
    configObject,
    configObjectFullPath: undefined,
    packageJson,
    packageJsonFullPath: packageJsonPath,
  });
}

function readReport(file) {
  return existsSync(file) ? normalizeReport(readFileSync(file, "utf8")) : undefined;
}

// The reports are about the surface, not about documentation or file layout: drop api-extractor's notes on which
// declarations have no doc comment (writing docs needs no report update), and compare its closing warnings without
// the dist/ file and line they point at, sorted and once each (moving a declaration to another file changes no API).
function normalizeReport(text) {
  const located = /^\/\/ \S+\.d\.ts:\d+:\d+ - (\(ae-[\w-]+\) .*)$/;
  const lines = text
    .replace(/\r\n/g, "\n")
    .split("\n")
    .filter((line) => !/^\s*\/\/ \((undocumented|No @packageDocumentation comment for this package)\)$/.test(line))
    .map((line) => line.replace(/^(\s*\/\/ @\w+) \(undocumented\)$/, "$1"));
  const first = lines.findIndex((line) => located.test(line));
  if (first < 0) return lines.join("\n");
  const warnings = [...new Set(lines.filter((l) => located.test(l)).map((l) => `// ${l.replace(located, "$1")}`))];
  const rest = lines.filter((line) => !located.test(line));
  rest.splice(first, 0, ...warnings.sort());
  return rest.join("\n");
}

// The reports describe dist/: say so when src/ has changed since the last build.
function warnIfBuildIsStale(list) {
  const srcDir = path.join(packageDir, "src");
  if (!existsSync(srcDir)) return;
  const built = Math.min(...list.map((e) => statSync(e.dtsPath).mtimeMs));
  const newer = readdirSync(srcDir, { recursive: true, withFileTypes: true }).find(
    (d) => d.isFile() && statSync(path.join(d.parentPath, d.name)).mtimeMs > built,
  );
  if (newer) {
    console.warn(
      `api: warning: ${rel(path.join(newer.parentPath, newer.name))} is newer than the build in dist/; ` +
        "run `npm run build` first or the reports describe the old build",
    );
  }
}
