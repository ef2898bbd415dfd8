import { z } from "zod/v4";
import { normalizeResult } from "../../common/identity/normalize.js";
import { digest } from "../../common/identity/signature.js";
import { guardLoggerSchema, parseOptions } from "../../common/options.js";
import { partialRatioAtLeast, tokenSortRatioAtLeast } from "../../common/similarity/scorers.js";
import { similarityAtLeast } from "../../common/similarity/similarity.js";
import { StatefulGuard } from "../../common/stateful-guard.js";
import type { StopKind, StopReason } from "../../common/vocabulary.js";
import { STOP_REASON_TEXTS } from "./texts.js";

/**
 * A similarity scorer: two outputs → 0..1.
 *
 * @example
 * ```ts
 * const scorer: Scorer = (a, b) => (a.trim() === b.trim() ? 1 : 0);
 * ```
 */
export type Scorer = (a: string, b: string) => number;

/**
 * Token usage of a model call (LangChain's `usage_metadata`).
 *
 * @example
 * ```ts
 * const usage: TokenUsage | undefined = aiMessage.usage_metadata;
 * ```
 */
export interface TokenUsage {
  /** Tokens of the prompt. */
  input_tokens?: number;
  /** Tokens of the answer. */
  output_tokens?: number;
  /** Input plus output tokens. */
  total_tokens?: number;
}

/**
 * Price of tokens in dollars per million, or a function from one call's usage to dollars.
 *
 * @example
 * ```ts
 * const price: PriceTable = { inputPerMillion: 3, outputPerMillion: 15 };
 * ```
 */
export type PriceTable =
  | {
      /** Dollars per million input tokens. */
      inputPerMillion: number;
      /** Dollars per million output tokens. */
      outputPerMillion: number;
    }
  | ((usage: TokenUsage) => number);

/**
 * What a task has spent so far (`configurable.taskBudget`), as an agent's `loopGuard.task` keeps it for a resume.
 *
 * @example
 * ```ts
 * const spent: TaskSpending | undefined = state.loopGuard.task;
 * console.log(`${spent?.iterations ?? 0} model turns of the task so far`);
 * ```
 */
export interface TaskSpending {
  /** Model turns counted (every agent's). */
  iterations: number;
  /** Tokens. */
  tokens: number;
  /** Dollars. */
  cost: number;
  /** When the first turn was counted (ms since the epoch), or null. */
  startedAt: number | null;
}

/**
 * Plain, serialisable state of the loop detector and the safety limits (the `loopGuard` channel).
 *
 * @example
 * ```ts
 * const { iterations, tokens }: LoopState = (await graph.getState(config)).values.loopGuard;
 * ```
 */
export interface LoopState {
  /** The last outputs that were not loops, oldest first (at most `maxRecentOutputs`). */
  recentOutputs: string[];
  /** Iterations counted in this session. */
  iterations: number;
  /** When the session started (ms since the epoch), or null before its first iteration. */
  startedAt: number | null;
  /** Tokens spent in this session. */
  tokens: {
    /** Input (prompt) tokens. */
    input: number;
    /** Output tokens. */
    output: number;
    /** All tokens (the models' totals when they report one). */
    total: number;
  };
  /** Dollars spent in this session (with a price table). */
  cost: number;
  /** Failed iterations in a row. */
  consecutiveFailures: number;
  /** What marks the current session (e.g. the id of the human message that started it). */
  session: string | null;
  /** Set once a limit stopped the session. */
  stopped: StopReason | null;
  /** How much a person raised each limit in this session, when asked (`ask`). Absent: not raised. */
  raised?: Partial<Record<"iterations" | "runtime" | "tokens" | "cost", number>> | undefined;
  /** A limit reached that asks a person before the next model call (createAgent), or null. */
  asking?: StopReason | null | undefined;
  /** The agent whose counts these are (see `toolGuard.agent`); absent outside a graph. */
  agent?: string | undefined;
  /** What the task had spent at this agent's last turn (`configurable.taskBudget`): a resume goes on from it. */
  task?: TaskSpending | undefined;
}

