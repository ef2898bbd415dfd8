/**
 * Overhead of the guards, run with `npm run bench:overhead [-- --quick]` (also part of `npm run bench`).
 *
 * 1. A 150-turn scripted `createReactAgent` run, guarded (`GuardedToolNode`) against plain (`ToolNode`), both in
 *    the same state (`GuardMessagesState`), so that the ratio is the node's own cost; without a checkpointer and
 *    with `MemorySaver`, interleaved in one process (the order rotates); the first runs are discarded and the next
 *    ones reported apart (a young process costs more: see `EARLY_RUNS`). Every call is
 *    distinct, so both variants run the same tools; the guarded run must end with every call allowed and none
 *    blocked. Without a checkpointer a third variant, a plain `ToolNode` in createReactAgent's default state,
 *    measures the switch a user makes (the default state's `structuredResponse` channel is empty unless
 *    `responseFormat` is set, and LangGraph throws and catches an error each time it reads an empty channel: the
 *    default state is slower than `GuardMessagesState` by itself, which hides part of the node's cost).
 * 2. The same scripted run in langchain's `createAgent` (no checkpointer): `guardMiddleware()` against
 *    `toolCallLimitMiddleware` (a limit the run never reaches, so it only counts calls), the middleware a user would
 *    otherwise put there, in the same agent with the same model and tools; and createAgent without middleware, for
 *    context. Interleaved and warmed up as in 1; the guarded run must allow every call.
 * 3. The cost of one decision (`decideToolCall`) against a full window of the default size and of 10,000 calls,
 *    for a new call (allowed) and for a repeat the threshold rule blocks, and the cost of applying a call's events
 *    with `reduceToolGuard`. The setup follows the defaults the code resolves (`resolveToolGuardOptions`).
 *
 * The agents' ratios come with a 95% interval (bootstrap over the pairs of runs), and their goals (GuardedToolNode
 * <= 1.10x ToolNode, guardMiddleware <= 1.10x toolCallLimitMiddleware) are judged by it: met when the whole interval
 * is within the goal, missed when none of it is, "within noise" otherwise.
 *
 * Prints one table. No timing assertions: the process fails only if a guarded run misbehaves.
 */
import { performance } from "node:perf_hooks";
import { type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
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
import { GuardedToolNode, GuardMessagesState, type ToolGuardState } from "../src/index.js";
import { guardMiddleware } from "../src/middleware/index.js";
import { outcomeEvents } from "../src/tool-calls/core/plan.js";
import { rng } from "../test/support/random.js";
import { agentInput, agentModel, agentRecursionLimit } from "./agent-script.js";
import { type Figure, fmtMs, median, quick, report, verdictText } from "./report.js";

const TURNS = quick ? 30 : 150;
/** The first runs of a process (compiling), discarded. */
const COLD_RUNS = quick ? 1 : 3;
/**
 * The next runs, reported apart: in a young process the guarded/plain ratio is higher, and it settles over the first
 * 20 or so runs (about 3,000 turns): 1.11x–1.14x in runs 4–18 against 1.06x–1.08x after them, in-process.
 */
const EARLY_RUNS = quick ? 0 : 15;
/** Runs before the measured ones. */
const WARMUP_RUNS = COLD_RUNS + EARLY_RUNS;
const MEASURED_RUNS = quick ? 3 : 30;
/** The goals of the agents' ratios: GuardedToolNode / ToolNode, guardMiddleware / toolCallLimitMiddleware. */
const NODE_GOAL = 1.1;
const MIDDLEWARE_GOAL = 1.1;
const FINAL_ANSWER = `All ${TURNS} steps are done.`;

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
 * The middleware's variants in createAgent: `guardMiddleware({ agentTools })`, `guardMiddleware()` (learns the tools
 * from the first model request), `toolCallLimitMiddleware` (never reached), none.
 */
type MiddlewareVariant = "guardMiddleware" | "guardLearning" | "toolCallLimit" | "noMiddleware";
type Saver = "none" | "memory";

/** toolCallLimitMiddleware's limit: far above the script's calls, so that it only counts them. */
const LIMIT_NEVER_REACHED = 1_000_000;

