/** The loop guard adapters' options, validated strictly and converted to the core's flat `SafetyOptions`. */
import type { AIMessage, ToolMessage } from "@langchain/core/messages";
import { z } from "zod/v4";
import { type GuardLogger, parseOptions } from "../common/options.js";
import { isWrapUpOption, type WrapUpOption } from "../run-end/wrap-up.js";
import {
  type ResolvedSafetyOptions,
  resolveSafetyOptions,
  type SafetyOptions,
  safetyOptionsSchema,
} from "./core/loop.js";

const safety = safetyOptionsSchema.shape;
const isFunction = (v: unknown) => typeof v === "function";

const limitsShape = {
  /**
   * Full model turns per run: the Nth response's tool calls run, and a response after them that still calls tools
   * ends the run (as openai-agents' `max_turns`). A turn whose tool calls were all answered by a guard or a cache is
   * free. Default 100.
   */
  maxIterations: safety.maxIterations,
  /** Wall time of a run in ms, from its first turn. Default 4 hours. */
  maxRuntimeMs: safety.maxRuntimeMs,
  /** Dollars per run (needs `price`). Default: off. */
  maxCost: safety.maxCost,
  /** Tokens per run, from the AI messages' `usage_metadata`. Default: off. */
  maxTokens: safety.maxTokens,
  /** Token prices for `maxCost`: `{ inputPerMillion, outputPerMillion }` (dollars) or `(usage) => dollars`. */
  price: safety.price,
  /** Failed turns in a row (see `turns.isFailure`). Default 5. */
  maxConsecutiveFailures: safety.maxConsecutiveFailures,
  /**
   * Ask a person before a limit ends the run: `interrupt()` with "go on with N more?" (a checkpointer is needed;
   * without one, the limit ends the run). `true` asks for each limit set (iterations, runtime, tokens, cost), offering
   * as many more as the limit itself; `{ iterations: 10, … }` asks for the limits named, offering that many more. A
   * loop and failures in a row still end the run. Answer with `Command({ resume: true })` (go on), `{ more: n }`, or
   * anything else (end). Default: off.
   */
  ask: z
    .custom<boolean | LimitAsk>(
      (v) => typeof v === "boolean" || isLimitAsk(v),
      "expected true, false or { iterations, runtime, tokens, cost } (positive numbers)",
    )
    .optional(),
  /**
   * How the run's final message is written when the guard ends it (a loop, a limit, LangGraph's step budget):
   * `"model"` (default) one last call of the agent's own model with the tools off, asked what was done, what failed
   * and what is left (createAgent; a graph hook has no model of its own and writes the canned message); `{ model }`
   * the chat model given (without tools); `"canned"` the guard's own message. The canned message is the fallback when
   * the model call fails or still calls tools.
   */
  wrapUp: z.custom<WrapUpOption>(isWrapUpOption, 'expected "model", "canned" or { model } (a chat model)').optional(),
};

/**
 * How many more of each limit a person may grant when asked before the limit ends the run (the limit's own value
 * when not given).
 *
 * @example
 * ```ts
 * loopDetectMiddleware({ maxIterations: 30, ask: { iterations: 10 } satisfies LimitAsk });
 * ```
 */
export interface LimitAsk {
  /** More iterations. */
  iterations?: number | undefined;
  /** More milliseconds of runtime. */
  runtime?: number | undefined;
  /** More tokens. */
  tokens?: number | undefined;
  /** More dollars. */
  cost?: number | undefined;
}

function isLimitAsk(v: unknown): boolean {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  return Object.entries(v).every(
    ([k, n]) =>
      ["iterations", "runtime", "tokens", "cost"].includes(k) &&
      (n === undefined || (typeof n === "number" && Number.isFinite(n) && n > 0)),
  );
}

