// Installs the package as a user would and uses it there. From a fresh clone of this repository (git clone into a
// temporary folder, `npm ci`, `npm pack`: no build of ours, the package's prepare/prepack build it), the tarball is
// installed into fresh projects beside the runtime peers (plus the user's own typescript and @types/node):
//   full          every peer, langchain (optional) too: every entry point type-checks (module/moduleResolution
//                 node16, nodenext, bundler; strict, skipLibCheck false), its .d.ts and .js agree, the README quick
//                 start runs, also as a .cjs file and as TypeScript compiled to CommonJS; a CommonJS consumer
//                 require()s every entry point and runs createReactAgent's quick start (.cjs), and its TypeScript
//                 (.cts) type-checks under node16 and nodenext;
//   no-langchain  only the required peers (the README's install line): every entry point but /middleware
//                 type-checks, every entry point imports, the quick start (through createReactAgent: the README's needs langchain) runs;
//   zod3          every peer, langchain too, with zod 3 (the lowest in our range; langchain keeps its own zod when it
//                 needs a later one): every entry point type-checks, the README quick start type-checks and runs.
// The full project's files also type-check with TypeScript 5.8 (the lowest the peers' types compile with) and 7, and
// the quick start runs as a .ts file (tsx) there and in a default `npm init -y` project after `npm pkg set type=module`.
// Keeps the temporary folder, and prints its path, when a step fails.
// Usage: node .ci/check-install.mjs [README]   (or npm run check:install); README: where to take the quick start
// from (default: the package's README.md), to try an edited one. Uncommitted changes are laid over the clone
// (.ci/clone.mjs). `--tarball=PATH` takes a tarball packed before instead of the clone (to iterate on the later
// steps). `--git` also installs the clone as a git dependency (npm install git+file://…), as
// `npm install github:owner/repo` does: minutes more, since npm installs every dev dependency there first.
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join, relative } from "node:path";
import { freshClone } from "./clone.mjs";

const repo = new URL("..", import.meta.url).pathname;
const started = Date.now();
const pkg = JSON.parse(readFileSync(join(repo, "package.json"), "utf8"));
const args = process.argv.slice(2);
const viaGit = args.includes("--git");
const readmeArg = args.find((a) => !a.startsWith("--"));
const givenTarball = args.find((a) => a.startsWith("--tarball="))?.slice("--tarball=".length);

const tmp = mkdtempSync(join(tmpdir(), "langgraph-guards-install-"));
let failed = false;

/** Child processes get the caller's environment minus what `npm run` adds for this package's own scripts. */
const env = Object.fromEntries(
  Object.entries(process.env).filter(
    ([k]) => !(k.startsWith("npm_package_") || k.startsWith("npm_lifecycle_") || k === "npm_config_local_prefix"),
  ),
);

function run(cmd, args, { cwd, timeout = 300_000 }) {
  const t0 = Date.now();
  const r = spawnSync(cmd, args, { cwd, env, encoding: "utf8", timeout, maxBuffer: 64 * 1024 * 1024 });
  return { ...r, seconds: ((Date.now() - t0) / 1000).toFixed(1) };
}

/** A failed step that later steps cannot do without: report it and stop. */
function fail(step, detail) {
  report(step, detail);
  finish();
}

/** A failed step: report it, go on with the independent steps, and exit 1 at the end. */
function report(step, detail) {
  failed = true;
  console.error(`FAIL ${step}`);
  if (detail) console.error(detail.trimEnd());
}

function finish() {
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (failed) {
    console.error(`check-install: FAILED after ${seconds}s; kept the temporary folder: ${tmp}`);
    process.exit(1);
  }
  console.log(`check-install: all steps passed in ${seconds}s`);
  process.exit(0);
}

/** As run(), without waiting: for the type-checks, which run side by side. */
function runAsync(cmd, args, { cwd, timeout = 300_000 }) {
  const t0 = Date.now();
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd, env, timeout });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.on("error", (error) => resolve({ status: null, error, stdout, stderr, seconds: "?" }));
    child.on("close", (status, signal) =>
      resolve({ status, signal, stdout, stderr, seconds: ((Date.now() - t0) / 1000).toFixed(1) }),
    );
  });
}

function output(r) {
  return [r.error ? String(r.error) : "", r.stdout ?? "", r.stderr ?? ""].filter(Boolean).join("\n");
}

process.on("exit", () => {
  if (!failed) rmSync(tmp, { recursive: true, force: true });
});
process.on("uncaughtException", (error) => fail("check-install crashed", error.stack));

// 1. A fresh clone, as a user gets it, then `npm ci` and `npm pack` there, as a user would run them.
const clone = join(tmp, "clone");
// Everything package.json points at must be in the tarball: each entry point's ES module, CommonJS file and types
// of both kinds, the bin, main and types.
const targets = (value) =>
  typeof value === "string" ? [value] : Object.values(value ?? {}).flatMap((v) => targets(v));