/** How the report names a checkpointer setting. */
function saverLabel(saver: Saver): string {
  return saver === "none" ? "no checkpointer" : "MemorySaver";
}

interface RunResult {
  ms: number;
  messages: BaseMessage[];
  toolGuard?: ToolGuardState | undefined;
}

const INPUT = agentInput(TURNS);

/** What every run gets new: the tools, the scripted model, the config (its own thread) and the checkpointer. */
function runSetup(thread: string, saver: Saver) {
  return {
    tools: createWorkspaceTools(sampleProject()),
    llm: agentModel(TURNS, FINAL_ANSWER),
    config: { recursionLimit: agentRecursionLimit(TURNS), configurable: { thread_id: thread } },
    checkpointer: saver === "memory" ? { checkpointer: new MemorySaver() } : {},
  };
}

/** One invoke, timed. */
async function timed(
  invoke: () => Promise<{ messages: BaseMessage[]; toolGuard?: ToolGuardState | undefined }>,
): Promise<RunResult> {
  const start = performance.now();
  const state = await invoke();
  const ms = performance.now() - start;
  return { ms, messages: state.messages, toolGuard: state.toolGuard };
}

function runNode(variant: NodeVariant, saver: Saver, run: number): Promise<RunResult> {
  const { tools, llm, config, checkpointer } = runSetup(`${variant}-${run}`, saver);
  if (variant === "guarded") {
    const tool = new GuardedToolNode(tools);
    const agent = createReactAgent({ llm, tools: tool, stateSchema: GuardMessagesState, ...checkpointer });
    return timed(() => agent.invoke(INPUT, config));
  }
  // The same state as the guarded run, unless the variant is the default state's.
  const agent =
    variant === "plain"
      ? createReactAgent({ llm, tools: new ToolNode(tools), stateSchema: GuardMessagesState, ...checkpointer })
      : createReactAgent({ llm, tools: new ToolNode(tools), ...checkpointer });
  return timed(() => agent.invoke(INPUT, config));
}

function runMiddleware(variant: MiddlewareVariant, run: number): Promise<RunResult> {
  const { tools, llm: model, config } = runSetup(`${variant}-${run}`, "none");
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
  const failed = toolMessages.filter((m) => m.status === "error");
  if (failed.length > 0) {
    const first = failed[0]!;
    throw new BenchFailure(`${where}: ${failed.length} tool calls failed; first (${first.name}): ${first.content}`);
  }
  const last = result.messages[result.messages.length - 1];
  if (last?.content !== FINAL_ANSWER) throw new BenchFailure(`${where}: the run did not end with the final answer`);
}

/** Each variant's times: the measured runs, and the early ones (after the cold ones, before the measured ones). */
interface Timings<V extends string> {
  measured: Record<V, number[]>;
  early: Record<V, number[]>;
}