const turnShape = {
  /**
   * Whether a turn failed, from the ToolMessages that answered its tool calls. Default: every one is an error
   * (tool errors and guard blocks alike).
   */
  isFailure: z.custom<(results: ToolMessage[]) => boolean>(isFunction, "expected a function").optional(),
  /**
   * What starts a new run of the thread (outputs, counters, clock and spending reset), as the tool-call guards'
   * option of the same name: `"human-message"` (default) a new person's message, `"none"` nothing (the whole thread
   * is one run).
   */
  runBoundary: z.enum(["human-message", "none"]).optional(),
  /** The clock a turn's time is read from (ms since the epoch), for `maxRuntimeMs`. Default `Date.now`. */
  clock: safety.clock,
};

const eventsOption = z.boolean().optional();

/** The options of `loopDetectHook` and `loopDetectMiddleware` (and, with `routes`, of `loopDetectNode`). */
export const loopDetectOptionsSchema = z.strictObject({
  /** Similarity (0..1) at or above which a turn's output repeats a recent one: a loop. Default 0.9. */
  loopThreshold: safety.loopThreshold,
  ...limitsShape,
  /** How a turn is read and compared with the recent ones. */
  turns: z
    .strictObject({
      /** Outputs remembered for the comparison (a loop is not remembered). Default 5. */
      maxRecentOutputs: safety.maxRecentOutputs,
      /**
       * What "the output" of a turn is. Default `defaultTurnOutput`: the text plus the tool calls, canonical
       * (`(m) => m.text` compares the text alone).
       */
      outputOf: z.custom<(message: AIMessage) => string>(isFunction, "expected a function").optional(),
      /**
       * The similarity scorer: `"ratio"` (default), `"partial_ratio"` or `"token_sort_ratio"` (each exactly
       * fuzzball's scorer of that name, computed without fuzzball), or `(a, b) => 0..1`.
       */
      scorer: safety.scorer,
      /** Outputs shorter than this (characters) are neither compared nor remembered. Default 0. */
      minOutputLength: safety.minOutputLength,
      /**
       * Hand-off loops (agents passing control back and forth with nothing new between the hand-offs): `limit`
       * hand-offs in a row without progress end the run, the last one not made (default 4); `isHandoff` says which
       * tools hand off (default: a `transfer_to_<agent>` or `transfer_back_to_<agent>` whose earlier call the
       * conversation shows answered as langgraph-supervisor and langgraph-swarm answer a hand-off). `false`: not checked.
       */
      handoffs: z
        .union([
          z.literal(false),
          z.strictObject({
            /** Hand-offs in a row without progress that end the run, the last one not made. Default 4. */
            limit: z.number().int().min(2).optional(),
            /** Which tools hand off. Default: the `transfer_(back_)to_<agent>` tools the conversation shows handing off. */
            isHandoff: z.custom<(toolName: string) => boolean>(isFunction, "expected a function").optional(),
          }),
        ])
        .optional(),
      ...turnShape,
    })
    .optional(),
  /** Where the guard reports. */
  feedback: z
    .strictObject({
      /**
       * A `GuardLogger` (`console`, or anything with `warn`): its `warn` receives `Loop detected: 92.0% similarity
       * to previous output` and `Breaking loop due to repetitive agent outputs`. Default none (nothing is printed).
       */
      logger: safety.logger,
      /** Write a guard event when a loop or a limit stops the run (custom stream and `guardLog`). Default true. */
      events: eventsOption,
    })
    .optional(),
});

/** The options of `safetyLimitsMiddleware`: the limits alone, without the similarity check. */
const safetyLimitsOptionsSchema = z.strictObject({
  ...limitsShape,
  /** How a turn is read. */
  turns: z.strictObject(turnShape).optional(),
  /** Where the guard reports. */
  feedback: z
    .strictObject({
      /** Write a guard event when a limit stops the run (custom stream and `guardLog`). Default true. */
      events: eventsOption,
    })
    .optional(),
});