const pointedAt = new Set(
  [...targets(pkg.exports), ...targets(pkg.bin), pkg.main, pkg.types]
    .filter(Boolean)
    .map((p) => p.replace(/^\.\//, "")),
);
let r;
let tarball;
if (givenTarball) {
  tarball = givenTarball;
  console.log(`skip git clone, npm ci, npm pack: --tarball=${tarball}`);
} else {
  const cloned = freshClone(repo, clone);
  console.log(
    `ok   git clone: ${cloned.commit}${cloned.changed ? ` and ${cloned.changed} uncommitted files of the work tree` : ""}`,
  );
  r = run("npm", ["ci", "--no-audit", "--no-fund", "--prefer-offline"], { cwd: clone, timeout: 1_800_000 });
  if (r.status !== 0) fail("npm ci in the fresh clone", output(r));
  const builtByCi = existsSync(join(clone, "dist", "index.js"));
  console.log(`ok   npm ci in the clone (${r.seconds}s; ${builtByCi ? "prepare built dist/" : "no dist/ yet"})`);
  r = run("npm", ["pack", "--json", "--pack-destination", tmp], { cwd: clone });
  if (r.status !== 0) fail("npm pack in the fresh clone", output(r));
  const [packed] = JSON.parse(r.stdout);
  tarball = join(tmp, packed.filename);
  const inTarball = new Set(packed.files.map((f) => f.path));
  const absent = [...pointedAt].filter((p) => !inTarball.has(p));
  if (absent.length) fail(`npm pack in a fresh clone: the tarball misses ${absent.join(", ")}`, r.stderr);
  console.log(
    `ok   npm pack in the clone, no explicit build: ${packed.files.length} files, ${packed.size} bytes, ` +
      `all ${pointedAt.size} paths package.json points at (${r.seconds}s)`,
  );
}

// 2. The consumer projects: the tarball, peers at our peerDependencies ranges (or as said), the user's tooling.
const lock = existsSync(join(repo, "package-lock.json"))
  ? JSON.parse(readFileSync(join(repo, "package-lock.json"), "utf8"))
  : {};
const typescript = lock.packages?.["node_modules/typescript"]?.version ?? pkg.devDependencies.typescript;
const tsx = lock.packages?.["node_modules/tsx"]?.version ?? pkg.devDependencies.tsx;
const tooling = [`typescript@${typescript}`, `tsx@${tsx}`, "@types/node@^20"];
/**
 * The other TypeScript versions a user's project may have: the lowest the peers' own types compile with
 * (skipLibCheck false; 5.7 fails inside @langchain/core's and @langchain/langgraph's .d.ts), and 7, which
 * `npm install typescript` gets now. Each type-checks the full project's ES module and CommonJS files under nodenext.
 */
const OTHER_TYPESCRIPTS = ["5.8", "7"];
const optionalPeers = Object.keys(pkg.peerDependenciesMeta ?? {}).filter((n) => pkg.peerDependenciesMeta[n].optional);
const peerSpecs = (names, pins = {}) => names.map((name) => `${name}@${pins[name] ?? pkg.peerDependencies[name]}`);
const allPeers = Object.keys(pkg.peerDependencies);
const requiredPeers = allPeers.filter((n) => !optionalPeers.includes(n));
/** The lowest zod 3 our peer range allows (the zod3 project installs it). */
const zod3 = /(?:^|\|\|)\s*\^(3\.\d+\.\d+)/.exec(pkg.peerDependencies.zod)?.[1];

function makeProject(name, deps) {
  const dir = join(tmp, name);
  mkdirSync(dir);
  writeFileSync(
    join(dir, "package.json"),
    `${JSON.stringify({ name: `langgraph-guards-${name}`, private: true, type: "module" }, null, 2)}\n`,
  );
  const r = run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", tarball, ...deps, ...tooling], {
    cwd: dir,
    timeout: 600_000,
  });
  if (r.status !== 0) fail(`${name}: npm install`, output(r));
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const versionOf = (n) => JSON.parse(readFileSync(join(dir, "node_modules", n, "package.json"), "utf8")).version;
  const names = Object.keys(manifest.dependencies).filter((n) => !tooling.some((t) => t.startsWith(`${n}@`)));
  console.log(`ok   ${name}: npm install ${names.map((n) => `${n}@${versionOf(n)}`).join(", ")} (${r.seconds}s)`);
  return dir;
}

const full = makeProject("full", peerSpecs(allPeers));
/** A folder with only `typescript@version` installed; its tsc. */
function otherTypescript(version) {
  const dir = join(tmp, `typescript-${version}`);
  mkdirSync(dir);
  writeFileSync(join(dir, "package.json"), '{ "private": true }\n');
  const r = run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", `typescript@${version}`], {
    cwd: dir,
    timeout: 600_000,
  });
  if (r.status !== 0) fail(`typescript@${version}: npm install`, output(r));
  return join(dir, "node_modules", "typescript", "bin", "tsc");
}
const otherTscs = OTHER_TYPESCRIPTS.map((version) => ({ version, tsc: otherTypescript(version) }));
const bare = makeProject("no-langchain", peerSpecs(requiredPeers));
const zod3Project = zod3 ? makeProject("zod3", peerSpecs(allPeers, { zod: zod3 })) : undefined;
if (!zod3) report(`the zod peer range (${pkg.peerDependencies.zod}) allows no zod 3: no zod3 project`);
if (existsSync(join(bare, "node_modules", "langchain"))) fail("no-langchain: npm installed langchain anyway");

