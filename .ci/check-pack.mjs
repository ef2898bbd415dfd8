// Fails when `npm pack` would publish something a user does not need, or miss something they do.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const [report] = JSON.parse(execFileSync("npm", ["pack", "--dry-run", "--json"], { encoding: "utf8" }));
const files = report.files.map((f) => f.path);
const unexpected = files.filter(
  (f) =>
    !(f === "package.json" || f === "README.md" || f === "LICENSE" || f === "CHANGELOG.md" || f.startsWith("dist/")),
);
// Every path package.json points at (each entry point's ES module, CommonJS file and both kinds of types; the bin,
// main and types), and the licence.
const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
const targets = (value) =>
  typeof value === "string" ? [value] : Object.values(value ?? {}).flatMap((v) => targets(v));
const required = [
  ...new Set(
    [...targets(pkg.exports), ...targets(pkg.bin), pkg.main, pkg.types, "LICENSE"]
      .filter(Boolean)
      .map((p) => p.replace(/^\.\//, "")),
  ),
];
const missing = required.filter((f) => !files.includes(f));
if (unexpected.length || missing.length) {
  console.error("npm pack check failed", { unexpected, missing });
  process.exit(1);
}
console.log(
  `npm pack: ${files.length} files, ${report.size} bytes packed (${report.unpackedSize} unpacked); only dist/, ` +
    `README, LICENSE, CHANGELOG; all ${required.length} paths package.json points at`,
);

// The built package loads as a user would import it, with the documented exports.
const main = await import("../dist/index.js");
const core = await import("../dist/core/index.js");
const classes = await import("../dist/classes/index.js");
const testing = await import("../dist/testing/index.js");
const replay = await import("../dist/replay/index.js");
const fs = await import("../dist/fs/index.js");
const middleware = await import("../dist/middleware/index.js");
const expected = [
  [
    main,
    [
      "GuardedToolNode",
      "GuardState",
      "GuardMessagesState",
      "guardStateSchema",
      "repeatQueryRouter",
      "repeatQueryGuard",
      "recordRetrievalQuery",
      "withQueryHistory",
      "guardMessagesStateSchema",
      "loopDetectNode",
      "loopDetectHook",
      "createFileTools",
      "escalationHook",
      "escalationNode",
      "guardHooks",
    ],
  ],
  [
    core,
    ["decideToolCall", "planToolCalls", "toolCallSignature", "similarityRatio", "normalizeQuery", "parseJsonishQuery"],
  ],
  [classes, ["ToolRepetitionDetector", "OperationContext", "DuplicateHandler", "SafetyGuard"]],
  [testing, ["ScriptedChatModel"]],
  [replay, ["replayGuards", "readRuns", "runFromMessages", "summaryTable"]],
  [fs, ["createFileTools", "createSandbox", "reduceFileCache", "DEFAULT_IGNORED"]],
  [middleware, ["guardMiddleware", "loopDetectMiddleware"]],
];
for (const [module, names] of expected) {
  const absent = names.filter((n) => !(n in module));
  if (absent.length) {
    console.error("built package misses exports:", absent);
    process.exit(1);
  }
}
// A public API that fits a page (issue 32): the root at most 30 values, /core at most 75; the root never loads the
// middleware (its types would need the optional langchain).
const limits = [
  ["langgraph-guards", main, 30],
  ["langgraph-guards/core", core, 75],
];
for (const [name, module, max] of limits) {
  const count = Object.keys(module).length;
  if (count > max) {
    console.error(`${name} exports ${count} values, more than ${max}`);
    process.exit(1);
  }
}
if ("guardMiddleware" in main) {
  console.error("the root exports the createAgent middleware: it belongs to langgraph-guards/middleware");
  process.exit(1);
}
console.log(
  `dist/ imports fine: index (${Object.keys(main).length} values), core (${Object.keys(core).length}), classes, ` +
    "testing, replay, fs, middleware",
);

// require() (Node 20.19+): each entry point's CommonJS file gives the ES module's own values.
const require = createRequire(import.meta.url);
const requirable = Object.entries(pkg.exports).filter(([, t]) => typeof t === "object" && t.require);
for (const [subpath, target] of requirable) {
  const viaRequire = require(`../${target.require.default}`);
  const viaImport = await import(`../${target.import.default}`);
  const differ = Object.keys(viaImport).filter((n) => viaRequire[n] !== viaImport[n]);
  if (differ.length || Object.keys(viaRequire).length !== Object.keys(viaImport).length) {
    console.error(`require("${subpath}") and import differ:`, differ);
    process.exit(1);
  }
}
console.log(`require() gives the ES modules' values: ${requirable.length} entry points`);

// The `langgraph-guards` command (package.json "bin") runs from the built package, as `npx langgraph-guards`.
const bin = pkg.bin?.["langgraph-guards"];
if (
  bin !== "dist/replay/cli.js" ||
  !readFileSync(new URL(`../${bin}`, import.meta.url), "utf8").startsWith("#!/usr/bin/env node")
) {
  console.error("the langgraph-guards bin is missing or has no shebang", { bin });
  process.exit(1);
}
const help = execFileSync(process.execPath, [new URL(`../${bin}`, import.meta.url).pathname, "--help"], {
  encoding: "utf8",
});
if (!help.startsWith("Usage: langgraph-guards replay")) {
  console.error("langgraph-guards --help printed something else:", help.slice(0, 200));
  process.exit(1);
}
console.log("bin langgraph-guards: runs from dist/");