/**
 * A fresh loop state.
 *
 * @example
 * ```ts
 * emptyLoopState().iterations; // 0
 * ```
 */
export function emptyLoopState(): LoopState {
  return {
    recentOutputs: [],
    iterations: 0,
    startedAt: null,
    tokens: { input: 0, output: 0, total: 0 },
    cost: 0,
    consecutiveFailures: 0,
    session: null,
    stopped: null,
  };
}

const positiveInt = z.number().int().min(1);

/** The options of the loop detector and the safety limits, validated when a guard is built. */
export const safetyOptionsSchema = z
  .object({
    /** Similarity at or above which an output is a loop. Default 0.9. */
    loopThreshold: z.number().min(0).max(1).default(0.9),
    /** Outputs remembered for comparison. Default 5. */
    maxRecentOutputs: positiveInt.default(5),
    /** Iterations per session. Default 100. */
    maxIterations: positiveInt.default(100),
    /** Session wall time in ms. Default 4 hours. */
    maxRuntimeMs: z
      .number()
      .positive()
      .default(4 * 60 * 60 * 1000),
    /** Dollars per session (needs `price`). No default: off. */
    maxCost: z.number().positive().optional(),
    /** Tokens per session (from `usage_metadata`). No default: off. */
    maxTokens: positiveInt.optional(),
    /** Token prices for `maxCost`. */
    price: z
      .union([
        z
          .object({
            /** Dollars per million input tokens. */
            inputPerMillion: z.number().min(0),
            /** Dollars per million output tokens. */
            outputPerMillion: z.number().min(0),
          })
          .strict(),
        z.custom<(usage: TokenUsage) => number>((v) => typeof v === "function"),
      ])
      .optional(),
    /** Failed iterations in a row. Default 5. */
    maxConsecutiveFailures: positiveInt.default(5),
    /** Outputs shorter than this (characters) are neither compared nor remembered. Default 0. */
    minOutputLength: z.number().int().min(0).default(0),
    /**
     * The similarity scorer: fuzzball's `ratio` (default), `partial_ratio` or `token_sort_ratio` (each exactly
     * fuzzball's, computed without it, and only as far as the threshold needs), or yours.
     */
    scorer: z
      .union([z.enum(["ratio", "partial_ratio", "token_sort_ratio"]), z.custom<Scorer>((v) => typeof v === "function")])
      .default("ratio"),
    /** Where warnings go (its `warn`): `console`, or anything with `warn`. Default none: the guards print nothing unless asked. */
    logger: guardLoggerSchema.optional(),
    /** The clock (ms since the epoch). Default `Date.now`. */
    clock: z.custom<() => number>((v) => typeof v === "function").optional(),
  })
  .strict()
  .refine((o) => o.maxCost === undefined || o.price !== undefined, {
    message: "maxCost needs a price table (price: { inputPerMillion, outputPerMillion } or a function)",
    path: ["price"],
  });

/**
 * Options of the safety guards, as the user writes them.
 *
 * @example
 * ```ts
 * const options: SafetyOptions = { maxIterations: 30, maxTokens: 200_000, loopThreshold: 0.9 };
 * ```
 *
 * @interface
 */
export type SafetyOptions = z.input<typeof safetyOptionsSchema>;
/**
 * Options with the defaults filled in.
 *
 * @example
 * ```ts
 * const resolved: ResolvedSafetyOptions = resolveSafetyOptions({ maxIterations: 30 });
 * ```
 *
 * @interface
 */
export type ResolvedSafetyOptions = z.output<typeof safetyOptionsSchema>;

/**
 * Validates safety options and fills in the defaults; throws `GuardOptionsError` naming each bad field.
 *
 * @example
 * ```ts
 * resolveSafetyOptions({ maxIterations: 20 }).loopThreshold; // 0.9
 * ```
 */