// 3. What each entry point exports, as TypeScript sees it from the installed package (names, value or type-only,
//    number of type parameters), and every name a user's file may import from it.
// Every entry point with types in package.json "exports" ("." as `root`, "./x/y" as `x_y`).
const entryPoints = Object.entries(pkg.exports)
  .filter(([, target]) => targets(target).some((t) => t.endsWith(".d.ts")))
  .map(([key]) => [
    key === "." ? "root" : key.slice(2).replaceAll(/[^A-Za-z0-9]/g, "_"),
    key === "." ? pkg.name : `${pkg.name}/${key.slice(2)}`,
  ]);
/** The entry points documented as needing the optional peer langchain. */
const needLangchain = ["middleware"];
const documented = {
  root: [
    "GuardedToolNode",
    "GuardState",
    "GuardMessagesState",
    "guardStateSchema",
    "escalationHook",
    "escalationNode",
    "guardHooks",
    "loopDetectHook",
    "createFileTools",
  ],
  core: ["decideToolCall", "planToolCalls", "normalizeQuery", "toolCallSignature", "similarityRatio"],
  classes: ["ToolRepetitionDetector", "OperationContext", "DuplicateHandler", "SafetyGuard"],
  testing: ["ScriptedChatModel"],
  replay: ["replayGuards", "readRuns", "runFromMessages", "summaryTable"],
  fs: ["createFileTools", "createSandbox", "reduceFileCache", "DEFAULT_IGNORED"],
  middleware: ["guardMiddleware", "loopDetectMiddleware"],
};
writeFileSync(
  join(full, "probe.ts"),
  entryPoints.map(([alias, spec]) => `import * as ${alias} from "${spec}";\n`).join(""),
);
writeFileSync(
  join(full, "list-exports.mjs"),
  `import ts from "typescript";
const program = ts.createProgram(["probe.ts"], {
  module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022,
  strict: true, noEmit: true, types: ["node"], skipLibCheck: true,
});
const checker = program.getTypeChecker();
const out = {};
for (const stmt of program.getSourceFile("probe.ts").statements) {
  const alias = stmt.importClause.namedBindings.name.text;
  const moduleSymbol = checker.getSymbolAtLocation(stmt.moduleSpecifier);
  if (!moduleSymbol) { out[alias] = null; continue; }
  out[alias] = checker.getExportsOfModule(moduleSymbol).map((s) => {
    const target = s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s;
    const typeParameters = Math.max(0, ...(target.declarations ?? []).map((d) => d.typeParameters?.length ?? 0));
    return { name: s.name, value: Boolean(target.flags & ts.SymbolFlags.Value), typeParameters };
  });
}
console.log(JSON.stringify(out));
`,
);
r = run(process.execPath, ["list-exports.mjs"], { cwd: full });
if (r.status !== 0) fail("list the exports with the TypeScript API", output(r));
const exportsOf = JSON.parse(r.stdout);
for (const [alias, spec] of entryPoints) {
  if (!exportsOf[alias]) fail(`TypeScript cannot resolve "${spec}"`);
  const names = new Set(exportsOf[alias].map((e) => e.name));
  const absent = (documented[alias] ?? []).filter((n) => !names.has(n));
  if (absent.length) fail(`"${spec}" does not export ${absent.join(", ")}`);
}
console.log(
  `ok   exports: ${entryPoints
    .map(([a, spec]) => {
      const values = exportsOf[a].filter((e) => e.value).length;
      return `${spec} ${values} values + ${exportsOf[a].length - values} types`;
    })
    .join(", ")}`,
);

// 4. The runtime agrees: each entry point (and ./package.json) imports under node, with the values the types declare.
writeFileSync(
  join(full, "runtime.mjs"),
  `const mods = {
${entryPoints.map(([alias, spec]) => `  ${alias}: await import("${spec}"),`).join("\n")}
};
const manifest = (await import("${pkg.name}/package.json", { with: { type: "json" } })).default;
console.log(JSON.stringify({ version: manifest.version, names: Object.fromEntries(Object.entries(mods).map(([k, m]) => [k, Object.keys(m)])) }));
`,
);
r = run(process.execPath, ["runtime.mjs"], { cwd: full, timeout: 60_000 });
if (r.status !== 0) fail("import the entry points under node", output(r));
const runtime = JSON.parse(r.stdout);
if (runtime.version !== pkg.version)
  fail(`${pkg.name}/package.json has version ${runtime.version}, not ${pkg.version}`);
for (const [alias, spec] of entryPoints) {
  const typedValues = exportsOf[alias].filter((e) => e.value).map((e) => e.name);
  const atRuntime = new Set(runtime.names[alias]);
  const missingAtRuntime = typedValues.filter((n) => !atRuntime.has(n));
  const untyped = runtime.names[alias].filter((n) => !typedValues.includes(n));
  if (missingAtRuntime.length || untyped.length) {
    fail(`"${spec}": its .d.ts and .js disagree`, JSON.stringify({ missingAtRuntime, untyped }));
  }
}
console.log(`ok   node imports ${entryPoints.map(([, s]) => s).join(", ")}, ${pkg.name}/package.json (${r.seconds}s)`);

