/**
 * LangGraph's step budget (`recursionLimit`) as the guards see it, so that a guarded run ends with words before
 * LangGraph throws `GraphRecursionError` (facts and measurements: notes/steps-and-wrap-up.md). An invocation's first
 * node runs at step `F`; every node of the invocation must run by step `F + recursionLimit - 2`. Each node is one
 * step: a model call, the tool node (parallel calls share it), every `beforeModel`/`afterModel` hook.
 *
 * The guards read the step and the limit from the running step's config at each model call, tool call and hook
 * right after the model, and keep what they saw of each invocation in memory (an invocation runs in one process):
 * where its first model call was, how many steps a turn takes, and how many of them run between the tools and the
 * next model call. Invocations are told apart by the abort signal LangGraph creates for each (the same for every step
 * of one invocation); without it, by thread and the estimates below. Whatever is not seen is estimated so that the
 * run ends a turn early rather than a step late.
 */
import { getConfig } from "@langchain/langgraph";
import { stepBudgetReason } from "../core/feedback-texts.js";
import type { StopReason } from "../core/loop/loop.js";

/** What a check point reads from the running step's config. */
export interface StepReading {
  /** The current step (`metadata.langgraph_step`). */
  step: number;
  /** The run's `recursionLimit`. */
  limit: number;
  /** The invocation: LangGraph's abort signal of this invocation, or the thread (and graph namespace). */
  invocation: object | string;
  /**
   * LangGraph's channel reader of the step (`__pregel_read`), when there is one: asked once per invocation, at its
   * first model call, which of langchain's limit middlewares the graph has ({@link afterAgentNodes}).
   */
  readChannels?: unknown;
}

/** What a model call may be in the budget left. */
export type ModelCallPlan =
  /** Should it call tools, the model call after it can still end the run. */
  | "normal"
  /** It must be the run's last: tools off, its answer is the final message. */
  | "final";

/** What the guards saw of one invocation. */
interface Invocation {
  /** The step of its first model call seen. */
  origin: number;
  /** The step of the last model call. */
  model: number;
  /** The step of the last tool call after it (undefined before one). */
  tools: number | undefined;
  /** Steps from one model call to the next (the longest seen), undefined before two were seen. */
  turn: number | undefined;
  /** Steps from the tools to the next model call less one (the before-model hooks; the most seen). */
  before: number | undefined;
  /** The plan of the model call at `model` (createAgent looks a middleware's hook up more than once per call). */
  plan: ModelCallPlan;
  /** The `afterAgent` nodes of other middleware counted on after the last model call ({@link afterAgentNodes}). */
  afterAgent: number;
}

/**
 * A turn's length before two model calls were seen: long (a model call, the tools and six hooks), so that the first
 * turn of a small budget never runs past it; the second model call measures the turn.
 */
const DEFAULT_TURN = 8;
/** Invocations remembered by thread (least recently used forgotten first); signals are held weakly. */
const MAX_THREADS = 10_000;

const bySignal = new WeakMap<object, Invocation>();
const byThread = new Map<string, Invocation>();

function lookup(at: StepReading): Invocation | undefined {
  return typeof at.invocation === "string" ? byThread.get(at.invocation) : bySignal.get(at.invocation);
}

function remember(at: StepReading, invocation: Invocation): void {
  if (typeof at.invocation !== "string") {
    bySignal.set(at.invocation, invocation);
    return;
  }
  byThread.delete(at.invocation);
  byThread.set(at.invocation, invocation);
  if (byThread.size > MAX_THREADS) byThread.delete(byThread.keys().next().value as string);
}

/**
 * The step reading of a run's config, or undefined outside a graph step (a direct call, a unit test).
 *
 * @example
 * ```ts
 * readSteps(getConfig())?.step; // 3
 * ```
 */
export function readSteps(config: unknown): StepReading | undefined {
  const c = config as
    | {
        recursionLimit?: unknown;
        metadata?: { langgraph_step?: unknown; thread_id?: unknown };
        configurable?: Record<string, unknown>;
      }
    | undefined;
  const step = c?.metadata?.langgraph_step;
  if (typeof step !== "number" || !Number.isFinite(step)) return undefined;
  const limit = typeof c?.recursionLimit === "number" && c.recursionLimit > 0 ? c.recursionLimit : 25;
  const signals = c?.configurable?.__pregel_abort_signals as { externalAbortSignal?: unknown } | undefined;
  const signal = signals?.externalAbortSignal;
  const invocation =
    typeof signal === "object" && signal !== null ? signal : `thread:${String(c?.configurable?.thread_id ?? "")}`;
  return { step, limit, invocation, readChannels: c?.configurable?.__pregel_read };
}

/**
 * The state channels of langchain's middleware that each add an `afterAgent` node: `toolCallLimitMiddleware`
 * (`runToolCallCount`) and `modelCallLimitMiddleware` (`runModelCallCount`), the only ones of its middleware that do.
 */
const AFTER_AGENT_CHANNELS = ["runToolCallCount", "runModelCallCount"];

/**
 * How many `afterAgent` nodes to count on: one (any middleware's), or one per limit middleware of langchain's whose
 * channel the graph has (read through the step's channel reader, LangGraph's `__pregel_read`: both have defaults, so
 * a channel that exists is read). Without the reader, one.
 */
function afterAgentNodes(read: unknown): number {
  if (typeof read !== "function") return 1;
  try {
    const values = read(AFTER_AGENT_CHANNELS, false) as Record<string, unknown> | undefined;
    return Math.max(1, AFTER_AGENT_CHANNELS.filter((name) => values !== undefined && name in values).length);
  } catch {
    return 1;
  }
}

