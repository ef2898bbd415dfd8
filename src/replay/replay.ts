import { z } from "zod/v4";
import { distinctCallIds } from "../common/call-ids.js";
import { canonicalJson } from "../common/identity/signature.js";
import { parseOptions } from "../common/options.js";
import type { StopReason } from "../common/vocabulary.js";
import {
  answersSeen,
  emptyLoopState,
  type LoopTurn,
  resolveSafetyOptions,
  type SafetyOptions,
  stepLoopGuard,
  turnOutput,
} from "../loop/core/loop.js";
import type { CallFacts, CallOutcome, ToolCallInput } from "../tool-calls/core/call.js";
import { identifyCall } from "../tool-calls/core/detect.js";
import { sameFailureNote, unchangedNote } from "../tool-calls/core/earlier.js";
import {
  type ResolvedToolGuardOptions,
  resolveToolGuardOptions,
  type ToolGuardOptions,
} from "../tool-calls/core/options.js";
import { answerReminder, commitTurn, planTurn, type TurnPlan } from "../tool-calls/core/plan.js";
import { emptyToolGuardState, reduceToolGuard, type ToolGuardState } from "../tool-calls/core/state.js";
import { missingHookMessage, notRunAnswer, withNoteAfter } from "../tool-calls/core/texts.js";
import { shellReadPaths } from "../tool-calls/freshness.js";
import { type AgentTool, ToolTraits, type TurnContext } from "../tool-calls/traits.js";
import { type ReplayDecision, type ReplayTotals, totalsOf } from "./totals.js";

/**
 * One step of a recorded run, in the normalized form of the shared data set (other formats are read into it).
 *
 * @example
 * ```ts
 * const steps: ReplayStep[] = [
 *   { role: "user", text: "Fix the bug." },
 *   { role: "assistant", text: "", tool_calls: [{ name: "bash", args: { command: "ls" } }] },
 *   { role: "tool", name: "bash", ok: true, text: "setup.py\nsrc" },
 * ];
 * ```
 */
export type ReplayStep =
  | {
      /** A person's (or a simulated user's) message. */
      role: "user";
      /** The message's text. */
      text: string;
      /** Tools a simulated user called (their results carry `requestor: "user"`): not the agent's calls. */
      tool_calls?: ReplayToolCall[] | undefined;
    }
  | {
      /** A model response. */
      role: "assistant";
      /** The response's text. */
      text: string;
      /** The tool calls it made. */
      tool_calls?: ReplayToolCall[] | undefined;
    }
  | {
      /** A tool's result. */
      role: "tool";
      /** The tool's name. */
      name?: string | undefined;
      /** Whether the call succeeded. */
      ok: boolean;
      /** The result's text. */
      text: string;
      /** The call this result answers (results without it follow their calls in order). */
      tool_call_id?: string | undefined;
      /** Who made the call: `"user"` for a simulated user's own call (not the agent's). */
      requestor?: string | undefined;
    };

/**
 * A tool call in a recorded run.
 *
 * @example
 * ```ts
 * const call: ReplayToolCall = { name: "get_user_details", args: { user_id: "u1" } };
 * ```
 */
export interface ReplayToolCall {
  /** The tool's name. */
  name: string;
  /** The call's arguments. */
  args: unknown;
  /** The tool-call id, when recorded. */
  id?: string | undefined;
}

/**
 * A recorded agent run.
 *
 * @example
 * ```ts
 * const run: ReplayRun = { id: "run-1", steps };
 * ```
 */
export interface ReplayRun {
  /** The run's id. */
  id: string;
  /** Where the run comes from (e.g. the data set or agent that recorded it). */
  source?: string | undefined;
  /** Anything else recorded with the run. */
  meta?: Record<string, unknown> | undefined;
  /** The run's steps, in order. */
  steps: ReplayStep[];
}

/**
 * Options of {@link replayGuards}: the guard options plus the replay's own.
 *
 * @example
 * ```ts
 * replayGuards(run, { repetitionThreshold: 4, hook: false } satisfies ReplayOptions);
 * ```
 */
export interface ReplayOptions extends ToolGuardOptions {
  /**
   * Whether the agent has the escalation hook (default true). Either way a response reaching level 3 or 4 stops the
   * run, as in the live graph: with the hook a person is asked or the run ends with a message; without it the
   * `GuardedToolNode` throws `GuardEscalationError` (the stopped calls carry its message).
   */
  hook?: boolean;
  /**
   * The agent's tools, as {@link langgraph-guards/middleware!guardMiddleware}'s `agentTools` takes them: the tools
   * themselves, `{ name, metadata: { readOnlyHint } }` objects, or names. The names are offered in level-2 feedback;
   * a `readOnlyHint` says a tool only reads. Default: the tools the run calls, in order of first call, without hints.
   */
  agentTools?: readonly AgentTool[];
  /**
   * Also run the text loop detector and safety limits over the recorded assistant turns ({@link replayLoopDetector};
   * `true` for their defaults, or their options): the result's `loop` says whether and where it would have stopped
   * the run. Observes only: the guards' decisions do not depend on it. Default off.
   */
  loop?: boolean | SafetyOptions;
}

