/**
 * Overhead of the guards, run with `npm run bench:overhead [-- --quick]` (also part of `npm run bench`).
 *
 * The agents run what a user's agent does when it reads a project: a scripted model makes one `read_file` call a
 * turn, 150 turns, each of a file not read before, then answers; no checkpointer. The tool is the pack's own
 * `read_file` (`createFileTools`, over a sample project of small Python modules written to a temporary folder;
 * `--tool workspace`: the examples' in-memory `read_file`, examples/workspace.ts). The variants run interleaved in
 * one process (the order rotating), a few warm-up runs discarded, then 9 measured runs each (`--runs N`,
 * `--warmup N` to change them); a ratio is median / median, with a 95% interval.
 *
 * 1. createReactAgent: `GuardedToolNode` against `ToolNode`, both in `GuardMessagesState`, so that the ratio is the
 *    node's own cost; and a plain `ToolNode` in createReactAgent's default state, the switch a user makes. The
 *    guarded run must end with every call allowed and none blocked.
 * 2. langchain's `createAgent`: `guardMiddleware()` (what a user writes: it learns the tools from the first model
 *    request) and `guardMiddleware({ agentTools })` against `toolCallLimitMiddleware` (a limit the run never
 *    reaches, so it only counts calls), the middleware a user would otherwise put there, in the same agent with the
 *    same model and tools; and createAgent without middleware, for context.
 * 3. The cost of one decision (`decideToolCall`) against a full window of the default size and of 10,000 calls,
 *    for a new call (allowed) and for a repeat the threshold rule blocks, and the cost of applying a call's events
 *    with `reduceToolGuard`. The setup follows the defaults the code resolves (`resolveToolGuardOptions`).
 *
 * The agents' ratios come with a 95% interval (bootstrap over the pairs of runs), and their goals (GuardedToolNode
 * <= 1.10x ToolNode, guardMiddleware() <= 1.10x toolCallLimitMiddleware) are judged by it: met when the whole
 * interval is within the goal, missed when none of it is, "within noise" otherwise.
 *
 * Prints one table. No timing assertions: the process fails only if a guarded run misbehaves.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { createReactAgent, ToolNode } from "@langchain/langgraph/prebuilt";
import { createAgent, toolCallLimitMiddleware } from "langchain";
import { createWorkspaceTools, sampleProject } from "../examples/workspace.js";
import {
  decideToolCall,
  emptyToolGuardState,
  type ResolvedToolGuardOptions,
  reduceToolGuard,
  resolveToolGuardOptions,
  type ToolCallDecision,
  type ToolCallInput,
} from "../src/core/index.js";
import { createFileTools } from "../src/fs/index.js";
import { GuardedToolNode, GuardMessagesState, type ToolGuardState } from "../src/index.js";
import { guardMiddleware } from "../src/middleware/index.js";
import { outcomeEvents } from "../src/tool-calls/core/plan.js";
import { rng } from "../test/support/random.js";
import { agentRecursionLimit, moduleText, readFileInput, readFileModel, readPath } from "./agent-script.js";
import { argument, countArgument, type Figure, fmtMs, median, quick, report, verdictText } from "./report.js";

const TURNS = quick ? 30 : 150;
/** The `read_file` the agents run: the pack's (`fs`, default) or the examples' in-memory one (`workspace`). */
const TOOL = argument("--tool") ?? "fs";
if (TOOL !== "fs" && TOOL !== "workspace") throw new Error(`--tool takes fs or workspace, got ${TOOL}`);
/**
 * `--cpu`: time a run by the process's CPU time (user + system) instead of the clock: on a machine shared with other
 * work much steadier, for comparing changes; the default (the clock) is what a user sees.
 */
const CPU_TIME = process.argv.includes("--cpu");
/** The first runs of the process (compiling), discarded. */
const WARMUP_RUNS = countArgument("--warmup", quick ? 1 : 3);
const MEASURED_RUNS = Math.max(1, countArgument("--runs", quick ? 3 : 9));
/** The goals of the agents' ratios: GuardedToolNode / ToolNode, guardMiddleware() / toolCallLimitMiddleware. */
const NODE_GOAL = 1.1;
const MIDDLEWARE_GOAL = 1.1;
const FINAL_ANSWER = `All ${TURNS} modules are read.`;