// 4b. langchain is an optional peer: without it (the no-langchain project) every entry point imports, the
//     middleware's included, and the middleware builds.
writeFileSync(
  join(bare, "without-langchain.mjs"),
  `${entryPoints.map(([, spec]) => `await import("${spec}");`).join("\n")}
const { guardMiddleware } = await import("${pkg.name}/middleware");
const m = guardMiddleware();
if (m.name !== "GuardMiddleware" || typeof m.afterModel?.hook !== "function") throw new Error("not a middleware");
try { await import("langchain"); throw new Error("langchain is installed"); } catch (e) { if (e.code !== "ERR_MODULE_NOT_FOUND") throw e; }
`,
);
r = run(process.execPath, ["without-langchain.mjs"], { cwd: bare, timeout: 60_000 });
if (r.status !== 0) report("no-langchain: import the entry points without langchain installed", output(r));
else console.log(`ok   no-langchain: every entry point imports; guardMiddleware() builds (${r.seconds}s)`);

// 4b'. @opentelemetry/api is an optional peer too: without it (the no-langchain project has neither) guardMetrics
//     counts a scripted run of a createReactAgent with GuardedToolNode, and nothing fails for the missing package.
writeFileSync(
  join(bare, "without-otel.mjs"),
  `import { tool } from "@langchain/core/tools";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { z } from "zod";
import { GuardedToolNode, GuardMessagesState, guardMetrics } from "${pkg.name}";
import { ScriptedChatModel } from "${pkg.name}/testing";
try { await import("@opentelemetry/api"); throw new Error("@opentelemetry/api is installed"); } catch (e) { if (e.code !== "ERR_MODULE_NOT_FOUND") throw e; }
const search = tool(async ({ q }) => "hits for " + q, {
  name: "search_docs", description: "Search.", schema: z.object({ q: z.string() }),
  metadata: { readOnlyHint: true, idempotentHint: true },
});
const ask = { toolCalls: [{ name: "search_docs", args: { q: "install" } }] };
const agent = createReactAgent({
  llm: new ScriptedChatModel([ask, ask, "Done."]),
  tools: new GuardedToolNode([search]),
  stateSchema: GuardMessagesState,
});
const metrics = guardMetrics();
await agent.invoke({ messages: [{ role: "user", content: "How do I install it?" }] }, { callbacks: [metrics] });
const counts = metrics.counts();
if (counts.callsRun !== 1 || counts.served !== 1 || counts.runsEnded !== 1) throw new Error(JSON.stringify(counts));
`,
);
r = run(process.execPath, ["without-otel.mjs"], { cwd: bare, timeout: 60_000 });
if (r.status !== 0) report("no-otel: guardMetrics without @opentelemetry/api installed", output(r));
else
  console.log(`ok   no-otel: guardMetrics counts a run (1 run, 1 served) without @opentelemetry/api (${r.seconds}s)`);

// 4c. require() (Node 20.19+ loads ES modules): every entry point, the same values as import gives, and the quick
//     start's agent built and run from a CommonJS file.
writeFileSync(
  join(full, "require.cjs"),
  `"use strict";
const mods = {
${entryPoints.map(([alias, spec]) => `  ${alias}: require("${spec}"),`).join("\n")}
};
const { tool } = require("@langchain/core/tools");
const { Command, isInterrupted, MemorySaver } = require("@langchain/langgraph");
const { createReactAgent } = require("@langchain/langgraph/prebuilt");
const { z } = require("zod");
const { StateGraph, START, END } = require("@langchain/langgraph");
const { escalationHook, escalationNode, GuardedToolNode, GuardMessagesState, guardMessagesStateSchema, guardVerdict } =
  require("${pkg.name}");
const { ScriptedChatModel } = require("${pkg.name}/testing");

async function main() {
  const imported = {
${entryPoints.map(([alias, spec]) => `    ${alias}: await import("${spec}"),`).join("\n")}
  };
  for (const [alias, mod] of Object.entries(mods)) {
    for (const name of Object.keys(imported[alias])) {
      if (mod[name] !== imported[alias][name]) throw new Error(\`require and import differ on \${alias}.\${name}\`);
    }
  }
  const getWeather = tool(async () => { throw new Error("weather service unavailable"); },
    { name: "get_weather", description: "Current weather in a city", schema: z.object({ city: z.string() }) });
  const llm = new ScriptedChatModel(() => ({ toolCalls: [{ name: "get_weather", args: { city: "Paris" } }] }));
  const tools = new GuardedToolNode([getWeather]);
  const agent = createReactAgent({ llm, tools, stateSchema: GuardMessagesState,
    postModelHook: escalationHook(tools), checkpointer: new MemorySaver() });
  const config = { configurable: { thread_id: "cjs" } };
  const first = await agent.invoke({ messages: [{ role: "user", content: "Weather in Paris?" }] }, config);
  if (!isInterrupted(first)) throw new Error("no interrupt at strike 3");
  const last = await agent.invoke(new Command({ resume: "Say you cannot get it." }), config);
  const text = String(last.messages.at(-1)?.content ?? "");
  if (!text) throw new Error("no final message");
  // A zod StateGraph of LangGraph's CommonJS copy: the root's CommonJS file registered the zod forms' reducers there.
  const zodTools = new GuardedToolNode([getWeather]);
  const bound = llm.bindTools([getWeather]);
  const graph = new StateGraph(guardMessagesStateSchema)
    .addNode("agent", async (state) => ({ messages: [await bound.invoke(state.messages)] }))
    .addNode("tools", zodTools)
    .addNode("escalation", escalationNode(zodTools))
    .addEdge(START, "agent")
    .addEdge("agent", "escalation")
    .addConditionalEdges("escalation", (state) => (guardVerdict(state) ? END : "tools"))
    .addEdge("tools", "agent")
    .compile();
  const zodRun = await graph.invoke({ messages: [{ role: "user", content: "Weather in Paris?" }] }, { recursionLimit: 100 });
  if (guardVerdict(zodRun)?.level !== 4) throw new Error("the zod StateGraph did not end at level 4");
  console.log(JSON.stringify({ entryPoints: Object.keys(mods).length, finalChars: text.length }));
}
main().catch((error) => { console.error(error); process.exit(1); });
`,
);
r = run(process.execPath, ["require.cjs"], { cwd: full, timeout: 60_000 });
if (r.status !== 0) report("full: node require.cjs (require() of every entry point, the quick start)", output(r));
else {
  const { entryPoints: n, finalChars } = JSON.parse(r.stdout.trim().split("\n").at(-1));
  console.log(
    `ok   full: node require.cjs: ${n} entry points require()d, the same values as import; the quick start ` +
      `interrupts at strike 3, then ends with ${finalChars} chars; a zod StateGraph ends at level 4 (${r.seconds}s)`,
  );
}