const replayOptionsSchema = z.strictObject({
  hook: z.boolean(),
  agentTools: z.array(z.union([z.string(), z.looseObject({ name: z.string() })])).optional(),
  loop: z.union([z.boolean(), z.record(z.string(), z.unknown())]).optional(),
});

/**
 * What {@link replayGuards} returns.
 *
 * @example
 * ```ts
 * const { decisions, totals, state }: ReplayResult = replayGuards(run);
 * ```
 */
export interface ReplayResult {
  /** One per agent tool call, in order. */
  decisions: ReplayDecision[];
  /** The run's totals. */
  totals: ReplayTotals;
  /** The guard state at the end (what the `toolGuard` channel would hold). */
  state: ToolGuardState;
  /** What the text loop detector would have done (only with the `loop` option). */
  loop?: ReplayLoopResult | undefined;
}

interface AgentCall {
  call: ReplayToolCall;
  step: number;
  result?: { ok: boolean; text: string } | undefined;
}

interface AgentTurn {
  step: number;
  text: string;
  calls: AgentCall[];
}

type RunEvent =
  | { kind: "turn"; turn: AgentTurn }
  | { kind: "external"; call: ReplayToolCall }
  | { kind: "user"; step: number }; // a person's message: a new run of the thread starts

/** The agent's turns (with each call's recorded result) and the calls other actors made, in order. */
function readRun(run: ReplayRun): RunEvent[] {
  const events: RunEvent[] = [];
  let pending: AgentCall[] = []; // calls still waiting for a positional result
  const byId = new Map<string, AgentCall[]>();
  for (const [i, step] of run.steps.entries()) {
    if (step.role === "assistant") {
      const calls = (step.tool_calls ?? []).map((call) => ({ call, step: i }) as AgentCall);
      for (const c of calls) {
        if (c.call.id === undefined) continue;
        const same = byId.get(c.call.id);
        if (same === undefined || same.every((d) => d.step !== i)) byId.set(c.call.id, [c]);
        else same.push(c);
      }
      pending = [...calls];
      events.push({ kind: "turn", turn: { step: i, text: step.text ?? "", calls } });
    } else if (step.role === "user") {
      events.push({ kind: "user", step: i });
      for (const call of step.tool_calls ?? []) events.push({ kind: "external", call });
      pending = [];
    } else if (step.requestor === "user") {
      // a result of the simulated user's own call
    } else {
      const target =
        step.tool_call_id !== undefined
          ? (byId.get(step.tool_call_id)?.find((c) => c.result === undefined) ?? byId.get(step.tool_call_id)?.at(-1))
          : pending.shift();
      if (target !== undefined) {
        target.result = { ok: step.ok, text: step.text };
        if (step.tool_call_id !== undefined) pending = pending.filter((c) => c !== target);
      }
    }
  }
  return events;
}

/** Ground truth of the shared data set: each agent call's waste flag, from the recorded results. */
function groundTruth(turns: AgentTurn[]): boolean[] {
  const last = new Map<string, string | undefined>();
  const flags: boolean[] = [];
  for (const turn of turns) {
    for (const c of turn.calls) {
      const signature = `${c.call.name}\u0000${canonicalJson(c.call.args)}`;
      const outcome = c.result === undefined ? undefined : `${c.result.ok}\u0000${c.result.text}`;
      flags.push(last.has(signature) && outcome !== undefined && last.get(signature) === outcome);
      last.set(signature, outcome);
    }
  }
  return flags;
}

/** A recorded agent call, its result and ground truth, for policies judged outside the guards (`npm run eval`). */
export interface RecordedCall {
  name: string;
  args: unknown;
  /** Tool name + canonical JSON arguments. */
  signature: string;
  result: { ok: boolean; text: string };
  waste: boolean;
  /** Which run of the thread the call belongs to: the number of person's messages before it. */
  run: number;
}