/** The running step's config, or undefined outside a graph step. */
export function currentConfig(): unknown {
  try {
    return getConfig();
  } catch {
    return undefined;
  }
}

/** The step reading of the running step, or undefined outside a graph step. */
export function currentSteps(): StepReading | undefined {
  return readSteps(currentConfig());
}

/**
 * The budget of an invocation as seen so far: the first step (`start`), the steps a turn takes, and how many of them
 * may follow a model call within its turn (`after`: after-model hooks, and one after-agent node at the end).
 */
function budgetOf(inv: Invocation): { start: number; turn: number; after: number } {
  const turn = inv.turn ?? DEFAULT_TURN;
  // Before-model hooks unseen: as many as the turn could hold, so the start is never later than it was.
  const before = inv.before ?? Math.max(0, turn - 2);
  return { start: inv.origin - before, turn, after: Math.max(0, turn - 2 - (inv.before ?? 0)) + inv.afterAgent };
}

/**
 * The last step at which a node of an invocation that started at `start` may still run.
 *
 * @example
 * ```ts
 * lastStep(1, 25); // 24
 * ```
 */
export function lastStep(start: number, limit: number): number {
  return start + limit - 2;
}

/**
 * The plan of a model call at `step` of an invocation that started at `start`, whose turns take `turn` steps, `after`
 * of them after a model call (its after-model hooks and an after-agent node): it may call tools only if the model
 * call a turn later can still be the last, with those behind it.
 *
 * @example
 * ```ts
 * planModelCall(17, 1, 4, 3, 25); // "normal"
 * planModelCall(21, 1, 4, 3, 25); // "final"
 * ```
 */
export function planModelCall(step: number, start: number, turn: number, after: number, limit: number): ModelCallPlan {
  return step + turn + after <= lastStep(start, limit) ? "normal" : "final";
}

/**
 * Records a model call at `at` and gives its plan: it may call tools (`"normal"`) only if the model call after it,
 * a turn later, can still end the run with its after-model hooks and an after-agent node behind it. Looked up more
 * than once for one model call, it gives the same plan.
 *
 * @example
 * ```ts
 * const at = currentSteps();
 * if (at !== undefined && atModelCall(at) === "final") console.log("make this the last model call");
 * ```
 */
export function atModelCall(at: StepReading): ModelCallPlan {
  const seen = lookup(at);
  if (seen !== undefined && seen.model === at.step) return seen.plan;
  let inv: Invocation;
  if (seen === undefined || at.step < seen.model || at.step - seen.origin > at.limit) {
    const afterAgent = afterAgentNodes(at.readChannels); // the graph's nodes do not change within an invocation
    inv = {
      origin: at.step,
      model: at.step,
      tools: undefined,
      turn: undefined,
      before: undefined,
      plan: "normal",
      afterAgent,
    };
  } else {
    const gap = at.step - seen.model;
    const before = seen.tools === undefined ? seen.before : Math.max(seen.before ?? 0, at.step - seen.tools - 1);
    inv = { ...seen, model: at.step, tools: undefined, turn: Math.max(seen.turn ?? 0, gap), before };
  }
  const { start, turn, after } = budgetOf(inv);
  inv.plan = planModelCall(at.step, start, turn, after, at.limit);
  remember(at, inv);
  return inv.plan;
}

/**
 * Records a tool call at `at` (the tool node's step), so that the steps between the tools and the next model call
 * are known.
 *
 * @example
 * ```ts
 * const at = currentSteps();
 * if (at !== undefined) atToolCall(at);
 * ```
 */
export function atToolCall(at: StepReading): void {
  const seen = lookup(at);
  if (seen !== undefined && at.step > seen.model) seen.tools = at.step;
}

/**
 * For a graph hook right after the model (createReactAgent's `postModelHook`, the loop and escalation nodes):
 * records the model call one step before it and says whether the run must end now, because the next such hook,
 * a turn later, would be past the invocation's last step.
 *
 * @example
 * ```ts
 * const at = currentSteps();
 * if (at !== undefined && mustEndAtHook(at)) console.log("end the run now");
 * ```
 */
export function mustEndAtHook(at: StepReading): boolean {
  const model = { ...at, step: at.step - 1 };
  atModelCall(model);
  const inv = lookup(at) as Invocation;
  // Graph turns: the model, this hook, the tools, and whatever runs before the model (the start's estimate).
  const turn = inv.turn ?? DEFAULT_TURN;
  const start = inv.origin - (inv.before ?? Math.max(0, turn - 3));
  return at.step + turn > lastStep(start, at.limit);
}

/**
 * Whether a check point at `at` after a model call (createAgent's `afterModel`) can send the run back to the model
 * for one last call and still end in time. Without a model call seen for this invocation, no.
 *
 * @example
 * ```ts
 * const at = currentSteps();
 * const wrapUpFits = at !== undefined && fitsModelCallAfter(at);
 * ```
 */
export function fitsModelCallAfter(at: StepReading): boolean {
  const inv = lookup(at);
  if (inv === undefined || at.step < inv.model) return false;
  const { start, after } = budgetOf(inv);
  return at.step + 1 + after <= lastStep(start, at.limit);
}

/**
 * The stop reason of a run ended because the step budget would not allow another turn.
 *
 * @example
 * ```ts
 * stepsStop({ step: 21, limit: 25, invocation: "thread:t" }).kind; // "steps"
 * ```
 */
export function stepsStop(at: StepReading): StopReason {
  return { kind: "steps", value: at.step, limit: at.limit, message: stepBudgetReason(at.limit) };
}
