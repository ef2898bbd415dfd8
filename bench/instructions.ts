/**
 * The guards' overhead counted in CPU instructions rather than timed, run with `npm run bench:instructions
 * [-- --runs N] [-- --only node|middleware]`: a measure that other work on the machine moves far less than the clock.
 * Needs valgrind (Debian's `valgrind` package); without it the bench says so and measures nothing. `--quick` (30
 * turns, 1 warm-up and 2 measured runs) only shows that it runs: its counts are mostly the compiler's.
 *
 * The agents are those of `npm run bench:overhead` (150 `read_file` turns of `createFileTools`, a scripted model, no
 * checkpointer): `GuardedToolNode` against `ToolNode` in createReactAgent (both in `GuardMessagesState`), and
 * `guardMiddleware()` against `toolCallLimitMiddleware` in createAgent. Each variant runs in processes of its own
 * under valgrind's cachegrind: one runs the warm-up runs only (3), the other the warm-up runs and then the measured
 * ones (9, the overhead bench's count); the difference is what the measured runs executed, the process's start,
 * module loading and warm-up left out. Every process enables the sub-agent scope's `AsyncLocalStorage` first: in the
 * interleaved overhead bench it is on in the plain runs too, from the first guarded run on.
 *
 * Counts include the work of V8's background threads (the optimizing compiler, the garbage collector's helpers),
 * which a clock sees only when they compete for a core. Counts are not time: a cache miss costs more than an
 * instruction, so a ratio of counts reads lower than the ratio of times. The table splits each difference by where the
 * instructions ran: V8's optimizing compiler, the garbage collector, inline caches, other builtins, compiled
 * JavaScript, the rest of V8's runtime, SHA-256, everything else. The compiler's and the collector's shares move from
 * one process to the next (they run when V8's heuristics and timers say, and a run under valgrind takes minutes); the
 * rest is steadier, and is reported on its own too. Counts still move by a few percent with what else the machine
 * runs: compare a change with its parent in runs made under the same load (an idle machine).
 *
 * No goal is judged: the overhead bench's goals are in time.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ToolMessage } from "@langchain/core/messages";
import { createReactAgent, ToolNode } from "@langchain/langgraph/prebuilt";
import { createAgent, toolCallLimitMiddleware } from "langchain";
import { createFileTools } from "../src/fs/index.js";
import { GuardedToolNode, GuardMessagesState } from "../src/index.js";
import { guardMiddleware } from "../src/middleware/index.js";
import { watchSubAgents } from "../src/run-end/sub-agents.js";
import { agentRecursionLimit, moduleText, readFileInput, readFileModel, readPath } from "./agent-script.js";
import { argument, countArgument, type Figure, quick, report } from "./report.js";

/** The repository (the children import tsx from its node_modules). */
const REPO = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The variants, in pairs: the plain one first. */
const PAIRS = {
  node: ["toolNode", "guardedToolNode"],
  middleware: ["toolCallLimit", "guardMiddleware"],
} as const;
type Variant = (typeof PAIRS)[keyof typeof PAIRS][number];

// ---------------------------------------------------------------------------------------------------------------
// A child: runs one variant's agent `runs` times (under valgrind, started by the parent below)
// ---------------------------------------------------------------------------------------------------------------

async function child(variant: Variant, runs: number, turns: number, root: string): Promise<void> {
  // The scope's storage on, as in the overhead bench.
  await watchSubAgents("bench", async () => new ToolMessage({ content: "", tool_call_id: "bench" }));
  for (let run = 0; run < runs; run += 1) {
    const tools = createFileTools({ root });
    const llm = readFileModel(turns, "done");
    const config = { recursionLimit: agentRecursionLimit(turns), configurable: { thread_id: `${variant}-${run}` } };
    const input = readFileInput(turns);
    let state: { messages: unknown[] };
    if (variant === "toolNode" || variant === "guardedToolNode") {
      const node = variant === "toolNode" ? new ToolNode(tools) : new GuardedToolNode(tools);
      state = await createReactAgent({ llm, tools: node, stateSchema: GuardMessagesState }).invoke(input, config);
    } else {
      const middleware =
        variant === "guardMiddleware" ? guardMiddleware() : toolCallLimitMiddleware({ threadLimit: 1_000_000 });
      state = await createAgent({ model: llm, tools, middleware: [middleware] }).invoke(input, config);
    }
    // The scripted model's turns, each a call and its answer, the person's message and the final answer.
    if (state.messages.length !== 2 * turns + 2) throw new Error(`${variant}: ${state.messages.length} messages`);
  }
}