/** The run's agent calls with a recorded result, in order, with the ground truth ({@link ReplayDecision.waste}). */
export function recordedCalls(run: ReplayRun): RecordedCall[] {
  const events = readRun(run);
  const turns = events.flatMap((e) => (e.kind === "turn" ? [e.turn] : []));
  const waste = groundTruth(turns);
  const runOf = new Map<AgentTurn, number>();
  let runs = 0;
  for (const e of events) {
    if (e.kind === "user") runs += 1;
    else if (e.kind === "turn") runOf.set(e.turn, runs);
  }
  const calls = turns.flatMap((t) => t.calls.map((c) => ({ c, run: runOf.get(t) ?? 0 })));
  const out: RecordedCall[] = [];
  for (const [i, { c, run: segment }] of calls.entries()) {
    if (c.result === undefined) continue;
    out.push({
      name: c.call.name,
      args: c.call.args,
      signature: `${c.call.name}\u0000${canonicalJson(c.call.args)}`,
      result: c.result,
      waste: waste[i] ?? false,
      run: segment,
    });
  }
  return out;
}

/**
 * Replays a recorded run through the same core the live graph uses ({@link langgraph-guards!GuardedToolNode} and the escalation
 * hook): the agent's tool calls in order, the recorded result for each call the guards allow, the block's
 * feedback for each one they block; a call at escalation level 3 or 4 stops the run (every later call is `stop`).
 * Calls a simulated user made are changes the agent did not make: they make earlier results stale. Returns a
 * decision per agent tool call, the totals against the data set's ground truth, and the final guard state.
 *
 * @example
 * ```ts
 * import { readRuns, replayGuards } from "langgraph-guards/replay";
 *
 * const [run] = readRuns(text, { file: "run.json" }).runs;
 * const { decisions, totals } = replayGuards(run, { repetitionThreshold: 3 });
 * decisions.filter((d) => d.action !== "allow").length; // calls the guards would have saved
 * ```
 */
export function replayGuards(run: ReplayRun, options: ReplayOptions = {}): ReplayResult {
  return guardReplayer(options)(run);
}

/** {@link replayGuards} with its options checked and resolved once, for many runs. */
export function guardReplayer(options: ReplayOptions = {}): (run: ReplayRun) => ReplayResult {
  const { hook = true, agentTools, loop, ...guardOptions } = options;
  parseOptions(replayOptionsSchema, { hook, agentTools, loop }, "replayGuards");
  const resolved = resolveToolGuardOptions(guardOptions);
  return (run) => replayResolved(run, resolved, { hook, agentTools, loop });
}

function replayResolved(
  run: ReplayRun,
  resolved: ResolvedToolGuardOptions,
  { hook, agentTools, loop }: ReplayOptions & { hook: boolean },
): ReplayResult {
  const events = readRun(run);
  const turns = events.flatMap((e) => (e.kind === "turn" ? [e.turn] : []));
  const traits = new ToolTraits(resolved);
  traits.learn(agentTools ?? [...new Set(turns.flatMap((t) => t.calls.map((c) => c.call.name)))]);
  const setup: ReplaySetup = {
    resolved: traits.options,
    // A recorded run's messages are all still there (no summarization): a cached answer is too.
    ctx: { ...traits.context(undefined), clock: () => 0, answerPresent: () => true },
    hook,
    waste: groundTruth(turns),
    checksFreshness: (name) => traits.checksFreshness(name),
  };
  const replay: ReplayProgress = {
    state: emptyToolGuardState(),
    decisions: [],
    stopText: undefined,
    runMarker: undefined,
    results: new Map(),
  };
  for (const event of events) {
    if (event.kind === "user") {
      // A person's message starts a new run, as in a live thread; after a stop the person has taken over.
      replay.runMarker = `user@${event.step}`;
      if (resolved.memory.runBoundary !== "none") replay.stopText = undefined;
      continue;
    }
    if (event.kind === "external") {
      if (replay.stopText === undefined)
        replay.state = applyExternal(replay.state, event.call, setup.resolved, setup.ctx);
      continue;
    }
    if (event.turn.calls.length > 0) replayTurn(replay, event.turn, setup);
  }
  const { decisions, state } = replay;
  const totals = totalsOf(decisions, replay.stopText !== undefined);
  if (loop === undefined || loop === false) return { decisions, totals, state };
  return { decisions, totals, state, loop: replayLoopDetector(run, loop === true ? {} : loop) };
}

interface ReplaySetup {
  resolved: ResolvedToolGuardOptions;
  ctx: TurnContext & { clock: () => number };
  hook: boolean;
  waste: boolean[]; // the ground truth of each agent call, in order
  /** Whether a tool serves repeats with a freshness check (the file tools): its recorded answers stand for it. */
  checksFreshness: (tool: string) => boolean;
}