const DECISION_ITERATIONS = quick ? 2_000 : 20_000;
const REPEATS = quick ? 3 : 7;
/** The default window (what users run) and a very large one: a decision must cost the same in both. */
const WINDOWS = [resolveToolGuardOptions().windowSize, quick ? 1_000 : 10_000] as const;
const WINDOW_GOAL = 2;

/** Progress goes to stderr, so stdout holds only the report. */
function progress(text: string): void {
  process.stderr.write(`... ${text}\n`);
}

class BenchFailure extends Error {
  override readonly name = "BenchFailure";
}

// ---------------------------------------------------------------------------------------------------------------
// Statistics and formatting
// ---------------------------------------------------------------------------------------------------------------

interface Summary {
  median: number;
  min: number;
  max: number;
}

function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  return { median: median(sorted), min: sorted[0]!, max: sorted[sorted.length - 1]! };
}

function formatNs(ns: number): string {
  if (ns < 1_000) return `${ns.toFixed(0)} ns`;
  if (ns < 1_000_000) return `${(ns / 1_000).toFixed(2)} µs`;
  return `${(ns / 1_000_000).toFixed(2)} ms`;
}

function formatMs(ms: number): string {
  return `${ms.toFixed(1)} ms`;
}

function formatRatio(ratio: number): string {
  return `${ratio.toFixed(3)}x`;
}

// ---------------------------------------------------------------------------------------------------------------
// 1. Whole agent runs, interleaved: the node in createReactAgent, the middleware in createAgent
// ---------------------------------------------------------------------------------------------------------------

/**
 * The node's variants in createReactAgent; `plainDefault`: a plain ToolNode in createReactAgent's default state
 * (`messages`, `structuredResponse`).
 */
type NodeVariant = "guarded" | "plain" | "plainDefault";
/**
 * The middleware's variants in createAgent: `guardMiddleware()` (learns the tools from the first model request),
 * `guardMiddleware({ agentTools })`, `toolCallLimitMiddleware` (never reached), none.
 */
type MiddlewareVariant = "guardLearning" | "guardMiddleware" | "toolCallLimit" | "noMiddleware";

/** toolCallLimitMiddleware's limit: far above the script's calls, so that it only counts them. */
const LIMIT_NEVER_REACHED = 1_000_000;

interface RunResult {
  ms: number;
  messages: BaseMessage[];
  toolGuard?: ToolGuardState | undefined;
}

const INPUT = readFileInput(TURNS);

/** The sample project the script reads: a README and `TURNS` small modules. */
function projectFiles(): Map<string, string> {
  const files = new Map([["README.md", `# Sample project\n\n${TURNS / 5} packages of five modules each.\n`]]);
  for (let i = 0; i < TURNS; i += 1) files.set(readPath(i), moduleText(i));
  return files;
}

/** The project on disk, for the pack's file tools (written once; removed when the bench ends). */
let projectRoot: string | undefined;

function projectOnDisk(): string {
  if (projectRoot !== undefined) return projectRoot;
  const root = mkdtempSync(join(tmpdir(), "lgg-overhead-"));
  for (const [path, text] of projectFiles()) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  projectRoot = root;
  return root;
}

/** A user's tools: every tool `createFileTools` makes (or the examples' five), the script calling `read_file`. */
function userTools() {
  if (TOOL === "fs") return createFileTools({ root: projectOnDisk() });
  const files = sampleProject();
  for (const [path, text] of projectFiles()) files.set(path, text);
  return createWorkspaceTools(files);
}

/** What every run gets new: the tools, the scripted model, the config (its own thread). */
function runSetup(thread: string) {
  return {
    tools: userTools(),
    llm: readFileModel(TURNS, FINAL_ANSWER),
    config: { recursionLimit: agentRecursionLimit(TURNS), configurable: { thread_id: thread } },
  };
}

/** The process's CPU time so far (user + system), in ms. */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** One invoke, timed (by the clock, or by CPU time with `--cpu`). */
async function timed(
  invoke: () => Promise<{ messages: BaseMessage[]; toolGuard?: ToolGuardState | undefined }>,
): Promise<RunResult> {
  const start = CPU_TIME ? cpuMs() : performance.now();
  const state = await invoke();
  const ms = (CPU_TIME ? cpuMs() : performance.now()) - start;
  return { ms, messages: state.messages, toolGuard: state.toolGuard };
}