// 5. The files to type-check: every exported name (generated), a hand-written use of the documented API, the quick
//    start; .cts copies for a CommonJS consumer.
function allExports(skip = []) {
  let generated =
    "// Generated by .ci/check-install.mjs: every name each entry point exports, in a value or type position.\n";
  for (const [alias, spec] of entryPoints) {
    if (skip.includes(alias)) continue;
    const p = `${alias}_`;
    const values = exportsOf[alias].filter((e) => e.value);
    const types = exportsOf[alias].filter((e) => !e.value);
    generated += `import { ${values.map((e) => `${e.name} as ${p}${e.name}`).join(", ")} } from "${spec}";\n`;
    if (types.length) {
      generated += `import type { ${types.map((e) => `${e.name} as ${p}${e.name}`).join(", ")} } from "${spec}";\n`;
    }
    generated += `export const ${alias}Values = { ${values.map((e) => `${e.name}: ${p}${e.name}`).join(", ")} };\n`;
    generated += `export type ${alias}ValueTypes = { ${values.map((e) => `${e.name}: typeof ${p}${e.name}`).join("; ")} };\n`;
    const args = (n) => (n ? `<${Array(n).fill("never").join(", ")}>` : "");
    generated += `export type ${alias}Types = { ${types.map((e) => `${e.name}: ${p}${e.name}${args(e.typeParameters)}`).join("; ")} };\n`;
  }
  return generated;
}

/** The documented API of the entry points that need only the required peers, as a user would write it. */
const entryFile = (zodImport) => `// The documented API of every entry point, used as a user would (types and values).
import { tool } from "@langchain/core/tools";
import { Annotation, END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { z } from "${zodImport}";
import {
  createFileTools,
  escalationHook,
  escalationNode,
  type FileToolsOptions,
  type GuardHook,
  GuardedToolNode,
  GuardMessagesState,
  GuardState,
  guardHooks,
  guardStateSchema,
  loopDetectHook,
} from "${pkg.name}";
import { DuplicateHandler, SafetyGuard, ToolRepetitionDetector } from "${pkg.name}/classes";
import { type ReplayResult, type ReplayRun, replayGuards } from "${pkg.name}/replay";
import {
  decideToolCall,
  emptyToolGuardState,
  normalizeQuery,
  planToolCalls,
  resolveToolGuardOptions,
  type ToolCallDecision,
  type ToolGuardState,
} from "${pkg.name}/core";
import { ScriptedChatModel } from "${pkg.name}/testing";

const echo = tool(async ({ text }) => text, {
  name: "echo",
  description: "Echoes its input",
  schema: z.object({ text: z.string() }),
});
export const llm: ScriptedChatModel = new ScriptedChatModel(["done"]);
// As the docs have it: the node declared before the graph, shared by the escalation and the graph.
export const tools: GuardedToolNode = new GuardedToolNode([echo]);
export const hook: GuardHook = guardHooks(loopDetectHook({ maxIterations: 30 }), escalationHook(tools));
export const graph = new StateGraph(GuardMessagesState)
  .addNode("agent", async (state) => ({ messages: [await llm.invoke(state.messages)] }))
  .addNode("escalation", escalationNode(tools), { ends: ["tools", "agent", END] })
  .addNode("tools", tools)
  .addEdge(START, "agent")
  .addEdge("agent", "escalation")
  .addEdge("tools", "agent")
  .compile({ checkpointer: new MemorySaver() });
const MyState = Annotation.Root({ ...MessagesAnnotation.spec, ...GuardState.spec, topic: Annotation<string>() });
export const custom = new StateGraph(MyState)
  .addNode("tools", tools)
  .addNode("inline", new GuardedToolNode([echo]))
  .addEdge(START, "inline")
  .addEdge("inline", "tools")
  .addEdge("tools", END)
  .compile();
export const messagesState: typeof GuardMessagesState = GuardMessagesState;
export const zodState = z.object({ ...guardStateSchema.shape, topic: z.string() });

const fileOptions: FileToolsOptions = { root: "/tmp", allowCommands: false };
export const fileTools: ReturnType<typeof createFileTools> = createFileTools(fileOptions);
export const detector: ToolRepetitionDetector = new ToolRepetitionDetector();
export const duplicates: DuplicateHandler = new DuplicateHandler();
export const safety: SafetyGuard = new SafetyGuard({ maxIterations: 10 });
const run: ReplayRun = { id: "run-1", steps: [] };
export const replayed: ReplayResult = replayGuards(run);

const state: ToolGuardState = emptyToolGuardState();
const options = resolveToolGuardOptions();
export const decision: ToolCallDecision = decideToolCall(state, { name: "read_file", args: { path: "a" } }, options);
export const plan: ReturnType<typeof planToolCalls> = planToolCalls(state, [{ name: "ls", args: {} }], options);
export const query: string = normalizeQuery("  Weather  in PARIS ");
`;

