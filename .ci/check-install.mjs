// Installs the package as a user would and uses it there: `npm pack`s the built package, installs the tarball into
// a fresh project beside only the runtime peers (plus the user's own typescript and @types/node), then
//   (a) type-checks a file that imports every entry point, and a generated file that imports every name each entry
//       point exports, with module/moduleResolution node16, nodenext and bundler (strict, skipLibCheck false);
//   (b) type-checks the README quick start and runs it with node.
// Assumes `npm run build` ran (CI builds before). Keeps the temporary project, and prints its path, when a step fails.
// Usage: node .ci/check-install.mjs [README]   (or npm run check:install); README: where to take the quick start
// from (default: the package's README.md), to try an edited one.
import { spawn, spawnSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";

const repo = new URL("..", import.meta.url).pathname;
const started = Date.now();
const pkg = JSON.parse(readFileSync(join(repo, "package.json"), "utf8"));

const built = ["dist/index.js", "dist/index.d.ts", "dist/core/index.d.ts", "dist/testing/index.d.ts"];
const notBuilt = built.filter((f) => !existsSync(join(repo, f)));
if (notBuilt.length) {
  console.error(`check-install: ${notBuilt.join(", ")} missing: run \`npm run build\` first`);
  process.exit(1);
}

const tmp = mkdtempSync(join(tmpdir(), "langgraph-guards-install-"));
const project = join(tmp, "project");
let failed = false;

/** Child processes get the caller's environment minus what `npm run` adds for this package's own scripts. */
const env = Object.fromEntries(
  Object.entries(process.env).filter(
    ([k]) => !(k.startsWith("npm_package_") || k.startsWith("npm_lifecycle_") || k === "npm_config_local_prefix"),
  ),
);

function run(cmd, args, { cwd = project, timeout = 300_000 } = {}) {
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
    console.error(`check-install: FAILED after ${seconds}s; kept the temporary project: ${project}`);
    process.exit(1);
  }
  console.log(`check-install: all steps passed in ${seconds}s`);
  process.exit(0);
}

/** As run(), without waiting: for the type-checks, which run side by side. */
function runAsync(cmd, args, { cwd = project, timeout = 300_000 } = {}) {
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

// 1. npm pack into the temporary folder.
let r = run("npm", ["pack", "--json", "--pack-destination", tmp], { cwd: repo });
if (r.status !== 0) fail("npm pack", output(r));
const tarball = join(tmp, JSON.parse(r.stdout)[0].filename);
console.log(`ok   npm pack: ${tarball} (${r.seconds}s)`);

// 2. A fresh project with the tarball, the runtime peers at our peerDependencies ranges, and the user's tooling.
const lock = existsSync(join(repo, "package-lock.json"))
  ? JSON.parse(readFileSync(join(repo, "package-lock.json"), "utf8"))
  : {};
const typescript = lock.packages?.["node_modules/typescript"]?.version ?? pkg.devDependencies.typescript;
const peers = Object.entries(pkg.peerDependencies).map(([name, range]) => `${name}@${range}`);
const tooling = [`typescript@${typescript}`, "@types/node@^20"];
mkdirSync(project);
writeFileSync(
  join(project, "package.json"),
  `${JSON.stringify({ name: "langgraph-guards-install-check", private: true, type: "module" }, null, 2)}\n`,
);
r = run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", tarball, ...peers, ...tooling], {
  timeout: 600_000,
});
if (r.status !== 0) fail("npm install", output(r));
const installed = Object.keys(JSON.parse(readFileSync(join(project, "package.json"), "utf8")).dependencies);
const versionOf = (name) =>
  JSON.parse(readFileSync(join(project, "node_modules", name, "package.json"), "utf8")).version;
console.log(`ok   npm install: ${installed.map((n) => `${n}@${versionOf(n)}`).join(", ")} (${r.seconds}s)`);

// 3. What each entry point exports, as TypeScript sees it from the installed package (names, value or type-only,
//    number of type parameters), and every name a user's file may import from it.
// Every entry point with types in package.json "exports" ("." as `root`, "./x/y" as `x_y`).
const entryPoints = Object.entries(pkg.exports)
  .filter(([, target]) => typeof target === "object" && target.types)
  .map(([key]) => [
    key === "." ? "root" : key.slice(2).replaceAll(/[^A-Za-z0-9]/g, "_"),
    key === "." ? pkg.name : `${pkg.name}/${key.slice(2)}`,
  ]);
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
  join(project, "probe.ts"),
  entryPoints.map(([alias, spec]) => `import * as ${alias} from "${spec}";\n`).join(""),
);
writeFileSync(
  join(project, "list-exports.mjs"),
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
r = run(process.execPath, ["list-exports.mjs"]);
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
  join(project, "runtime.mjs"),
  `const mods = {
${entryPoints.map(([alias, spec]) => `  ${alias}: await import("${spec}"),`).join("\n")}
};
const manifest = (await import("${pkg.name}/package.json", { with: { type: "json" } })).default;
console.log(JSON.stringify({ version: manifest.version, names: Object.fromEntries(Object.entries(mods).map(([k, m]) => [k, Object.keys(m)])) }));
`,
);
r = run(process.execPath, ["runtime.mjs"], { timeout: 60_000 });
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

