/**
 * Where the tool node's time goes, measured inside the agent: `npm run bench:parts [-- --quick]` (also part of
 * `npm run bench`). The same 150-turn scripted createReactAgent as `bench:overhead` (`bench/agent-script.ts`); the
 * real `GuardedToolNode` is subclassed only to time `planCalls` before each run (reading the turn and planning the
 * response, as the run then does) and the real `reduceToolGuard` is timed through the state's `toolGuard` channel.
 * In every turn the plan is also made a second time, right after the first: what the same work costs once the CPU's
 * caches hold it, against the first time in a turn, after LangGraph's own work. The reducer is likewise applied a
 * second time, at once, to the same update.
 *
 * Then, for reference, whole runs in one state (`GuardMessagesState` and a channel of its own for the yardstick),
 * interleaved: a plain `ToolNode`, a minimal guard that does only the essential work (see `MinimalGuard`), the
 * guards' engine on a state of its own (see `ShadowGuard`), and the `GuardedToolNode`: how far the guards are from
 * the floor of any guard that keeps a window of calls in a channel, and how much of their cost is the engine's.
 *
 * Last, the engine alone (no agent around it) on a conversation of its own, its turn timed in three settings: as it
 * is (the CPU's caches warm from the turn before), after 32 MB were written (every cache cleared: what a turn meets
 * after LangGraph's and the tool's work), and after 32 MB were written and then a turn of another conversation was
 * made (other options, state and messages: the code warm again, the data still cold). It tells whether a cold turn
 * pays for the code it runs or for the data it reads.
 *
 * Prints µs a turn (medians of the runs). No timing is asserted: the process fails only if a run misbehaves (a call
 * blocked or not recorded, a tool failing) or the second plan or reduction differs from the first.
 */
import { performance } from "node:perf_hooks";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { Annotation, type LangGraphRunnableConfig, MessagesAnnotation } from "@langchain/langgraph";
import { createReactAgent, ToolNode } from "@langchain/langgraph/prebuilt";
import { createWorkspaceTools, sampleProject } from "../examples/workspace.js";
import { digest } from "../src/common/identity/signature.js";
import {
  canonicalJson,
  emptyToolGuardState,
  reduceToolGuard,
  resolveToolGuardOptions,
  type ToolGuardState,
} from "../src/core/index.js";
import { GuardedToolNode, GuardMessagesState, GuardState, type ToolGuardUpdate } from "../src/index.js";
import { applyEvents } from "../src/tool-calls/core/state.js";
import { ToolTraits } from "../src/tool-calls/traits.js";
import { GuardedTurn } from "../src/tool-calls/turn.js";
import { agentInput, agentModel, agentRecursionLimit, moduleText, readPath } from "./agent-script.js";
import { type Figure, median, quick, report } from "./report.js";

const TURNS = quick ? 30 : 150;
const WARMUP_RUNS = quick ? 1 : 3;
const MEASURED_RUNS = quick ? 3 : 15;

type Part = "plan" | "planAgain" | "reducer" | "reducerAgain";
const PARTS: Part[] = ["plan", "planAgain", "reducer", "reducerAgain"];
const spent: Record<Part, number> = { plan: 0, planAgain: 0, reducer: 0, reducerAgain: 0 };

/** The `toolGuard` channel with the real reducer, timed. */
const TimedState = Annotation.Root({
  ...MessagesAnnotation.spec,
  ...GuardState.spec,
  toolGuard: Annotation<ToolGuardState, ToolGuardUpdate>({
    reducer: (current, update) => {
      let start = performance.now();
      const next = reduceToolGuard(current, update);
      spent.reducer += performance.now() - start;
      // Again, on the same state: the same code and data, now in the CPU's caches (without taking the derived
      // indexes the first reduction handed on).
      start = performance.now();
      const again = applyEvents(current, update, false);
      spent.reducerAgain += performance.now() - start;
      if (again.repetition.nextSeq !== next.repetition.nextSeq || again.stats.allowed !== next.stats.allowed) {
        throw new Error("the second reduction of an update differs from the first");
      }
      return next;
    },
    default: emptyToolGuardState,
  }),
});

/**
 * The real node, its planning timed: before each run the turn is planned (`planCalls`, the same opening `run` makes:
 * the first time in the turn, after LangGraph's own work) and planned again at once (on warm caches); then the node
 * runs as it does.
 */