// (b) The README quick start: the ```ts block right after the one `<!-- quick-start -->` line, verbatim.
const readmePath = readmeArg ?? join(repo, "README.md");
const readmeName = relative(process.cwd(), readmePath) || readmePath;
const readme = readFileSync(readmePath, "utf8").split("\n");
const markers = readme.flatMap((line, i) => (line.trim() === "<!-- quick-start -->" ? [i] : []));
if (markers.length !== 1) fail(`${readmeName} has ${markers.length} \`<!-- quick-start -->\` lines, not 1`);
const open = markers[0] + 1;
const close = readme.findIndex((line, i) => i > open && line.trim() === "```");
if (readme[open]?.trim() !== "```ts" || close < 0) {
  fail(`${readmeName}: \`<!-- quick-start -->\` is not immediately followed by a \`\`\`ts fenced block`);
}
const quickStart = `${readme.slice(open + 1, close).join("\n")}\n`;
console.log(`ok   README quick start: ${close - open - 1} lines (${readmeName}:${open + 2}-${close})`);

const projects = [
  { name: "full", dir: full, skip: [], zodImport: "zod", cjs: true },
  { name: "no-langchain", dir: bare, skip: needLangchain, zodImport: "zod", cjs: false },
  ...(zod3Project ? [{ name: "zod3", dir: zod3Project, skip: [], zodImport: "zod/v4", cjs: false }] : []),
];
// The README's quick start is createAgent's (it imports langchain): a project without langchain runs the same
// scenario through createReactAgent instead (the README's createReactAgent block, made a program), valid TS and JS.
const reactQuickStart = `import { tool } from "@langchain/core/tools";
import { Command, isInterrupted, MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { escalationHook, GuardedToolNode, GuardMessagesState } from "${pkg.name}";
import { ScriptedChatModel } from "${pkg.name}/testing";
import { z } from "zod";

const getWeather = tool(async () => { throw new Error("weather service unavailable"); },
  { name: "get_weather", description: "Current weather in a city", schema: z.object({ city: z.string() }) });
const llm = new ScriptedChatModel(() => ({ toolCalls: [{ name: "get_weather", args: { city: "Paris" } }] }));
const guarded = new GuardedToolNode([getWeather]);
const agent = createReactAgent({ llm, tools: guarded, stateSchema: GuardMessagesState,
  postModelHook: escalationHook(guarded), checkpointer: new MemorySaver() });
const config = { configurable: { thread_id: "quick-start" } };
const first = await agent.invoke({ messages: [{ role: "user", content: "Weather in Paris?" }] }, config);
if (isInterrupted(first)) console.log(first.__interrupt__[0]?.value);
const last = await agent.invoke(new Command({ resume: "Say you cannot get it." }), config);
console.log(last.messages.at(-1)?.content);
`;
const needsLangchain = /from "langchain"/.test(quickStart);
for (const { dir, skip, zodImport, cjs } of projects) {
  writeFileSync(join(dir, "all-exports.ts"), allExports(skip));
  writeFileSync(join(dir, "entry.ts"), entryFile(zodImport));
  const hasLangchain = existsSync(join(dir, "node_modules", "langchain"));
  writeFileSync(join(dir, "quickstart.ts"), needsLangchain && !hasLangchain ? reactQuickStart : quickStart);
  copyFileSync(join(dir, "quickstart.ts"), join(dir, "quickstart.mjs"));
  if (cjs) {
    copyFileSync(join(dir, "all-exports.ts"), join(dir, "all-exports.cts"));
    copyFileSync(join(dir, "entry.ts"), join(dir, "entry.cts"));
  }
}