export function resolveSafetyOptions(options: SafetyOptions = {}): ResolvedSafetyOptions {
  return parseOptions(safetyOptionsSchema, options, "loop-detection");
}

/** The similarity of a pair that reaches `threshold`; a built-in scorer gives undefined for one that cannot. */
type ThresholdScorer = (a: string, b: string, threshold: number) => number | undefined;

const BUILT_IN: Record<"ratio" | "partial_ratio" | "token_sort_ratio", ThresholdScorer> = {
  ratio: similarityAtLeast,
  partial_ratio: partialRatioAtLeast,
  token_sort_ratio: tokenSortRatioAtLeast,
};

function scorerOf(options: ResolvedSafetyOptions): ThresholdScorer {
  const scorer = options.scorer;
  return typeof scorer === "function" ? (a, b) => scorer(a, b) : BUILT_IN[scorer];
}

/**
 * The result of {@link detectLoopIn}.
 *
 * @example
 * ```ts
 * const { loop, similarity }: LoopCheck = detectLoopIn(state, output, options);
 * ```
 */
export interface LoopCheck {
  /** Whether the output repeats a recent one (similarity at or above the threshold). */
  loop: boolean;
  /** The similarity that made it a loop. */
  similarity?: number | undefined;
  /** Which remembered output it repeats (0 = oldest). */
  index?: number | undefined;
  /** The state after the check (a loop is not added; a short or empty output is ignored). */
  state: LoopState;
}

/** Between a turn's text and its calls in `turnOutput`: the ASCII unit separator, which text does not hold. */
const CALLS = "\u001f";

/** A turn's output for the loop detector: its text, then its calls apart (new calls are progress, however alike). */
export function turnOutput(text: string, calls: readonly string[]): string {
  return calls.length === 0 ? text : `${text}${CALLS}${calls.join("\n")}`;
}

/** A turn output's text and its calls' identity (undefined for a turn without calls, or any other string). */
function splitTurn(output: string): [text: string, calls: string | undefined] {
  const at = output.indexOf(CALLS);
  return at < 0 ? [output, undefined] : [output.slice(0, at), output.slice(at + 1)];
}

/** Between a remembered turn and the answers it saw: the ASCII record separator (no `outputOf` can remove them). */
const SEEN = "\u001e";

/** A remembered turn's output and the answers it saw (`""`: none, or a checkpoint from before answers counted). */
function splitSeen(output: string): [output: string, seen: string] {
  const at = output.lastIndexOf(SEEN);
  return at < 0 ? [output, ""] : [output.slice(0, at), output.slice(at + 1)];
}

/** What a turn saw when a guard or a cache gave every answer: nothing new, so it may repeat any earlier turn. */
const NOTHING_NEW = "guard";

/** What a turn saw: its previous turn's answers, normalized (a guard's or a cache's answer is the same every time). */
export function answersSeen(results: readonly { ok: boolean; text: string; free: boolean }[]): string {
  if (results.length === 0) return "";
  if (results.every((r) => r.free)) return NOTHING_NEW;
  return digest(results.map((r) => (r.free ? NOTHING_NEW : `${r.ok}\n${normalizeResult(r.text)}`)).join(CALLS));
}

/**
 * Compares an output with the remembered ones (oldest first) before remembering it: a loop when any similarity
 * reaches `loopThreshold` (a loop is not remembered). An empty output, or one shorter than `minOutputLength`, is no
 * loop and is not remembered; a scorer error is logged and counts as no loop. With `turns` (`turnOutput`s, each
 * with the answers it saw), only outputs with the same tool calls that saw the same answers are compared, by their
 * texts.
 *
 * @example
 * ```ts
 * const options = resolveSafetyOptions();
 * let check = detectLoopIn(emptyLoopState(), "Checking the database...", options); // no loop
 * check = detectLoopIn(check.state, "Checking the database...", options);          // loop, similarity 1
 * ```
 */