class TimedNode extends GuardedToolNode {
  protected override run(input: unknown, config: LangGraphRunnableConfig): Promise<Record<string, never>> {
    let start = performance.now();
    const plan = this.planCalls(input, config);
    spent.plan += performance.now() - start;
    start = performance.now();
    const again = this.planCalls(input, config);
    spent.planAgain += performance.now() - start;
    if (again.decisions.map((d) => d.key).join() !== plan.decisions.map((d) => d.key).join()) {
      throw new Error("the second plan of a turn differs from the first");
    }
    return super.run(input, config);
  }
}

const perTurn: Record<Part, number[]> = { plan: [], planAgain: [], reducer: [], reducerAgain: [] };
for (let run = 0; run < WARMUP_RUNS + MEASURED_RUNS; run += 1) {
  for (const part of PARTS) spent[part] = 0;
  const agent = createReactAgent({
    llm: agentModel(TURNS, "Done."),
    tools: new TimedNode(createWorkspaceTools(sampleProject())),
    stateSchema: TimedState,
  });
  const state = await agent.invoke(agentInput(TURNS), { recursionLimit: agentRecursionLimit(TURNS) });
  const stats = state.toolGuard.stats;
  const blocked = Object.values(stats.blocked).reduce((a, b) => a + b, 0);
  if (stats.allowed !== TURNS || blocked !== 0) {
    console.error(`run ${run}: expected ${TURNS} allowed and none blocked, got ${JSON.stringify(stats)}`);
    process.exit(1);
  }
  if (run >= WARMUP_RUNS) for (const part of PARTS) perTurn[part].push((spent[part] * 1000) / TURNS);
}

const us = (part: Part) => median(perTurn[part]);
const fmt = (value: number) => `${value.toFixed(1)} µs`;
const rows: [string, Part, Part | undefined][] = [
  ["reading the turn and planning it (planCalls), first in the turn", "plan", "planAgain"],
  ["the toolGuard reducer (the call and its result)", "reducer", "reducerAgain"],
];
console.log(
  `GuardedToolNode's parts in a ${TURNS}-turn scripted createReactAgent (node ${process.version}; ` +
    `medians of ${MEASURED_RUNS} runs, µs a turn)\n`,
);
for (const [what, part, again] of rows) {
  console.log(`  ${what.padEnd(68)} ${fmt(us(part)).padStart(9)}${again ? `   again at once: ${fmt(us(again))}` : ""}`);
}
const figures: Figure[] = rows.map(([what, part, again]) => ({
  bench: "parts",
  figure: `${what}, a turn`,
  ours: fmt(us(part)),
  anchor: again ? `${fmt(us(again))} again at once` : "",
  ratio: again ? `${(us(part) / us(again)).toFixed(1)}x` : "",
  goal: "",
  met: null,
}));

// ---------------------------------------------------------------------------------------------------------------
// For reference: what the essential work costs in the same agent
// ---------------------------------------------------------------------------------------------------------------

/** The state of {@link MinimalGuard}: the last `windowSize` call digests and their results' digests. */
interface MinimalWindow {
  calls: { key: string; result: string }[];
  recorded: number;
}

/** The defaults the guards resolve: the yardstick keeps a window as long and blocks at the same threshold. */
const { windowSize: minimalWindowSize, repetitionThreshold: minimalThreshold } = resolveToolGuardOptions();
const ReferenceState = Annotation.Root({
  ...GuardMessagesState.spec,
  minimal: Annotation<MinimalWindow, { key: string; result: string }[]>({
    reducer: (current, update) => {
      const calls = current.calls.slice(Math.max(0, current.calls.length + update.length - minimalWindowSize));
      calls.push(...update);
      return { calls, recorded: current.recorded + update.length };
    },
    default: () => ({ calls: [], recorded: 0 }),
  }),
});

/**
 * A guard reduced to its essential work, as a yardstick (not a guard anyone should use): each pending call's
 * digest (canonical JSON, SHA-256, as the guards make it), a scan of the window for it (the threshold rule), the
 * tools run as `GuardedToolNode` runs them, each result's digest, and the window kept in a channel through a
 * reducer. No classification, paths, redundancy, cycles, escalation, dedupe, run boundaries or stream events.
 */