// 6. Type-check with each project's own tsc: ES module files under node16, nodenext and bundler resolution, and in
//    the full project the CommonJS copies (.cts) under node16 and nodenext.
const esm = ["entry.ts", "all-exports.ts", "quickstart.ts"];
const configs = projects.flatMap(({ name, dir, cjs }) => [
  ...[
    ["node16", "node16"],
    ["nodenext", "nodenext"],
    ["esnext", "bundler"],
  ].map(([module, moduleResolution]) => ({ name, dir, module, moduleResolution, files: esm })),
  ...(cjs
    ? ["node16", "nodenext"].map((m) => ({
        name,
        dir,
        module: m,
        moduleResolution: m,
        files: ["entry.cts", "all-exports.cts"],
      }))
    : []),
]);
// The full project's nodenext files again, with each other TypeScript (the user's tsc is not always ours).
for (const { version, tsc } of otherTscs) {
  configs.push(
    { name: "full", dir: full, module: "nodenext", moduleResolution: "nodenext", files: esm, tsc, version },
    {
      name: "full",
      dir: full,
      module: "nodenext",
      moduleResolution: "nodenext",
      files: ["entry.cts", "all-exports.cts"],
      tsc,
      version,
    },
  );
}
/** Runs `jobs` (functions that return promises) at most `limit` at a time, in order. */
async function pool(jobs, limit) {
  const results = [];
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++;
      results[i] = await jobs[i]();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, jobs.length) }, worker));
  return results;
}
const jobs = configs.map((c) => () => {
  const kind = c.files[0].endsWith(".cts") ? "cjs" : "esm";
  const file = `tsconfig.${kind}.${c.moduleResolution}.json`;
  const compilerOptions = {
    target: "ES2022",
    module: c.module,
    moduleResolution: c.moduleResolution,
    strict: true,
    skipLibCheck: false,
    noEmit: true,
    types: ["node"],
  };
  writeFileSync(join(c.dir, file), `${JSON.stringify({ compilerOptions, files: c.files }, null, 2)}\n`);
  const tsc = c.tsc ?? join(c.dir, "node_modules", "typescript", "bin", "tsc");
  return runAsync(process.execPath, [tsc, "-p", file], { cwd: c.dir, timeout: 900_000 }).then((result) => ({
    ...c,
    file,
    result,
  }));
});
// An error inside another package's .d.ts (e.g. @langchain/core's CommonJS types importing the ES module
// js-tiktoken under node16) is that package's, and is printed, not counted; one in our .d.ts or in the user's files is.
const ours = (f) => !f.startsWith("node_modules/") || f.startsWith(`node_modules/${pkg.name}/`);
for (const { name, module, moduleResolution, files, file, result, version } of await pool(
  jobs,
  availableParallelism(),
)) {
  const which = version === undefined ? "tsc" : `TypeScript ${version}`;
  const label = `${name}: ${which} ${module}/${moduleResolution} (strict, skipLibCheck false)`;
  const errors = [...result.stdout.matchAll(/^(\S+?)\(\d+,\d+\): error.*$/gm)];
  const foreign = errors.filter((m) => !ours(m[1]));
  if (result.status === 0 || (errors.length > 0 && foreign.length === errors.length)) {
    const note = foreign.length
      ? `; ${foreign.length} error(s) inside other packages, not counted:\n       ${foreign.map((m) => m[0]).join("\n       ")}`
      : "";
    console.log(`ok   ${label}: ${files.join(", ")} (${result.seconds}s)${note}`);
  } else {
    const inFiles = [...new Set(errors.filter((m) => ours(m[1])).map((m) => m[1]))];
    report(`${label}: errors in ${inFiles.join(", ") || "?"} (-p ${file}, ${result.seconds}s)`, output(result));
  }
}

// 7. Run the quick start: it must stop at strike 3 with the escalation interrupt, resume, and end with a message.
function runQuickStart(name, dir, file = "quickstart.mjs") {
  r = run(process.execPath, [file], { cwd: dir, timeout: 60_000 });
  const step = `${name}: node ${file}`;
  if (r.status !== 0) return report(`${step} exited ${r.status ?? r.signal ?? r.error} (${r.seconds}s)`, output(r));
  if (`${r.stdout}\n${r.stderr}`.includes("GraphRecursionError"))
    return report(`${step}: GraphRecursionError`, output(r));
  const payloadAt = r.stdout.indexOf("langgraph-guards/escalation");
  if (payloadAt < 0) return report(`${step}: no interrupt payload (langgraph-guards/escalation) in stdout`, output(r));
  // The payload is the first console.log (an object, on one line or several, closed by a "}" line): what follows
  // is the final message.
  const lines = r.stdout.split("\n");
  let start = r.stdout.slice(0, payloadAt).split("\n").length - 1;
  while (start > 0 && !lines[start].startsWith("{")) start--;
  let end = start;
  if (!/}\s*$/.test(lines[start])) while (end < lines.length && lines[end] !== "}") end++;
  const final = lines
    .slice(end + 1)
    .join("\n")
    .trim();
  if (!final || final === "undefined")
    return report(`${step}: no final message after the interrupt payload`, output(r));
  console.log(
    `ok   ${step}: interrupt payload at strike 3, then a final message of ${final.length} chars (${r.seconds}s)`,
  );
}
for (const { name, dir } of projects) runQuickStart(name, dir);