function runNode(variant: NodeVariant, run: number): Promise<RunResult> {
  const { tools, llm, config } = runSetup(`${variant}-${run}`);
  if (variant === "guarded") {
    const agent = createReactAgent({ llm, tools: new GuardedToolNode(tools), stateSchema: GuardMessagesState });
    return timed(() => agent.invoke(INPUT, config));
  }
  // The same state as the guarded run, unless the variant is the default state's.
  const agent =
    variant === "plain"
      ? createReactAgent({ llm, tools: new ToolNode(tools), stateSchema: GuardMessagesState })
      : createReactAgent({ llm, tools: new ToolNode(tools) });
  return timed(() => agent.invoke(INPUT, config));
}

function runMiddleware(variant: MiddlewareVariant, run: number): Promise<RunResult> {
  const { tools, llm: model, config } = runSetup(`${variant}-${run}`);
  if (variant === "guardMiddleware" || variant === "guardLearning") {
    const guard = variant === "guardMiddleware" ? guardMiddleware({ agentTools: tools }) : guardMiddleware();
    const agent = createAgent({ model, tools, middleware: [guard] });
    return timed(() => agent.invoke(INPUT, config));
  }
  if (variant === "toolCallLimit") {
    const agent = createAgent({
      model,
      tools,
      middleware: [toolCallLimitMiddleware({ threadLimit: LIMIT_NEVER_REACHED })],
    });
    return timed(() => agent.invoke(INPUT, config));
  }
  const agent = createAgent({ model, tools });
  return timed(() => agent.invoke(INPUT, config));
}

/** Every variant must run the same tools successfully; a guarded one must allow all of them. */
function checkRun(where: string, result: RunResult, guarded: boolean): void {
  if (guarded) {
    const stats = result.toolGuard?.stats;
    if (stats === undefined) throw new BenchFailure(`${where}: no toolGuard state in the result`);
    const blocked = Object.values(stats.blocked).reduce((a, b) => a + (b ?? 0), 0);
    const observed = Object.values(stats.observed).reduce((a, b) => a + (b ?? 0), 0);
    if (stats.allowed !== TURNS || blocked !== 0 || observed !== 0) {
      throw new BenchFailure(
        `${where}: expected ${TURNS} allowed and 0 blocked, got toolGuard.stats = ${JSON.stringify(stats)}`,
      );
    }
  }
  const toolMessages = result.messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m));
  if (toolMessages.length !== TURNS) {
    throw new BenchFailure(`${where}: expected ${TURNS} tool messages, got ${toolMessages.length}`);
  }
  const failed = toolMessages.filter((m) => m.status === "error" || !String(m.content).includes("VALUE_"));
  if (failed.length > 0) {
    const first = failed[0]!;
    throw new BenchFailure(`${where}: ${failed.length} reads failed; first (${first.name}): ${first.content}`);
  }
  const last = result.messages[result.messages.length - 1];
  if (last?.content !== FINAL_ANSWER) throw new BenchFailure(`${where}: the run did not end with the final answer`);
}

/** Each variant's measured times. */
type Timings<V extends string> = Record<V, number[]>;

/** The variants' runs interleaved, the order rotating, so that machine noise hits them alike. */
async function interleave<V extends string>(
  variants: readonly V[],
  runOne: (variant: V, run: number) => Promise<RunResult>,
  guarded: (variant: V) => boolean,
): Promise<Timings<V>> {
  const timings = {} as Timings<V>;
  for (const v of variants) timings[v] = [];
  for (let run = 0; run < WARMUP_RUNS + MEASURED_RUNS; run += 1) {
    for (let i = 0; i < variants.length; i += 1) {
      const variant = variants[(run + i) % variants.length]!;
      const result = await runOne(variant, run);
      checkRun(`${variant} run #${run}`, result, guarded(variant));
      if (run >= WARMUP_RUNS) timings[variant].push(result.ms);
    }
  }
  return timings;
}