class MinimalGuard extends ToolNode {
  protected override async run(input: unknown, config: LangGraphRunnableConfig): Promise<Record<string, never>> {
    const { messages, minimal } = input as { messages: AIMessage[]; minimal: MinimalWindow };
    const calls = messages[messages.length - 1]?.tool_calls ?? [];
    const keys = calls.map((call) => {
      const key = digest(`${call.name}:${canonicalJson(call.args)}`);
      const seen = minimal.calls.filter((c) => c.key === key).length;
      if (seen + 1 >= minimalThreshold) throw new Error("a call of the bench repeats");
      return key;
    });
    const outputs = await Promise.all(calls.map((call) => this.runTool(call, config, input)));
    const written = outputs.map((output, i) => {
      const message = output as ToolMessage;
      return { key: keys[i] as string, result: digest(`${message.status !== "error"}\n${message.content}`) };
    });
    return { messages: outputs, minimal: written } as never;
  }
}

/**
 * The guards' own work without the node around it: a plain `ToolNode` that opens each turn with the guards' engine
 * on a state of its own (`GuardedTurn`, as `GuardedToolNode` opens it), settles the calls' outputs (its answers are
 * the settled ones), makes the update and reduces it into that state, and writes no guard channel. Against
 * `GuardedToolNode` it tells the engine's cost (the same work, the same state) from the node's (its channel, the
 * sub-agent scope).
 */
class ShadowGuard extends ToolNode {
  readonly options = resolveToolGuardOptions();
  readonly #traits = new ToolTraits(this.options);
  state: ToolGuardState = emptyToolGuardState();

  protected override async run(input: unknown, config: LangGraphRunnableConfig): Promise<Record<string, never>> {
    const { messages } = input as { messages: AIMessage[] };
    this.#traits.learn(this.tools);
    const env = { options: this.options, context: this.#traits.context(config.configurable, input), host: config };
    const turn = GuardedTurn.open(this.state, messages, env);
    const answers = await Promise.all(
      turn.calls.map((call, i) => turn.answer(i, () => this.runTool(call, config, input))),
    );
    this.state = reduceToolGuard(this.state, turn.update().toolGuard);
    return { messages: answers } as never;
  }
}

type Reference = "plain" | "minimal" | "shadow" | "guarded";
const REFERENCES: Reference[] = ["plain", "minimal", "shadow", "guarded"];
const REFERENCE_RUNS = quick ? 3 : 30;

async function referenceRun(variant: Reference): Promise<number> {
  const tools = createWorkspaceTools(sampleProject());
  const nodes = { plain: ToolNode, minimal: MinimalGuard, shadow: ShadowGuard, guarded: GuardedToolNode };
  const node = new nodes[variant](tools);
  const agent = createReactAgent({
    llm: agentModel(TURNS, "Done."),
    tools: node,
    stateSchema: ReferenceState,
  });
  const start = performance.now();
  const state = await agent.invoke(agentInput(TURNS), { recursionLimit: agentRecursionLimit(TURNS) });
  const ms = performance.now() - start;
  const ran = state.messages.filter((m) => ToolMessage.isInstance(m) && m.status !== "error").length;
  const shadow = node instanceof ShadowGuard ? node.state.stats.allowed : 0;
  const recorded = { plain: TURNS, minimal: state.minimal.recorded, shadow, guarded: state.toolGuard.stats.allowed }[
    variant
  ];
  if (ran !== TURNS || recorded !== TURNS) {
    console.error(`${variant}: expected ${TURNS} tool calls run and recorded, got ${ran} run, ${recorded} recorded`);
    process.exit(1);
  }
  return ms;
}

const referenceMs: Record<Reference, number[]> = { plain: [], minimal: [], shadow: [], guarded: [] };
for (let run = 0; run < WARMUP_RUNS + REFERENCE_RUNS; run += 1) {
  for (let i = 0; i < REFERENCES.length; i += 1) {
    const variant = REFERENCES[(run + i) % REFERENCES.length] as Reference;
    const ms = await referenceRun(variant);
    if (run >= WARMUP_RUNS) referenceMs[variant].push(ms);
  }
}
const overTurn = (variant: Reference) => ((median(referenceMs[variant]) - median(referenceMs.plain)) * 1000) / TURNS;
const overRatio = (variant: Reference) => median(referenceMs[variant]) / median(referenceMs.plain);
console.log(
  `\nFor reference, whole runs in the same state, interleaved (medians of ${REFERENCE_RUNS} runs each; a plain ` +
    `ToolNode's turn ${fmt((median(referenceMs.plain) * 1000) / TURNS)}):\n`,
);
const references: [string, Reference][] = [
  ["a minimal guard (call digest, window scan, result digest, a reducer)", "minimal"],
  ["the guards' engine alone (a state of its own, no channel written)", "shadow"],
  ["GuardedToolNode", "guarded"],
];
for (const [what, variant] of references) {
  console.log(`  ${what.padEnd(68)} ${fmt(overTurn(variant)).padStart(9)}   ${overRatio(variant).toFixed(3)}x`);
  figures.push({
    bench: "parts",
    figure: `${what} over a plain ToolNode, a turn`,
    ours: fmt(overTurn(variant)),
    anchor: "",
    ratio: `${overRatio(variant).toFixed(3)}x`,
    goal: "",
    met: null,
  });
}

// ---------------------------------------------------------------------------------------------------------------
// The engine's turn with the CPU's caches cleared: is a cold turn's cost the code or the data?
// ---------------------------------------------------------------------------------------------------------------

/** A conversation the engine guards on its own: options, traits, state and messages of its own. */
class EngineConversation {
  readonly options = resolveToolGuardOptions();
  readonly traits = new ToolTraits(this.options);
  state: ToolGuardState = emptyToolGuardState();
  readonly messages: BaseMessage[] = [new HumanMessage("Read the modules.")];