const childAt = process.argv.indexOf("--child");
if (childAt >= 0) {
  const [variant, runs, turns, root] = process.argv.slice(childAt + 1);
  await child(variant as Variant, Number(runs), Number(turns), root as string);
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------------------------
// The parent: the processes under valgrind, two at a time, and the table
// ---------------------------------------------------------------------------------------------------------------

const TURNS = quick ? 30 : 150;
const WARMUP_RUNS = quick ? 1 : 3;
const MEASURED_RUNS = countArgument("--runs", quick ? 2 : 9);
if (MEASURED_RUNS < 1) throw new Error("--runs takes a count of 1 or more");
const only = argument("--only");
if (only !== undefined && !(only in PAIRS)) throw new Error(`--only takes node or middleware, got ${only}`);
const pairs = Object.entries(PAIRS).filter(([name]) => only === undefined || only === name);

/** Instructions by where they ran, from a cachegrind output file (its per-function totals). */
type Split = Map<string, number>;

/** Where a function's instructions count: its category in the table. */
function categoryOf(fn: string): string {
  if (fn.includes("compiler::")) return "optimizing compiler";
  if (/Scaveng|Marking|Sweeper|Evacuat|heap::|Heap::|MemoryChunk|RememberedSet/.test(fn)) return "garbage collector";
  if (fn.startsWith("Builtins_") && /IC/.test(fn)) return "inline caches";
  if (fn.startsWith("Builtins_")) return "other builtins";
  if (fn === "???") return "compiled JavaScript";
  if (/sha256/i.test(fn)) return "SHA-256";
  if (fn.includes("v8::")) return "V8 runtime";
  return "everything else";
}

const CATEGORIES = [
  "optimizing compiler",
  "garbage collector",
  "inline caches",
  "other builtins",
  "compiled JavaScript",
  "V8 runtime",
  "SHA-256",
  "everything else",
];

/** The per-category instruction counts of a cachegrind output file (`fn=` lines, then `line count` lines). */
function readSplit(file: string): Split {
  const split: Split = new Map();
  let category = "everything else";
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (line.startsWith("fn=")) {
      category = categoryOf(line.slice(3));
      continue;
    }
    const space = line.indexOf(" ");
    if (space > 0 && line.charCodeAt(0) >= 48 && line.charCodeAt(0) <= 57) {
      split.set(category, (split.get(category) ?? 0) + Number(line.slice(space + 1)));
    }
  }
  return split;
}

/** Runs one variant's child under valgrind: resolves to its instruction split. */
function measure(dir: string, root: string, variant: Variant, runs: number): Promise<Split> {
  const out = join(dir, `${variant}-${runs}.cg`);
  const args = [
    "--tool=cachegrind",
    "--cache-sim=no",
    "--smc-check=all-non-file", // V8 writes the code it runs
    `--cachegrind-out-file=${out}`,
    process.execPath,
    "--import",
    "tsx",
    fileURLToPath(import.meta.url),
    "--child",
    variant,
    String(runs),
    String(TURNS),
    root,
  ];
  return new Promise((resolve, reject) => {
    const proc = spawn("valgrind", args, { cwd: REPO, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    proc.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    proc.on("error", reject);
    proc.on("close", (code) => {
      if (code !== 0) reject(new Error(`${variant} (${runs} runs) failed under valgrind:\n${stderr.slice(-2000)}`));
      else resolve(readSplit(out));
    });
  });
}

/** Runs the tasks two at a time (the machines have two cores; valgrind runs a process on one). */
async function twoAtATime<T>(tasks: (() => Promise<T>)[]): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await (tasks[i] as () => Promise<T>)();
    }
  };
  await Promise.all([worker(), worker()]);
  return results;
}