/**
 * Options of `loopDetectHook`, `loopDetectNode` and `loopDetectMiddleware`: the limits top-level, how a turn is read
 * and compared in `turns`, what the guard says in `feedback`.
 *
 * @example
 * ```ts
 * loopDetectHook({ maxIterations: 30, turns: { runBoundary: "none" } } satisfies LoopDetectOptions);
 * ```
 *
 * @interface
 */
export type LoopDetectOptions = z.input<typeof loopDetectOptionsSchema>;

/**
 * Options of `safetyLimitsMiddleware`: the limits alone (no similarity check), how a turn is read in `turns`,
 * whether it writes events in `feedback`.
 *
 * @example
 * ```ts
 * safetyLimitsMiddleware({ maxIterations: 30, maxTokens: 200_000 } satisfies SafetyLimitsOptions);
 * ```
 *
 * @interface
 */
export type SafetyLimitsOptions = z.input<typeof safetyLimitsOptionsSchema>;

/** The options of a loop-guard adapter, validated, defaults filled in (`undefined` functions: the defaults). */
export interface LoopGuardSettings {
  safety: ResolvedSafetyOptions;
  /** False for the safety limits alone: their turns' outputs are not compared. */
  checksLoops: boolean;
  outputOf: ((message: AIMessage) => string) | undefined;
  isFailure: ((results: ToolMessage[]) => boolean) | undefined;
  runBoundary: "human-message" | "none";
  handoffs: { limit: number; isHandoff: ((toolName: string) => boolean) | undefined } | null;
  events: boolean;
  /** As given; the adapter applies its default. */
  wrapUp: WrapUpOption | undefined;
  ask: LimitAsk | undefined;
}

/** Validated adapter options, either schema's. */
interface ParsedLoopOptions
  extends Omit<SafetyOptions, "scorer" | "minOutputLength" | "logger" | "clock" | "maxRecentOutputs"> {
  wrapUp?: LoopGuardSettings["wrapUp"];
  ask?: boolean | LimitAsk | undefined;
  turns?:
    | (Pick<SafetyOptions, "scorer" | "minOutputLength" | "clock" | "maxRecentOutputs"> &
        Partial<Pick<LoopGuardSettings, "outputOf" | "isFailure" | "runBoundary">> & {
          handoffs?: false | { limit?: number | undefined; isHandoff?: ((name: string) => boolean) | undefined };
        })
    | undefined;
  feedback?: { logger?: GuardLogger | undefined; events?: boolean | undefined } | undefined;
}

/** Converts validated adapter options (without adapter keys such as a node's routes) to the turn's settings. */
export function loopGuardSettings(parsed: ParsedLoopOptions): LoopGuardSettings {
  const { turns = {}, feedback = {}, wrapUp, ask, ...limits } = parsed;
  const { outputOf, isFailure, runBoundary = "human-message", handoffs, ...comparison } = turns;
  return {
    safety: resolveSafetyOptions({ ...limits, ...comparison, logger: feedback.logger }),
    checksLoops: true,
    outputOf,
    isFailure,
    runBoundary,
    handoffs: handoffs === false ? null : { limit: handoffs?.limit ?? 4, isHandoff: handoffs?.isHandoff },
    events: feedback.events ?? true,
    wrapUp,
    ask: ask === true ? {} : ask === false ? undefined : ask,
  };
}

/** Validates `loopDetectHook` and `loopDetectMiddleware` options; throws `GuardOptionsError` naming each bad field. */
export function resolveLoopDetectOptions(options: LoopDetectOptions): LoopGuardSettings {
  return loopGuardSettings(parseOptions(loopDetectOptionsSchema, options, "loop-detection"));
}

/** Validates the options of `safetyLimitsMiddleware`: the limits alone, without the similarity check. */
export function resolveSafetyLimitsOptions(options: SafetyLimitsOptions): LoopGuardSettings {
  const parsed = parseOptions(safetyLimitsOptionsSchema, options, "safety-limits");
  return { ...loopGuardSettings(parsed), checksLoops: false, handoffs: null };
}