/** A subject against its anchor, over the same interleaved runs. */
interface Comparison {
  subject: Summary;
  anchor: Summary;
  /** Ratio of the medians. */
  ratio: number;
  /** Subject/anchor of each interleaved pair. */
  pairRatios: Summary;
  /** 95% interval of the ratio of the medians (bootstrap over the pairs). */
  interval: [low: number, high: number];
}

const BOOTSTRAP_RESAMPLES = 2_000;

/**
 * A 95% interval of median(subject) / median(anchor): the pairs resampled with replacement (seeded, so a run prints
 * the same interval for the same times). How far the ratio moves with which runs the machine's noise hit.
 */
function ratioInterval(subject: readonly number[], anchor: readonly number[]): [number, number] {
  const next = rng(19);
  const ratios: number[] = [];
  for (let b = 0; b < BOOTSTRAP_RESAMPLES; b += 1) {
    const s: number[] = [];
    const a: number[] = [];
    for (let i = 0; i < subject.length; i += 1) {
      const pick = Math.floor(next() * subject.length);
      s.push(subject[pick]!);
      a.push(anchor[pick]!);
    }
    ratios.push(median(s) / median(a));
  }
  ratios.sort((x, y) => x - y);
  return [ratios[Math.floor(0.025 * BOOTSTRAP_RESAMPLES)]!, ratios[Math.ceil(0.975 * BOOTSTRAP_RESAMPLES) - 1]!];
}

function compare<V extends string>(timings: Timings<V>, subject: V, anchor: V): Comparison {
  const s = timings[subject];
  const a = timings[anchor];
  return {
    subject: summarize(s),
    anchor: summarize(a),
    ratio: median(s) / median(a),
    pairRatios: summarize(s.map((ms, i) => ms / a[i]!)),
    interval: ratioInterval(s, a),
  };
}

interface NodeFigures {
  /** GuardedToolNode against ToolNode, both in `GuardMessagesState`. */
  node: Comparison;
  /** The plain ToolNode in createReactAgent's default state, and median(guarded) / its median. */
  plainDefault: { summary: Summary; ratio: number };
}

async function benchNode(): Promise<NodeFigures> {
  const variants: NodeVariant[] = ["guarded", "plain", "plainDefault"];
  const timings = await interleave(variants, runNode, (v) => v === "guarded");
  const node = compare(timings, "guarded", "plain");
  const plainDefault = summarize(timings.plainDefault);
  return { node, plainDefault: { summary: plainDefault, ratio: node.subject.median / plainDefault.median } };
}

interface MiddlewareFigures {
  /** guardMiddleware() (learns the tools from the first request) against toolCallLimitMiddleware. */
  learning: Comparison;
  /** guardMiddleware({ agentTools }) against toolCallLimitMiddleware. */
  middleware: Comparison;
  /** createAgent without middleware, for context. */
  none: Summary;
}