// 4b. langchain is an optional peer: every entry point (the middleware included) must import without it.
{
  const installed = join(project, "node_modules", "langchain");
  const hidden = join(project, "node_modules", ".langchain-hidden");
  renameSync(installed, hidden);
  try {
    writeFileSync(
      join(project, "without-langchain.mjs"),
      `${entryPoints.map(([, spec]) => `await import("${spec}");`).join("\n")}
const { guardMiddleware } = await import("${pkg.name}/middleware");
const m = guardMiddleware();
if (m.name !== "GuardMiddleware" || typeof m.afterModel?.hook !== "function") throw new Error("not a middleware");
try { await import("langchain"); throw new Error("langchain is still installed"); } catch (e) { if (e.code !== "ERR_MODULE_NOT_FOUND") throw e; }
`,
    );
    r = run(process.execPath, ["without-langchain.mjs"], { timeout: 60_000 });
  } finally {
    renameSync(hidden, installed);
  }
  if (r.status !== 0) fail("import the entry points without langchain installed", output(r));
  console.log(
    `ok   every entry point imports without langchain (an optional peer); guardMiddleware() builds (${r.seconds}s)`,
  );
}

// 5. The files to type-check: every exported name (generated), a hand-written use of the documented API, the quick start.
let generated =
  "// Generated by .ci/check-install.mjs: every name each entry point exports, in a value or type position.\n";
for (const [alias, spec] of entryPoints) {
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
writeFileSync(join(project, "all-exports.ts"), generated);

writeFileSync(
  join(project, "entry.ts"),
  `// The documented API of every entry point, used as a user would (types and values).
import { tool } from "@langchain/core/tools";
import { Annotation, END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { z } from "zod";
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
`,
);

// (b) The README quick start: the ```ts block right after the one `<!-- quick-start -->` line, verbatim.
const readmePath = process.argv[2] ?? join(repo, "README.md");
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
writeFileSync(join(project, "quickstart.ts"), quickStart);
copyFileSync(join(project, "quickstart.ts"), join(project, "quickstart.mjs"));
console.log(`ok   README quick start: ${close - open - 1} lines (${readmeName}:${open + 2}-${close})`);

// 6. Type-check with the project's own tsc, once per module resolution.
const configs = [
  ["node16", "node16"],
  ["nodenext", "nodenext"],
  ["esnext", "bundler"],
];
const tsc = join(project, "node_modules", "typescript", "bin", "tsc");
const checks = configs.map(([module, moduleResolution]) => {
  const name = `tsconfig.${moduleResolution}.json`;
  const compilerOptions = {
    target: "ES2022",
    module,
    moduleResolution,
    strict: true,
    skipLibCheck: false,
    noEmit: true,
    types: ["node"],
  };
  writeFileSync(
    join(project, name),
    `${JSON.stringify({ compilerOptions, files: ["entry.ts", "all-exports.ts", "quickstart.ts"] }, null, 2)}\n`,
  );
  return runAsync(process.execPath, [tsc, "-p", name]).then((result) => ({ module, moduleResolution, name, result }));
});
for (const { module, moduleResolution, name, result } of await Promise.all(checks)) {
  const label = `tsc ${module}/${moduleResolution} (strict, skipLibCheck false)`;
  if (result.status === 0) {
    console.log(`ok   ${label}: entry.ts, all-exports.ts, quickstart.ts (${result.seconds}s)`);
  } else {
    const inFiles = [...new Set([...result.stdout.matchAll(/^(\S+?)\(\d+,\d+\): error/gm)].map((m) => m[1]))];
    report(`${label}: errors in ${inFiles.join(", ") || "?"} (-p ${name}, ${result.seconds}s)`, output(result));
  }
}

// 7. Run the quick start: it must stop at strike 3 with the escalation interrupt, resume, and end with a message.
function runQuickStart() {
  r = run(process.execPath, ["quickstart.mjs"], { timeout: 60_000 });
  const step = "node quickstart.mjs";
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
runQuickStart();
finish();