  constructor(readonly name: string) {
    this.traits.learn(createWorkspaceTools(sampleProject()));
  }

  /** Turn `i`: a new read_file call opened, its answer settled, the update reduced; returns its ms. */
  async turn(i: number): Promise<number> {
    const id = `${this.name}-${i}`;
    this.messages.push(
      new AIMessage({ content: "", tool_calls: [{ id, name: "read_file", args: { path: readPath(i) } }] }),
    );
    const output = new ToolMessage({ tool_call_id: id, name: "read_file", content: moduleText(i) });
    const start = performance.now();
    const env = { options: this.options, context: this.traits.context({}, { messages: this.messages }), host: {} };
    const turn = GuardedTurn.open(this.state, this.messages, env);
    const answer = await turn.answer(0, () => Promise.resolve(output));
    this.state = reduceToolGuard(this.state, turn.update().toolGuard);
    const ms = performance.now() - start;
    this.messages.push(answer as ToolMessage);
    return ms;
  }
}

type Setting = "warm" | "cold" | "codeWarm";
const SETTINGS: Setting[] = ["warm", "cold", "codeWarm"];
/** 32 MB, more than the CPU's caches: writing one value in each 64-byte line clears them. */
const clearer = new Float64Array(4_000_000);

/** One run of `TURNS` engine turns in a setting: µs a turn. */
async function engineRun(setting: Setting, run: number): Promise<number> {
  const own = new EngineConversation(`a${run}`);
  // The conversation whose turns warm the code (only in that setting).
  const other = setting === "codeWarm" ? new EngineConversation(`b${run}`) : undefined;
  let ms = 0;
  for (let i = 0; i < TURNS; i += 1) {
    if (setting !== "warm") for (let j = 0; j < clearer.length; j += 8) clearer[j] = run + i;
    await other?.turn(i);
    ms += await own.turn(i);
    if (own.state.stats.allowed !== i + 1) throw new Error(`${setting}: turn ${i} was not allowed`);
  }
  return (ms * 1000) / TURNS;
}

const ENGINE_RUNS = quick ? 2 : 9;
const engineUs: Record<Setting, number[]> = { warm: [], cold: [], codeWarm: [] };
for (let run = 0; run < WARMUP_RUNS + ENGINE_RUNS; run += 1) {
  for (let i = 0; i < SETTINGS.length; i += 1) {
    const setting = SETTINGS[(run + i) % SETTINGS.length] as Setting;
    const us = await engineRun(setting, run);
    if (run >= WARMUP_RUNS) engineUs[setting].push(us);
  }
}
console.log(`\nThe engine alone, a ${TURNS}-turn conversation (medians of ${ENGINE_RUNS} runs, µs a turn):\n`);
const engineRows: [string, Setting][] = [
  ["caches warm (the turn before was the same conversation's)", "warm"],
  ["every cache cleared before the turn (32 MB written)", "cold"],
  ["cleared, then another conversation's turn (code warm, data cold)", "codeWarm"],
];
for (const [what, setting] of engineRows) {
  const us = median(engineUs[setting]);
  const ratio = us / median(engineUs.warm);
  console.log(`  ${what.padEnd(68)} ${fmt(us).padStart(9)}   ${ratio.toFixed(2)}x warm`);
  if (setting === "warm") continue;
  figures.push({
    bench: "parts",
    figure: `the engine's turn alone, ${what}`,
    ours: fmt(us),
    anchor: `${fmt(median(engineUs.warm))} warm`,
    ratio: `${ratio.toFixed(2)}x`,
    goal: "",
    met: null,
  });
}

report(figures);