interface ReplayProgress {
  state: ToolGuardState;
  decisions: ReplayDecision[];
  /** The answer of every call since the run was stopped; `undefined` while it is not. */
  stopText: string | undefined;
  runMarker: string | undefined;
  /** The recorded result of each call that ran, by the guards' id (what the result cache serves). */
  results: Map<string, string>;
}

type DecisionFields = Omit<
  ReplayDecision,
  "index" | "step" | "toolName" | "args" | "waste" | "resultChars" | "recorded"
>;

/** Records the decision on the agent call `c`, the next one of the run. */
function record(replay: ReplayProgress, setup: ReplaySetup, c: AgentCall, d: DecisionFields): void {
  const { decisions } = replay;
  decisions.push({
    index: decisions.length,
    step: c.step,
    toolName: c.call.name,
    args: c.call.args,
    waste: setup.waste[decisions.length] ?? false,
    resultChars: c.result?.text.length ?? 0,
    recorded: c.result !== undefined,
    ...d,
  });
}

/** Replays one turn with calls: its plan, then a decision per call, or a stop of the run. */
function replayTurn(replay: ReplayProgress, turn: AgentTurn, setup: ReplaySetup): void {
  if (replay.stopText !== undefined) {
    for (const c of turn.calls) record(replay, setup, c, { action: "stop", content: replay.stopText });
    return;
  }
  // Each call gets an id (a dedupe note points at an earlier answer), distinct as in a live graph.
  const ids = distinctCallIds(turn.calls.map((c, i) => c.call.id ?? callIdOf(turn, i)));
  const inputs = turn.calls.map(({ call: c }, i) => ({
    name: c.name,
    args: c.args,
    id: ids[i] as string,
    modelId: c.id,
  }));
  const plan = planTurn(
    replay.state,
    { id: `step-${turn.step}`, text: turn.text, calls: inputs, run: replay.runMarker },
    setup.resolved,
    turnContext(turn, inputs, setup),
  );
  if (plan.stop !== undefined) {
    // The escalation hook asks a person or ends the run; without it the tool node throws.
    const { decision, strikes, level } = plan.stop;
    const stopText = setup.hook
      ? notRunAnswer(decision.call.name, strikes)
      : `GuardEscalationError: ${missingHookMessage(decision.call.name, strikes, level)}`;
    replay.stopText = stopText;
    for (const c of turn.calls) record(replay, setup, c, { action: "stop", content: stopText });
    replay.state = reduceToolGuard(replay.state, plan.stop.events);
    return;
  }
  const outcomes = plan.decisions.map((decision, i) =>
    replayCall(replay, setup, plan, decision, turn.calls[i] as AgentCall, inputs[i]?.id),
  );
  replay.state = reduceToolGuard(replay.state, commitTurn(plan, outcomes, setup.resolved));
}

/** A turn's context: a freshness-checked call or a known-file shell read answers now what it recorded then. */
function turnContext(turn: AgentTurn, inputs: readonly (ToolCallInput & { id: string })[], setup: ReplaySetup) {
  const ctx: ReplaySetup["ctx"] = {
    ...setup.ctx,
    // Asked only of a call some rule would block: the recorded answer is looked up then, not for every turn.
    answersNow: (call) => {
      if (!setup.checksFreshness(call.name) && !readsKnown(call)) return undefined;
      const result = turn.calls[inputs.findIndex((input) => input.id === call.id)]?.result;
      return result !== undefined ? [result] : undefined;
    },
  };
  return ctx;
}

/** Whether a call is a shell read whose files are known (see `shellReadPaths`): its recorded answer is its check. */
function readsKnown(call: CallFacts): boolean {
  try {
    return call.shell && shellReadPaths(call.name, call.effect) !== undefined;
  } catch {
    return false; // unreadable arguments: the rules decide
  }
}

/** Records the decision on one call (`id`: its id); returns the recorded result the agent would see, for the commit. */
function replayCall(
  replay: ReplayProgress,
  setup: ReplaySetup,
  plan: TurnPlan,
  decision: TurnPlan["decisions"][number],
  c: AgentCall,
  id: string | undefined,
): CallOutcome | undefined {
  if (decision.served !== undefined) {
    const reminder = decision.repeats?.reminder;
    const text = decision.content ?? replay.results.get(decision.served.callId) ?? "";
    record(replay, setup, c, {
      action: "cache",
      content: reminder === undefined ? text : withNoteAfter(text, reminder),
    });
    return undefined;
  }
  if (!decision.allowed) {
    record(replay, setup, c, {
      action: "block",
      rule: decision.rule,
      escalation: decision.escalation,
      reminder: decision.reminder,
      content: decision.content ?? "",
    });
    return undefined;
  }
  // Result dedupe: the recorded run's messages are all still there.
  const note =
    c.result === undefined
      ? undefined
      : unchangedNote(plan.state, { key: decision.key, tool: c.call.name, id }, c.result, setup.resolved, () => true);
  const reminder = answerReminder(decision, c.result);
  const failure = c.result === undefined ? undefined : sameFailureNote(plan.state, c.call.name, c.result);
  const text = note ?? c.result?.text ?? "";
  const content = failure === undefined ? text : withNoteAfter(text, failure);
  if (c.result !== undefined && id !== undefined) replay.results.set(id, c.result.text);
  record(replay, setup, c, {
    action: "allow",
    rule: decision.rule,
    content: reminder === undefined ? content : withNoteAfter(content, reminder),
    deduped: note !== undefined,
  });
  return c.result === undefined ? undefined : { ...c.result, deduped: note !== undefined };
}