export function detectLoopIn(
  state: LoopState,
  output: string | undefined,
  options: ResolvedSafetyOptions,
  turns = false,
): LoopCheck {
  if (!output) return { loop: false, state };
  const [said, seen] = turns ? splitSeen(output) : [output, ""];
  if (said === "" || said.length < options.minOutputLength) return { loop: false, state };
  const logger = options.logger;
  const scorer = scorerOf(options);
  const [text, calls] = turns ? splitTurn(said) : [said, undefined];
  try {
    for (const [index, remembered] of state.recentOutputs.entries()) {
      const [previous, previousSeen] = turns ? splitSeen(remembered) : [remembered, ""];
      const [previousText, previousCalls] = turns ? splitTurn(previous) : [previous, undefined];
      // Other calls, or the same calls after other answers: progress, whatever the text says.
      if (calls !== previousCalls || (seen !== previousSeen && seen !== NOTHING_NEW)) continue;
      const similarity = text === "" && previousText === "" ? 1 : scorer(text, previousText, options.loopThreshold);
      if (similarity !== undefined && similarity >= options.loopThreshold) {
        logger?.warn?.(`Loop detected: ${(similarity * 100).toFixed(1)}% similarity to previous output`);
        return { loop: true, similarity, index, state };
      }
    }
  } catch (error) {
    logger?.warn?.(`Error in loop detection: ${error instanceof Error ? error.message : String(error)}`);
    return { loop: false, state };
  }
  const recentOutputs = [...state.recentOutputs, output].slice(-options.maxRecentOutputs);
  return { loop: false, state: { ...state, recentOutputs } };
}

/**
 * The cost of one call's usage under a price table.
 *
 * @example
 * ```ts
 * costOf({ input_tokens: 1_000_000, output_tokens: 0 }, { inputPerMillion: 3, outputPerMillion: 15 }); // 3
 * ```
 */
export function costOf(usage: TokenUsage, price: PriceTable | undefined): number {
  if (price === undefined) return 0;
  if (typeof price === "function") return price(usage);
  return (
    ((usage.input_tokens ?? 0) * price.inputPerMillion + (usage.output_tokens ?? 0) * price.outputPerMillion) / 1e6
  );
}

/**
 * Adds one call's token usage (and its cost) to the state.
 *
 * @example
 * ```ts
 * addUsage(emptyLoopState(), { input_tokens: 10, output_tokens: 5, total_tokens: 15 }, undefined).tokens.total; // 15
 * ```
 */
export function addUsage(state: LoopState, usage: TokenUsage | undefined, price: PriceTable | undefined): LoopState {
  if (usage === undefined) return state;
  const input = usage.input_tokens ?? 0;
  const output = usage.output_tokens ?? 0;
  const total = usage.total_tokens ?? input + output;
  return {
    ...state,
    tokens: {
      input: state.tokens.input + input,
      output: state.tokens.output + output,
      total: state.tokens.total + total,
    },
    cost: state.cost + costOf(usage, price),
  };
}

/**
 * The first limit the state has reached, or null. Iterations: at most `maxIterations` per session; runtime:
 * `maxRuntimeMs` since the session started; tokens and cost: the session's totals; failures: in a row.
 *
 * @example
 * ```ts
 * checkLimits({ ...emptyLoopState(), iterations: 100 }, Date.now(), resolveSafetyOptions())?.kind; // "iterations"
 * ```
 */
export function checkLimits(state: LoopState, now: number, options: ResolvedSafetyOptions): StopReason | null {
  const elapsed = state.startedAt === null ? 0 : now - state.startedAt;
  const raised = state.raised ?? {};
  const iterations = options.maxIterations + (raised.iterations ?? 0);
  if (state.iterations >= iterations) return reached("iterations", state.iterations, iterations);
  const runtime = options.maxRuntimeMs + (raised.runtime ?? 0);
  if (state.startedAt !== null && elapsed >= runtime) return reached("runtime", elapsed, runtime);
  const tokens = options.maxTokens === undefined ? undefined : options.maxTokens + (raised.tokens ?? 0);
  if (tokens !== undefined && state.tokens.total >= tokens) return reached("tokens", state.tokens.total, tokens);
  const cost = options.maxCost === undefined ? undefined : options.maxCost + (raised.cost ?? 0);
  if (cost !== undefined && state.cost >= cost) return reached("cost", state.cost, cost);
  if (state.consecutiveFailures >= options.maxConsecutiveFailures) {
    return reached("failures", state.consecutiveFailures, options.maxConsecutiveFailures);
  }
  return null;
}