async function benchMiddleware(): Promise<MiddlewareFigures> {
  const variants: MiddlewareVariant[] = ["guardLearning", "guardMiddleware", "toolCallLimit", "noMiddleware"];
  const timings = await interleave(variants, runMiddleware, (v) => v === "guardMiddleware" || v === "guardLearning");
  return {
    learning: compare(timings, "guardLearning", "toolCallLimit"),
    middleware: compare(timings, "guardMiddleware", "toolCallLimit"),
    none: summarize(timings.noMiddleware),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// 3. One decision and one reduction against a full window
// ---------------------------------------------------------------------------------------------------------------

/** A write recorded `repetitionThreshold` times in the window (never last): one more is blocked. */
const HOT_CALL: ToolCallInput = { name: "write_to_file", args: { path: "hot.py", content: "x = 1\n" }, id: "hot" };

function fillerCall(j: number): ToolCallInput {
  return j % 2 === 0
    ? { name: "read_file", args: { path: `src/file_${j}.py` }, id: `fill_${j}` }
    : { name: "write_to_file", args: { path: `out/file_${j}.py`, content: `v = ${j}\n` }, id: `fill_${j}` };
}

/**
 * Records `windowSize` allowed calls (with their results), `repetitionThreshold` of them `HOT_CALL` (spread out, each
 * with the same result), the last one a filler: the next `HOT_CALL` is the threshold rule's to block.
 */
function fullState(options: ResolvedToolGuardOptions): ToolGuardState {
  const size = options.windowSize;
  const n = options.repetitionThreshold;
  const hot = new Set(Array.from({ length: n }, (_, i) => Math.floor(((i + 1) * (size - 1)) / (n + 1))));
  if (hot.size !== n) throw new BenchFailure(`setup: a window of ${size} cannot hold ${n} spread-out repeats`);
  let state = emptyToolGuardState();
  for (let j = 0; j < size; j += 1) {
    const call = hot.has(j) ? HOT_CALL : fillerCall(j);
    const decision = decideToolCall(state, call, options);
    if (!decision.allowed) throw new BenchFailure(`setup: recording ${j} of ${size} was blocked (${decision.rule})`);
    const text = hot.has(j) ? "Wrote 6 characters to hot.py" : `result of call ${j}`;
    const outcome = outcomeEvents(decision, { ok: true, text }, options);
    state = reduceToolGuard(state, [...decision.events, ...outcome]);
  }
  if (state.repetition.window.length !== size) {
    throw new BenchFailure(`setup: window holds ${state.repetition.window.length} calls, expected ${size}`);
  }
  return state;
}

/** Median, min and max ns per operation over `REPEATS` timed repeats of `iterations` calls (after one warm-up). */
function timePerOp(iterations: number, body: (i: number) => number): Summary {
  let sink = 0;
  const perOp: number[] = [];
  for (let repeat = 0; repeat <= REPEATS; repeat += 1) {
    const start = performance.now();
    for (let i = 0; i < iterations; i += 1) sink += body(i);
    const elapsed = performance.now() - start;
    if (repeat > 0) perOp.push((elapsed * 1e6) / iterations);
  }
  if (sink < 0) console.log(sink); // keeps the results alive
  return summarize(perOp);
}

/** Iterations so that one repeat takes about `targetMs` (for operations whose cost is not known in advance). */
function calibrate(body: (i: number) => number, targetMs: number, max: number): number {
  let iterations = 1;
  for (;;) {
    const start = performance.now();
    for (let i = 0; i < iterations; i += 1) body(i);
    const elapsed = performance.now() - start;
    if (elapsed >= 20 || iterations >= max) {
      return Math.max(5, Math.min(max, Math.ceil((targetMs * iterations) / Math.max(elapsed, 1e-3))));
    }
    iterations *= 2;
  }
}

interface WindowFigures {
  windowSize: number;
  setupMs: number;
  allowed: Summary;
  blocked: Summary;
  reduceCall: Summary;
  reduceCallAndResult: Summary;
  reduceIterations: number;
}

function benchWindow(windowSize: number, newCalls: readonly ToolCallInput[]): WindowFigures {
  const options = resolveToolGuardOptions({ windowSize });
  progress(
    `building the window ${windowSize.toLocaleString("en-US")} state (${windowSize.toLocaleString("en-US")} recordings)`,
  );
  const setupStart = performance.now();
  const state = fullState(options);
  const setupMs = performance.now() - setupStart;

  for (const call of newCalls) {
    const decision = decideToolCall(state, call, options);
    if (!decision.allowed || decision.rule !== undefined) {
      throw new BenchFailure(`window ${windowSize}: the new call ${JSON.stringify(call.args)} was not simply allowed`);
    }
  }
  const hot = decideToolCall(state, HOT_CALL, options);
  if (hot.allowed || hot.rule !== "threshold" || hot.count !== options.repetitionThreshold + 1) {
    throw new BenchFailure(
      `window ${windowSize}: the repeated call was not blocked by the threshold rule (${hot.rule}, ${hot.count})`,
    );
  }

  const allowed = timePerOp(DECISION_ITERATIONS, (i) =>
    decideToolCall(state, newCalls[i % newCalls.length]!, options).allowed ? 1 : 0,
  );
  const blocked = timePerOp(DECISION_ITERATIONS, () => (decideToolCall(state, HOT_CALL, options).allowed ? 0 : 1));

  // What the node writes for one allowed call: the decision's events, then the outcome's.
  const decision: ToolCallDecision = decideToolCall(state, newCalls[0]!, options);
  const outcome = outcomeEvents(decision, { ok: true, text: "new result" }, options);
  const both = [...decision.events, ...outcome];
  const reduceCall = (): number => reduceToolGuard(state, decision.events).repetition.window.length;
  const reduceBoth = (): number => reduceToolGuard(state, both).repetition.window.length;
  if (reduceCall() !== windowSize || reduceBoth() !== windowSize) {
    throw new BenchFailure(`window ${windowSize}: reducing one call did not keep the window full`);
  }
  const reduceIterations = calibrate(reduceBoth, 100, DECISION_ITERATIONS);
  return {
    windowSize,
    setupMs,
    allowed,
    blocked,
    reduceCall: timePerOp(reduceIterations, reduceCall),
    reduceCallAndResult: timePerOp(reduceIterations, reduceBoth),
    reduceIterations,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// 4. Report
// ---------------------------------------------------------------------------------------------------------------

type Row = [measure: string, median: string, min: string, max: string, goal: string, verdict: string];

function goalVerdict(ratio: number, goal: number): string {
  return verdictText(ratio <= goal);
}

function printTable(rows: readonly Row[]): void {
  const header: Row = ["Measure", "Median", "Min", "Max", "Goal", "Result"];
  const all = [header, ...rows];
  const widths = header.map((_, c) => Math.max(...all.map((row) => row[c]!.length)));
  const line = (row: Row): string =>
    row
      .map((cell, c) => (c === 0 || c >= 4 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!)))
      .join("   ")
      .trimEnd();
  const rule = "-".repeat(line(header).length);
  console.log(line(header));
  console.log(rule);
  for (const row of rows) console.log(row[0] === "" ? "" : line(row));
  console.log(rule);
}

/** One row per window size, then the ratio large / default, judged against `goal` when there is one. */
function windowRows(
  label: string,
  pick: (w: WindowFigures) => Summary,
  figures: readonly WindowFigures[],
  goal?: number,
): Row[] {
  const rows: Row[] = figures.map((w) => {
    const s = pick(w);
    return [
      `${label}, window ${w.windowSize.toLocaleString("en-US")}`,
      formatNs(s.median),
      formatNs(s.min),
      formatNs(s.max),
      "",
      "",
    ];
  });
  const [small, large] = figures;
  const ratio = pick(large!).median / pick(small!).median;
  rows.push([
    `${label}, ratio ${large!.windowSize.toLocaleString("en-US")} / ${small!.windowSize}`,
    formatRatio(ratio),
    "",
    "",
    goal === undefined ? "none (copies window)" : `<= ${goal}x`,
    goal === undefined ? "info" : goalVerdict(ratio, goal),
  ]);
  return rows;
}

/** A ratio against its goal, by its interval: met, missed, or `"noise"` when the interval spans the goal. */
function intervalVerdict(c: Comparison, goal: number): boolean | "noise" {
  if (c.interval[1] <= goal) return true;
  if (c.interval[0] > goal) return false;
  return "noise";
}

/** How the table and the summary name one comparison. */
interface ComparisonLabels {
  /** The runs' rows ("Agent, 150 turns, no checkpointer"). */
  runs: string;
  /** The ratios' rows ("Agent, no checkpointer"). */
  ratios: string;
  subject: string;
  anchor: string;
  /** The ratio's name ("guarded / plain"). */
  ratio: string;
  goal: number;
}

const goalText = (goal: number): string => `<= ${goal.toFixed(2)}x`;

function timeRow(measure: string, s: Summary): Row {
  return [measure, formatMs(s.median), formatMs(s.min), formatMs(s.max), "", ""];
}

/** The anchor's and the subject's runs, their ratio judged against the goal, and its interval. */
function comparisonRows(c: Comparison, l: ComparisonLabels): Row[] {
  return [
    timeRow(`${l.runs}: ${l.anchor}`, c.anchor),
    timeRow(`${l.runs}: ${l.subject}`, c.subject),
    [
      `${l.ratios}: ${l.ratio} (min/max: per pair)`,
      formatRatio(c.ratio),
      formatRatio(c.pairRatios.min),
      formatRatio(c.pairRatios.max),
      goalText(l.goal),
      quick ? "not judged (quick)" : verdictText(intervalVerdict(c, l.goal)),
    ],
    [
      `${l.ratios}: ${l.ratio}, 95% interval (bootstrap)`,
      "",
      formatRatio(c.interval[0]),
      formatRatio(c.interval[1]),
      "",
      "",
    ],
  ];
}

/** The comparison's headline figures for the summary: its ratio against the goal, and its cost per turn. */
function comparisonFigures(c: Comparison, l: ComparisonLabels, figure: string): Figure[] {
  return [
    {
      bench: "overhead",
      figure,
      ours: fmtMs(c.subject.median),
      anchor: `${fmtMs(c.anchor.median)} ${l.anchor}`,
      ratio: `${formatRatio(c.ratio)} (95%: ${c.interval[0].toFixed(3)}-${c.interval[1].toFixed(3)})`,
      goal: goalText(l.goal),
      met: intervalVerdict(c, l.goal),
    },
    {
      bench: "overhead",
      figure: `the same, cost per turn`,
      ours: fmtMs((c.subject.median - c.anchor.median) / TURNS),
      anchor: `${fmtMs(c.anchor.median / TURNS)} a turn with ${l.anchor}`,
      ratio: "",
      goal: "",
      met: null,
    },
  ];
}

/** How the tables name the runs: turns, tool, no checkpointer. */
const RUNS = `${TURNS} read_file turns (${TOOL === "fs" ? "createFileTools" : "in-memory"}), no checkpointer`;

const NODE_LABELS: ComparisonLabels = {
  runs: `createReactAgent, ${RUNS}`,
  ratios: "createReactAgent",
  subject: "GuardedToolNode",
  anchor: "plain ToolNode, same state",
  ratio: "GuardedToolNode / ToolNode",
  goal: NODE_GOAL,
};

const MIDDLEWARE_LABELS: ComparisonLabels = {
  runs: `createAgent, ${RUNS}`,
  ratios: "createAgent",
  subject: "guardMiddleware()",
  anchor: "toolCallLimitMiddleware",
  ratio: "guardMiddleware() / toolCallLimitMiddleware",
  goal: MIDDLEWARE_GOAL,
};

function nodeRows(figures: NodeFigures): Row[] {
  const plainDefault = figures.plainDefault;
  return [
    ...comparisonRows(figures.node, NODE_LABELS),
    timeRow(`${NODE_LABELS.runs}: plain ToolNode, createReactAgent's default state`, plainDefault.summary),
    [
      "createReactAgent: GuardedToolNode / ToolNode in the default state (the switch a user makes)",
      formatRatio(plainDefault.ratio),
      "",
      "",
      "",
      "info",
    ],
  ];
}

function middlewareRows(figures: MiddlewareFigures): Row[] {
  const { learning, middleware: given, none } = figures;
  const l = MIDDLEWARE_LABELS;
  return [
    ...comparisonRows(learning, l),
    timeRow(`${l.runs}: guardMiddleware({ agentTools })`, given.subject),
    [
      `${l.ratios}: guardMiddleware({ agentTools }) / toolCallLimitMiddleware`,
      formatRatio(given.ratio),
      formatRatio(given.interval[0]),
      formatRatio(given.interval[1]),
      goalText(l.goal),
      quick ? "not judged (quick)" : verdictText(intervalVerdict(given, l.goal)),
    ],
    timeRow(`${l.runs}: no middleware`, none),
    [
      `${l.ratios}: guardMiddleware() / none, toolCallLimitMiddleware / none`,
      `${formatRatio(learning.subject.median / none.median)}, ${formatRatio(learning.anchor.median / none.median)}`,
      "",
      "",
      "",
      "info",
    ],
  ];
}

async function main(): Promise<void> {
  console.log(
    `langgraph-guards overhead: node ${process.version}, ${MEASURED_RUNS} measured runs per variant ` +
      `(after ${WARMUP_RUNS} warm-up runs, discarded), ${CPU_TIME ? "CPU time" : "wall-clock time"}, ${DECISION_ITERATIONS.toLocaleString("en-US")} decisions ` +
      `x ${REPEATS} repeats\n`,
  );
  const runs = WARMUP_RUNS + MEASURED_RUNS;
  progress(`createReactAgent runs: ${runs} guarded, ${runs} plain, ${runs} in the default state, interleaved`);
  const node = await benchNode();
  progress(
    `createAgent runs: ${runs} each with guardMiddleware(), guardMiddleware({ agentTools }), ` +
      "toolCallLimitMiddleware, none",
  );
  const middleware = await benchMiddleware();

  const newCalls: ToolCallInput[] = [];
  for (let i = 0; i < DECISION_ITERATIONS; i += 1) {
    newCalls.push({ name: "read_file", args: { path: `new/file_${i}.py` }, id: `new_${i}` });
  }
  const windows = WINDOWS.map((size) => benchWindow(size, newCalls));

  const blank: Row = ["", "", "", "", "", ""];
  const rows: Row[] = [
    ...nodeRows(node),
    blank,
    ...middlewareRows(middleware),
    blank,
    ...windowRows("decideToolCall, new call (allowed)", (w) => w.allowed, windows, WINDOW_GOAL),
    blank,
    ...windowRows("decideToolCall, threshold repeat (blocked)", (w) => w.blocked, windows, WINDOW_GOAL),
    blank,
    ...windowRows("reduceToolGuard, decision's events", (w) => w.reduceCall, windows),
    blank,
    ...windowRows("reduceToolGuard, decision + outcome events", (w) => w.reduceCallAndResult, windows),
  ];
  printTable(rows);

  console.log(
    `Guarded runs (GuardedToolNode, guardMiddleware): toolGuard.stats = ${TURNS} allowed, 0 blocked, 0 observed in ` +
      `all ${runs} runs; every variant read the same ${TURNS} files without error.`,
  );
  const [small, large] = windows;
  const { learning, middleware: given, none } = middleware;
  report([
    ...comparisonFigures(node.node, NODE_LABELS, `GuardedToolNode / ToolNode, createReactAgent, same state, ${RUNS}`),
    {
      bench: "overhead",
      figure: "the switch a user makes: ToolNode in createReactAgent's default state -> GuardedToolNode",
      ours: fmtMs(node.node.subject.median),
      anchor: `${fmtMs(node.plainDefault.summary.median)} ToolNode`,
      ratio: formatRatio(node.plainDefault.ratio),
      goal: "",
      met: null,
    },
    ...comparisonFigures(
      learning,
      MIDDLEWARE_LABELS,
      `guardMiddleware() / toolCallLimitMiddleware, createAgent, ${RUNS}`,
    ),
    {
      bench: "overhead",
      figure: "guardMiddleware({ agentTools }) / toolCallLimitMiddleware, the same runs",
      ours: fmtMs(given.subject.median),
      anchor: `${fmtMs(given.anchor.median)} toolCallLimitMiddleware`,
      ratio: `${formatRatio(given.ratio)} (95%: ${given.interval.map((r) => r.toFixed(3)).join("-")})`,
      goal: goalText(MIDDLEWARE_GOAL),
      met: intervalVerdict(given, MIDDLEWARE_GOAL),
    },
    {
      bench: "overhead",
      figure: "the same agent without middleware (for context)",
      ours: "",
      anchor: `${fmtMs(none.median)} no middleware`,
      ratio: `${formatRatio(learning.subject.median / none.median)} guard, ${formatRatio(learning.anchor.median / none.median)} limit`,
      goal: "",
      met: null,
    },
    {
      bench: "overhead",
      figure: `decideToolCall (allowed), window ${large!.windowSize.toLocaleString("en-US")} vs ${small!.windowSize}`,
      ours: formatNs(large!.allowed.median),
      anchor: `${formatNs(small!.allowed.median)} window ${small!.windowSize}`,
      ratio: formatRatio(large!.allowed.median / small!.allowed.median),
      goal: `<= ${WINDOW_GOAL}x`,
      met: large!.allowed.median / small!.allowed.median <= WINDOW_GOAL,
    },
  ]);
  for (const w of windows) {
    console.log(
      `Window ${w.windowSize.toLocaleString("en-US")}: state built from ${w.windowSize.toLocaleString("en-US")} recordings ` +
        `in ${formatMs(w.setupMs)}; reducer timed over ${w.reduceIterations.toLocaleString("en-US")} iterations x ${REPEATS}.`,
    );
  }
}

try {
  await main();
} catch (error) {
  console.error(error instanceof BenchFailure ? `\nBENCHMARK FAILED: ${error.message}` : error);
  process.exitCode = 1;
} finally {
  if (projectRoot !== undefined) rmSync(projectRoot, { recursive: true, force: true });
}