const total = (split: Split) => [...split.values()].reduce((a, b) => a + b, 0);
/**
 * The instructions of the JavaScript's own work: all but the optimizing compiler's and the garbage collector's, which
 * run when V8's timers and heuristics say and move the most from one process to the next.
 */
const mutator = (split: Split) =>
  total(split) - (split.get("optimizing compiler") ?? 0) - (split.get("garbage collector") ?? 0);
/** What the measured runs executed: the longer process's counts less the warm-up-only process's. */
function measuredRuns(all: Split, warmup: Split): Split {
  return new Map(CATEGORIES.map((c) => [c, (all.get(c) ?? 0) - (warmup.get(c) ?? 0)]));
}

if (spawnSync("valgrind", ["--version"]).status !== 0) {
  console.log("bench:instructions needs valgrind (Debian: apt-get install valgrind); nothing measured.");
  process.exit(0);
}

const dir = mkdtempSync(join(tmpdir(), "lgg-instructions-"));
try {
  const root = join(dir, "project");
  for (let i = 0; i < TURNS; i += 1) {
    mkdirSync(dirname(join(root, readPath(i))), { recursive: true });
    writeFileSync(join(root, readPath(i)), moduleText(i));
  }
  const variants = pairs.flatMap(([, pair]) => pair) as Variant[];
  process.stderr.write(
    `... ${variants.length * 2} processes under valgrind (${TURNS} turns, ${WARMUP_RUNS} warm-up + ` +
      `${MEASURED_RUNS} runs): minutes\n`,
  );
  const tasks = variants.flatMap((v) => [
    () => measure(dir, root, v, WARMUP_RUNS),
    () => measure(dir, root, v, WARMUP_RUNS + MEASURED_RUNS),
  ]);
  const splits = await twoAtATime(tasks);
  const perTurn = new Map<Variant, Split>();
  variants.forEach((v, i) => {
    const runs = measuredRuns(splits[2 * i + 1] as Split, splits[2 * i] as Split);
    perTurn.set(v, new Map([...runs].map(([c, n]) => [c, n / (MEASURED_RUNS * TURNS)])));
  });

  const k = (n: number) => `${(n / 1000).toFixed(0)} K`;
  const figures: Figure[] = [];
  for (const [name, [plain, guarded]] of pairs) {
    const a = perTurn.get(plain) as Split;
    const b = perTurn.get(guarded) as Split;
    console.log(`\n${guarded} against ${plain}: instructions a turn (${MEASURED_RUNS} runs of ${TURNS} turns)\n`);
    console.log(`  ${"where they ran".padEnd(22)}${plain.padStart(16)}${guarded.padStart(18)}${"more".padStart(10)}`);
    for (const c of CATEGORIES) {
      const x = a.get(c) ?? 0;
      const y = b.get(c) ?? 0;
      console.log(`  ${c.padEnd(22)}${k(x).padStart(16)}${k(y).padStart(18)}${k(y - x).padStart(10)}`);
    }
    const [x, y] = [total(a), total(b)];
    console.log(`  ${"total".padEnd(22)}${k(x).padStart(16)}${k(y).padStart(18)}${k(y - x).padStart(10)}`);
    const [mx, my] = [mutator(a), mutator(b)];
    console.log(
      `  ${"without compiler, GC".padEnd(22)}${k(mx).padStart(16)}${k(my).padStart(18)}${k(my - mx).padStart(10)}`,
    );
    const what =
      name === "node"
        ? "GuardedToolNode / ToolNode, createReactAgent, same state"
        : "guardMiddleware() / toolCallLimitMiddleware, createAgent";
    for (const [part, ours, anchor] of [
      ["instructions a turn", y, x],
      ["the same without the optimizing compiler and the GC", my, mx],
    ] as const) {
      figures.push({
        bench: "instructions",
        figure: `${what}, ${TURNS} read_file turns: ${part}`,
        ours: k(ours),
        anchor: `${k(anchor)} ${plain}`,
        ratio: `${(ours / anchor).toFixed(3)}x`,
        goal: "",
        met: null,
      });
    }
  }
  report(figures);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