function reached(kind: Exclude<StopKind, "loop" | "steps">, value: number, limit: number): StopReason {
  return { kind, value, limit, message: STOP_REASON_TEXTS[kind](value, limit) };
}

/**
 * The loop detector (over the last `maxRecentOutputs` outputs) and the iteration, runtime, token, cost and
 * failures-in-a-row limits as a class, over the same functions the loop node uses.
 *
 * @example
 * ```ts
 * const guard = new SafetyGuard({ loopThreshold: 0.9 });
 * guard.detectLoop("Checking the database for user information..."); // false
 * guard.detectLoop("Checking the database for user information..."); // true
 * ```
 */
export class SafetyGuard extends StatefulGuard<LoopState> {
  /** The options with every default filled in. */
  readonly options: ResolvedSafetyOptions;

  constructor(options: SafetyOptions = {}, state: LoopState = emptyLoopState()) {
    super(state, emptyLoopState);
    this.options = resolveSafetyOptions(options);
  }

  /** Whether `output` repeats a remembered output (then it is not remembered); otherwise it is remembered. */
  detectLoop(output: string | undefined): boolean {
    const check = detectLoopIn(this.state, output, this.options);
    this.state = check.state;
    return check.loop;
  }

  /** Counts one iteration (starting the runtime clock on the first). */
  recordIteration(now = Date.now()): void {
    this.state = { ...this.state, iterations: this.state.iterations + 1, startedAt: this.state.startedAt ?? now };
  }

  /** Adds a model call's token usage (and cost, with a price table). */
  recordUsage(usage: TokenUsage | undefined): void {
    this.state = addUsage(this.state, usage, this.options.price);
  }

  /** Records whether an iteration failed (failures in a row are limited). */
  recordOutcome(success: boolean): void {
    this.state = { ...this.state, consecutiveFailures: success ? 0 : this.state.consecutiveFailures + 1 };
  }

  /** The first limit reached, or null. */
  checkLimits(now = Date.now()): StopReason | null {
    return checkLimits(this.state, now, this.options);
  }

  /** The remembered outputs, oldest first. */
  get recentOutputs(): readonly string[] {
    return this.state.recentOutputs;
  }

  /** Forgets the remembered outputs (the limits' counters stay). */
  clearLoopHistory(): void {
    this.state = { ...this.state, recentOutputs: [] };
  }

  /**
   * Rebuilds a guard from {@link SafetyGuard.toJSON} output (options are not serialised: pass them again).
   *
   * @example
   * ```ts
   * const copy = SafetyGuard.fromJSON(JSON.parse(json), { loopThreshold: 0.85 });
   * ```
   */
  static fromJSON(json: { state: LoopState }, options: SafetyOptions = {}): SafetyGuard {
    return new SafetyGuard(options, structuredClone(json.state));
  }
}

/**
 * One model turn as the loop guard sees it (what the graph adapters extract from the messages).
 *
 * @example
 * ```ts
 * const turn: LoopTurn = { output: "Reading a.py", continues: true, session: "human-1" };
 * ```
 */
export interface LoopTurn {
  /** The turn's output (by default the AI message's text and its tool calls rendered canonically). */
  output: string;
  /** Whether the model wants to go on (it called tools); a final answer ends the run by itself. */
  continues: boolean;
  /** The model call's token usage. */
  usage?: TokenUsage | undefined;
  /** The previous turn's tool results, when it called tools. */
  previous?:
    | {
        /** Its tool calls were all answered by a guard or a cache: the iteration is refunded. */
        free: boolean;
        /** The iteration failed (by default: every tool result was an error); counts toward the failure limit. */
        failed: boolean;
        /** A digest of its answers (normalized): a turn that saw new answers repeats no earlier one. */
        seen?: string | undefined;
      }
    | undefined;
  /** What marks the session this turn belongs to; a new marker starts a new session (everything resets). */
  session: string;
}