function callIdOf(turn: AgentTurn, i: number): string {
  return `call_${turn.step}_${i}`;
}

function applyExternal(
  state: ToolGuardState,
  call: ReplayToolCall,
  options: ResolvedToolGuardOptions,
  ctx: TurnContext,
): ToolGuardState {
  const { effect } = identifyCall({ name: call.name, args: call.args }, options, ctx);
  return reduceToolGuard(state, [{ type: "external", effect }]);
}

/**
 * What {@link replayLoopDetector} found: the first stop of the loop detector and safety limits, if any.
 *
 * @example
 * ```ts
 * const { stop, turn }: ReplayLoopResult = replayLoopDetector(run);
 * ```
 */
export interface ReplayLoopResult {
  /** Why the run would have stopped (a loop, or a limit such as failures in a row), or null. */
  stop: StopReason | null;
  /** Position of the stopping assistant step in `run.steps`. */
  step?: number | undefined;
  /** Which of the run's assistant turns stopped it (1 = the first). */
  turn?: number | undefined;
  /** The run's assistant turns. */
  turns: number;
  /**
   * The agent's tool calls the recorded run made from the stopping turn to the next person's message (calls the
   * stop would have saved).
   */
  callsAfter: number;
}

/**
 * Replays a recorded run's assistant turns through the loop detector and the safety limits (`stepLoopGuard`, as
 * `loopDetectHook` runs them): each turn's output is its text plus its tool calls rendered as `defaultTurnOutput`
 * does, compared after the recorded answers it saw; a person's message starts a new session; a turn whose tool
 * results all failed counts as a failure. Recorded runs carry no timing, so the runtime limit never fires. Observes
 * only: the guards' decisions are {@link replayGuards}'s.
 *
 * @example
 * ```ts
 * const { stop, turn } = replayLoopDetector(run, { logger: { warn() {} } });
 * if (stop?.kind === "loop") console.log(`loop at turn ${turn}`);
 * ```
 */
export function replayLoopDetector(run: ReplayRun, options: SafetyOptions = {}): ReplayLoopResult {
  const resolved = resolveSafetyOptions(options);
  const events = readRun(run);
  const turns = events.flatMap((e) => (e.kind === "turn" ? [e.turn] : []));
  let state = emptyLoopState();
  let session = "none";
  let previous: LoopTurn["previous"];
  let index = 0;
  for (const [at, event] of events.entries()) {
    if (event.kind === "user") {
      session = `user@${event.step}`;
      previous = undefined; // the previous turn belongs to another session
      continue;
    }
    if (event.kind !== "turn") continue;
    const { turn } = event;
    index += 1;
    const output = turnOutput(
      turn.text,
      turn.calls.map((c) => `${c.call.name}(${canonicalJson(c.call.args)})`),
    );
    const step = stepLoopGuard(state, { output, continues: turn.calls.length > 0, previous, session }, resolved, 0);
    state = step.state;
    if (step.stop !== null) {
      const next = events.findIndex((e, i) => i > at && e.kind === "user");
      const callsAfter = events
        .slice(at, next < 0 ? undefined : next)
        .reduce((n, e) => n + (e.kind === "turn" ? e.turn.calls.length : 0), 0);
      return { stop: step.stop, step: turn.step, turn: index, turns: turns.length, callsAfter };
    }
    const results = turn.calls.flatMap((c) => (c.result === undefined ? [] : [c.result]));
    previous =
      turn.calls.length === 0
        ? undefined
        : {
            free: false,
            failed: results.length > 0 && results.every((r) => !r.ok),
            seen: answersSeen(results.map((r) => ({ ok: r.ok, text: r.text, free: false }))),
          };
  }
  return { stop: null, turns: turns.length, callsAfter: 0 };
}