/** The variants' runs interleaved, the order rotating, so that machine noise hits them alike. */
async function interleave<V extends string>(
  variants: readonly V[],
  runOne: (variant: V, run: number) => Promise<RunResult>,
  guarded: (variant: V) => boolean,
): Promise<Timings<V>> {
  const timings: Timings<V> = { measured: {} as Record<V, number[]>, early: {} as Record<V, number[]> };
  for (const v of variants) {
    timings.measured[v] = [];
    timings.early[v] = [];
  }
  for (let run = 0; run < WARMUP_RUNS + MEASURED_RUNS; run += 1) {
    for (let i = 0; i < variants.length; i += 1) {
      const variant = variants[(run + i) % variants.length]!;
      const result = await runOne(variant, run);
      checkRun(`${variant} run #${run}`, result, guarded(variant));
      if (run >= WARMUP_RUNS) timings.measured[variant].push(result.ms);
      else if (run >= COLD_RUNS) timings.early[variant].push(result.ms);
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
  /** Ratio of the medians over the early runs (after the cold ones, before the measured ones), if any. */
  early?: number | undefined;
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
  const s = timings.measured[subject];
  const a = timings.measured[anchor];
  const early = timings.early;
  return {
    subject: summarize(s),
    anchor: summarize(a),
    ratio: median(s) / median(a),
    pairRatios: summarize(s.map((ms, i) => ms / a[i]!)),
    interval: ratioInterval(s, a),
    early: early[subject].length > 0 ? median(early[subject]) / median(early[anchor]) : undefined,
  };
}

interface NodeFigures {
  saver: Saver;
  /** GuardedToolNode against ToolNode, both in `GuardMessagesState`. */
  node: Comparison;
  /** The plain ToolNode in createReactAgent's default state, and median(guarded) / its median (no checkpointer). */
  plainDefault?: { summary: Summary; ratio: number } | undefined;
}

async function benchNode(saver: Saver): Promise<NodeFigures> {
  const variants: NodeVariant[] = saver === "none" ? ["guarded", "plain", "plainDefault"] : ["guarded", "plain"];
  const timings = await interleave(
    variants,
    (v, run) => runNode(v, saver, run),
    (v) => v === "guarded",
  );
  const node = compare(timings, "guarded", "plain");
  if (!variants.includes("plainDefault")) return { saver, node };
  const plainDefault = summarize(timings.measured.plainDefault);
  return { saver, node, plainDefault: { summary: plainDefault, ratio: node.subject.median / plainDefault.median } };
}

interface MiddlewareFigures {
  /** guardMiddleware (given the agent's tools) against toolCallLimitMiddleware. */
  middleware: Comparison;
  /** guardMiddleware learning the tools in a wrapModelCall (its default) against toolCallLimitMiddleware. */
  learning: Comparison;
  /** createAgent without middleware, for context. */
  none: Summary;
}

async function benchMiddleware(): Promise<MiddlewareFigures> {
  const variants: MiddlewareVariant[] = ["guardMiddleware", "guardLearning", "toolCallLimit", "noMiddleware"];
  const timings = await interleave(variants, runMiddleware, (v) => v === "guardMiddleware" || v === "guardLearning");
  return {
    middleware: compare(timings, "guardMiddleware", "toolCallLimit"),
    learning: compare(timings, "guardLearning", "toolCallLimit"),
    none: summarize(timings.measured.noMiddleware),
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

/** The anchor's and the subject's runs, their ratio judged against the goal, its interval, the young process's. */
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
    ...(c.early === undefined
      ? []
      : [
          [
            `${l.ratios}: ${l.ratio} in the process's runs ${COLD_RUNS + 1}-${WARMUP_RUNS} (young process)`,
            formatRatio(c.early),
            "",
            "",
            "",
            "info",
          ] satisfies Row,
        ]),
  ];
}

/** The comparison's headline figures for the summary: its ratio against the goal, the young process's, per turn. */
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
    ...(c.early === undefined
      ? []
      : [
          {
            bench: "overhead",
            figure: `the same in the process's runs ${COLD_RUNS + 1}-${WARMUP_RUNS} (young process)`,
            ours: "",
            anchor: "",
            ratio: formatRatio(c.early),
            goal: "",
            met: null,
          },
        ]),
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

function nodeLabels(saver: Saver): ComparisonLabels {
  const where = saverLabel(saver);
  return {
    runs: `Agent, ${TURNS} turns, ${where}`,
    ratios: `Agent, ${where}`,
    subject: "GuardedToolNode",
    anchor: "plain ToolNode, same state",
    ratio: "guarded / plain",
    goal: NODE_GOAL,
  };
}

const MIDDLEWARE_LABELS: ComparisonLabels = {
  runs: `createAgent, ${TURNS} turns, no checkpointer`,
  ratios: "createAgent, no checkpointer",
  subject: "guardMiddleware({ agentTools })",
  anchor: "toolCallLimitMiddleware",
  ratio: "guardMiddleware({ agentTools }) / toolCallLimitMiddleware",
  goal: MIDDLEWARE_GOAL,
};

function nodeRows(figures: NodeFigures): Row[] {
  const where = saverLabel(figures.saver);
  const plainDefault = figures.plainDefault;
  return [
    ...comparisonRows(figures.node, nodeLabels(figures.saver)),
    ...(plainDefault === undefined
      ? []
      : [
          timeRow(
            `Agent, ${TURNS} turns, ${where}: plain ToolNode, createReactAgent's default state`,
            plainDefault.summary,
          ),
          [
            `Agent, ${where}: guarded / plain in the default state (the switch a user makes)`,
            formatRatio(plainDefault.ratio),
            "",
            "",
            "",
            "info",
          ] satisfies Row,
        ]),
  ];
}

function middlewareRows(figures: MiddlewareFigures): Row[] {
  const { middleware: c, learning, none } = figures;
  const l = MIDDLEWARE_LABELS;
  return [
    ...comparisonRows(c, l),
    timeRow(`${l.runs}: guardMiddleware() (learns the tools from the first request)`, learning.subject),
    [
      `${l.ratios}: guardMiddleware() / toolCallLimitMiddleware`,
      formatRatio(learning.subject.median / learning.anchor.median),
      formatRatio(learning.interval[0]),
      formatRatio(learning.interval[1]),
      goalText(l.goal),
      quick ? "not judged (quick)" : verdictText(intervalVerdict(learning, l.goal)),
    ] satisfies Row,
    timeRow(`${l.runs}: no middleware`, none),
    [
      `${l.ratios}: guardMiddleware({ agentTools }) / none, toolCallLimitMiddleware / none`,
      `${formatRatio(c.subject.median / none.median)}, ${formatRatio(c.anchor.median / none.median)}`,
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
      `(after ${WARMUP_RUNS} warm-up runs: ${COLD_RUNS} discarded, ${EARLY_RUNS} reported apart), ` +
      `${DECISION_ITERATIONS.toLocaleString("en-US")} decisions x ${REPEATS} repeats\n`,
  );
  const runs = WARMUP_RUNS + MEASURED_RUNS;
  const nodes: NodeFigures[] = [];
  for (const saver of ["none", "memory"] as const) {
    progress(
      `createReactAgent runs (${saverLabel(saver)}): ${runs} guarded ` +
        `and ${runs} plain${saver === "none" ? ` (and as many in the default state)` : ""}, interleaved`,
    );
    nodes.push(await benchNode(saver));
  }
  progress(
    `createAgent runs (no checkpointer): ${runs} each with guardMiddleware({ agentTools }), guardMiddleware(), ` +
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
    ...nodes.flatMap((figures) => [...nodeRows(figures), blank]),
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
      `all ${runs} runs; every variant ran the same ${TURNS} tool calls without error.`,
  );
  const [small, large] = windows;
  const { middleware: mw, none } = middleware;
  report([
    ...nodes.flatMap((figures) => {
      const where = saverLabel(figures.saver);
      const figure = `GuardedToolNode / ToolNode, ${TURNS}-turn createReactAgent, same state, ${where}`;
      const plainDefault = figures.plainDefault;
      return [
        ...comparisonFigures(figures.node, nodeLabels(figures.saver), figure),
        ...(plainDefault === undefined
          ? []
          : [
              {
                bench: "overhead",
                figure: `the switch a user makes: ToolNode in createReactAgent's default state -> GuardedToolNode in GuardMessagesState, ${where}`,
                ours: fmtMs(figures.node.subject.median),
                anchor: `${fmtMs(plainDefault.summary.median)} ToolNode`,
                ratio: formatRatio(plainDefault.ratio),
                goal: "",
                met: null,
              },
            ]),
      ];
    }),
    ...comparisonFigures(
      mw,
      MIDDLEWARE_LABELS,
      `guardMiddleware({ agentTools }) / toolCallLimitMiddleware, ${TURNS}-turn createAgent, no checkpointer`,
    ),
    {
      bench: "overhead",
      figure: "guardMiddleware() (learns the tools from the first request) / toolCallLimitMiddleware, the same runs",
      ours: fmtMs(middleware.learning.subject.median),
      anchor: `${fmtMs(middleware.learning.anchor.median)} toolCallLimitMiddleware`,
      ratio: `${formatRatio(middleware.learning.ratio)} (95%: ${middleware.learning.interval.map((r) => r.toFixed(3)).join("-")})`,
      goal: goalText(MIDDLEWARE_GOAL),
      met: intervalVerdict(middleware.learning, MIDDLEWARE_GOAL),
    },
    {
      bench: "overhead",
      figure: "the same agent without middleware (for context)",
      ours: "",
      anchor: `${fmtMs(none.median)} no middleware`,
      ratio: `${formatRatio(mw.subject.median / none.median)} guard, ${formatRatio(mw.anchor.median / none.median)} limit`,
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
}