/** The state before a model turn is counted: a new session, the previous turn refunded if free, its failure counted. */
function turnStart(state: LoopState, turn: Pick<LoopTurn, "previous" | "session">, now: number): LoopState {
  const next = state.session === turn.session ? state : { ...emptyLoopState(), session: turn.session };
  if (next.stopped !== null) return next;
  const { previous } = turn;
  return {
    ...next,
    iterations: next.iterations - (previous?.free ? 1 : 0),
    startedAt: next.startedAt ?? now,
    consecutiveFailures:
      previous === undefined ? next.consecutiveFailures : previous.failed ? next.consecutiveFailures + 1 : 0,
  };
}

/** The iteration limit before a model turn (`maxIterations: N` runs N full turns), or null; createAgent asks here. */
export function iterationLimitBefore(
  state: LoopState,
  turn: Pick<LoopTurn, "previous" | "session">,
  options: ResolvedSafetyOptions,
  now: number = (options.clock ?? Date.now)(),
): StopReason | null {
  const start = turnStart(state, turn, now);
  if (start.stopped !== null) return null;
  const limit = options.maxIterations + (start.raised?.iterations ?? 0);
  return start.iterations >= limit ? reached("iterations", start.iterations, limit) : null;
}

/**
 * Advances the loop guard by one model turn: a new session when the marker changed; the iteration counted (the
 * previous one refunded when a guard or a cache answered all its calls); failures in a row; token usage; then, if the
 * model wants to go on, the limits and the loop. `maxIterations: N` runs N full turns and stops the (N+1)th if it
 * calls tools. Returns the new state and, when the run must stop, why.
 *
 * @example
 * ```ts
 * const options = resolveSafetyOptions({ maxIterations: 2 });
 * let step = stepLoopGuard(emptyLoopState(), { output: "a", continues: true, session: "s" }, options, 0);
 * step = stepLoopGuard(step.state, { output: "b", continues: true, session: "s" }, options, 0); // its calls run
 * step = stepLoopGuard(step.state, { output: "c", continues: true, session: "s" }, options, 0);
 * step.stop?.kind; // "iterations"
 * ```
 */
export function stepLoopGuard(
  state: LoopState,
  turn: LoopTurn,
  options: ResolvedSafetyOptions,
  now: number = (options.clock ?? Date.now)(),
): {
  /** The new state. */
  state: LoopState;
  /** Why the run must stop, or null. */
  stop: StopReason | null;
} {
  const start = turnStart(state, turn, now);
  if (start.stopped !== null) return { state: start, stop: start.stopped };
  const next = addUsage({ ...start, iterations: start.iterations + 1 }, turn.usage, options.price);
  if (!turn.continues) return { state: next, stop: null };
  // The iterations taken before this turn; the other limits with this turn's usage and time.
  const limit = checkLimits({ ...next, iterations: start.iterations }, now, options);
  if (limit !== null) return { state: { ...next, stopped: limit }, stop: limit };
  const seen = turn.previous?.seen ?? "";
  const check = detectLoopIn(next, seen === "" ? turn.output : `${turn.output}${SEEN}${seen}`, options, true);
  if (check.loop) {
    const [value, limit] = [check.similarity ?? 1, options.loopThreshold];
    const reason: StopReason = { kind: "loop", value, limit, message: STOP_REASON_TEXTS.loop(value, limit) };
    options.logger?.warn?.("Breaking loop due to repetitive agent outputs");
    return { state: { ...check.state, stopped: reason }, stop: reason };
  }
  return { state: check.state, stop: null };
}