// 7a. The same quick start in CommonJS (issue 61: createAgent's middleware once crashed there): as a .cjs file
//     (imports made require() calls, the code in an async function: CommonJS has no top-level await), and as
//     TypeScript compiled by tsc to CommonJS (a "type": "commonjs" folder, module node16), then run with node. Both
//     load LangGraph's and langchain's CommonJS copies beside the ES module copies the guards import.
function commonJsQuickStart(source, typescript) {
  const lines = source.trimEnd().split("\n");
  const imports = lines.filter((l) => l.startsWith("import "));
  const head = imports.map((line) => {
    if (typescript) return line;
    const m = /^import (\{[^}]*\}) from ("[^"]+");$/.exec(line);
    if (!m) fail(`README quick start: an import check-install cannot make a require(): ${line}`);
    return `const ${m[1].replace(/ as /g, ": ")} = require(${m[2]});`;
  });
  const body = lines.filter((l) => !l.startsWith("import ")).map((l) => (l ? `  ${l}` : l));
  const main = [
    "async function main() {",
    ...body,
    "}",
    "main().catch((error) => { console.error(error); process.exit(1); });",
  ];
  return [...(typescript ? [] : ['"use strict";']), ...head, ...main, ""].join("\n");
}
if (needsLangchain) {
  writeFileSync(join(full, "quickstart.cjs"), commonJsQuickStart(quickStart, false));
  runQuickStart("full (CommonJS)", full, "quickstart.cjs");
  const cjsApp = join(full, "cjs-app");
  mkdirSync(cjsApp);
  writeFileSync(join(cjsApp, "package.json"), '{ "name": "cjs-app", "private": true, "type": "commonjs" }\n');
  writeFileSync(join(cjsApp, "quickstart.ts"), commonJsQuickStart(quickStart, true));
  const compilerOptions = {
    module: "node16",
    moduleResolution: "node16",
    target: "es2022",
    strict: true,
    skipLibCheck: true,
    outDir: "out",
    types: ["node"],
  };
  writeFileSync(join(cjsApp, "tsconfig.json"), `${JSON.stringify({ compilerOptions, files: ["quickstart.ts"] })}\n`);
  r = run(process.execPath, [join(full, "node_modules", "typescript", "bin", "tsc"), "-p", "."], { cwd: cjsApp });
  if (r.status !== 0) report("cjs-app: tsc (module node16, type commonjs) of the quick start", output(r));
  else if (!readFileSync(join(cjsApp, "out", "quickstart.js"), "utf8").includes('require("langchain")'))
    report('cjs-app: tsc did not compile the quick start to CommonJS (no require("langchain"))');
  else runQuickStart("cjs-app (TypeScript compiled to CommonJS)", cjsApp, join("out", "quickstart.js"));
}

// 7b. The quick start as a .ts file run with tsx, as the README says: in a project of "type": "module" (the full
//     project), and in a default `npm init -y` project (npm 11 writes "type": "commonjs", where top-level await
//     fails) after the one line the README gives, `npm pkg set type=module`. Both below the full project, whose
//     node_modules they use.
function runQuickStartTs(name, dir) {
  const tsxBin = join(full, "node_modules", "tsx", "dist", "cli.mjs");
  r = run(process.execPath, [tsxBin, "quickstart.ts"], { cwd: dir, timeout: 120_000 });
  const step = `${name}: npx tsx quickstart.ts`;
  if (r.status !== 0) return report(`${step} exited ${r.status ?? r.signal ?? r.error} (${r.seconds}s)`, output(r));
  if (!r.stdout.includes("langgraph-guards/escalation")) return report(`${step}: no interrupt payload`, output(r));
  console.log(`ok   ${step}: the interrupt payload and a final message (${r.seconds}s)`);
}
runQuickStartTs("full (type: module)", full);
const defaultApp = join(full, "default-app");
mkdirSync(defaultApp);
r = run("npm", ["init", "-y"], { cwd: defaultApp });
if (r.status !== 0) report("default-app: npm init -y", output(r));
copyFileSync(join(full, "quickstart.ts"), join(defaultApp, "quickstart.ts"));
const defaultType = JSON.parse(readFileSync(join(defaultApp, "package.json"), "utf8")).type ?? "(none)";
r = run("npm", ["pkg", "set", "type=module"], { cwd: defaultApp });
if (r.status !== 0) report("default-app: npm pkg set type=module", output(r));
runQuickStartTs(`default-app (npm init -y wrote type ${defaultType}; then npm pkg set type=module)`, defaultApp);

// 8. (--git) The clone as a git dependency: npm clones it, installs its dev dependencies there, runs prepare, packs.
if (viaGit && !givenTarball) {
  const gitProject = join(tmp, "git");
  mkdirSync(gitProject);
  writeFileSync(
    join(gitProject, "package.json"),
    '{ "name": "langgraph-guards-git", "private": true, "type": "module" }\n',
  );
  r = run(
    "npm",
    ["install", "--no-audit", "--no-fund", "--prefer-offline", `git+file://${clone}`, ...peerSpecs(requiredPeers)],
    { cwd: gitProject, timeout: 1_800_000 },
  );
  if (r.status !== 0) report("git: npm install git+file://<clone>", output(r));
  else {
    const installed = join(gitProject, "node_modules", pkg.name);
    const missing = [...pointedAt].filter((p) => !existsSync(join(installed, p)));
    if (missing.length) report(`git: the installed package misses ${missing.join(", ")}`);
    else {
      copyFileSync(join(bare, "quickstart.mjs"), join(gitProject, "quickstart.mjs"));
      console.log(`ok   git: npm install git+file://<clone>: dist/ built by prepare (${r.seconds}s)`);
      runQuickStart("git", gitProject);
    }
  }
}
finish();
