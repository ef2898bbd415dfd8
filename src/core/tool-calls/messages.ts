/**
 * The rule a blocked call broke: `consecutive` (identical to the previous call), `threshold` (too many identical
 * calls in the recent window), `redundant` (a read whose result is still valid, or a change repeated with nothing
 * changed since), and after a block `near_duplicate` (a response repeats a blocked call in substance without saying
 * what it will do differently) and `repeat_failure` (a tool keeps failing with the same error under changing
 * arguments), and `cycle` (2 or 3 different calls gone round twice with the same results each time). Not to be
 * confused with the escalation level (1–4) that follows a block.
 *
 * @example
 * ```ts
 * const rule: BlockRule = "redundant";
 * ```
 */
export type BlockRule = "consecutive" | "threshold" | "redundant" | "near_duplicate" | "repeat_failure" | "cycle";

/**
 * Every block rule, in order.
 *
 * @example
 * ```ts
 * BLOCK_RULES.length; // 6
 * ```
 */
export const BLOCK_RULES: readonly BlockRule[] = [
  "consecutive",
  "threshold",
  "redundant",
  "near_duplicate",
  "repeat_failure",
  "cycle",
];

/**
 * What a message builder knows about the blocked call.
 *
 * @example
 * ```ts
 * const message = (ctx: BlockContext) => `${ctx.tool} repeated ${ctx.count} times (${ctx.rule})`;
 * ```
 */
export interface BlockContext {
  /** The tool that was called. */
  tool: string;
  /** The arguments of the blocked call, as the model sent them. */
  args: unknown;
  /** How many identical calls this one would make (including itself) within the window. */
  count: number;
  /** The rule that blocked it. */
  rule: BlockRule;
  /** Whether the earlier identical call the block refers to succeeded (`false`: it failed), when known. */
  previousOk?: boolean | undefined;
}

/**
 * A replacement for one of the default block messages: a fixed text or a builder.
 *
 * @example
 * ```ts
 * const consecutive: MessageTemplate = ({ tool }) => `You just called ${tool} with these arguments.`;
 * ```
 */
export type MessageTemplate = string | ((ctx: BlockContext) => string);

/**
 * The default block messages (the first three are the redundancy-protection spec's, word for word).
 *
 * @example
 * ```ts
 * DEFAULT_MESSAGES.threshold({ tool: "list_files", args: {}, count: 4, rule: "threshold" });
 * // "Tool 'list_files' has been called 4 times with identical inputs. Please try a different approach or tool to avoid getting stuck in a loop."
 * ```
 */
export const DEFAULT_MESSAGES: Readonly<Record<BlockRule, (ctx: BlockContext) => string>> = {
  consecutive: ({ tool }) =>
    `⚠️ CRITICAL: Tool '${tool}' called with IDENTICAL inputs back-to-back! This is wasteful and indicates you're stuck. The operation context shows you ALREADY have this information. STOP and use a DIFFERENT approach.`,
  threshold: ({ tool, count }) =>
    `Tool '${tool}' has been called ${count} times with identical inputs. Please try a different approach or tool to avoid getting stuck in a loop.`,
  redundant: ({ tool, previousOk }) =>
    previousOk === false
      ? `⚠️ REDUNDANT OPERATION BLOCKED: Tool '${tool}' already failed with these inputs, and nothing has changed since: it would fail the same way. Read the error in your previous result, then fix its cause or change the inputs.`
      : `⚠️ REDUNDANT OPERATION BLOCKED: Tool '${tool}' was already successfully executed with these inputs. The information you need is in your scratchpad from the previous successful call. Check your Recent Tool Operations and use the existing information.`,
  near_duplicate: ({ tool }) =>
    `Tool '${tool}' was called again with nearly the same arguments as a call that was just blocked, and your reply did not say what you will do differently.`,
  repeat_failure: ({ tool, count }) =>
    `Tool '${tool}' failed ${count} times in a row with the same error, each time with different arguments. Changing the arguments alone is not fixing it: find the cause of the error first.`,
  cycle: ({ tool }) =>
    `Tool '${tool}' is part of a cycle of calls that has gone round twice with exactly the same results each time: going round again will not tell you anything new. Use what you already have, or do something different.`,
};

/**
 * The rule's message: the user's replacement when given, else the default.
 *
 * @example
 * ```ts
 * blockMessage({ tool: "t", args: {}, count: 2, rule: "consecutive" }, { consecutive: "Stop repeating." });
 * // "Stop repeating."
 * ```
 */
export function blockMessage(ctx: BlockContext, custom?: Partial<Record<BlockRule, MessageTemplate>>): string {
  const template = custom?.[ctx.rule];
  if (typeof template === "string") return template;
  if (typeof template === "function") return template(ctx);
  return DEFAULT_MESSAGES[ctx.rule](ctx);
}

/**
 * Limits of the feedback a blocked call's ToolMessage shows (see `escalationFeedback`).
 *
 * @example
 * ```ts
 * escalationFeedback(input, { maxArgsChars: 200, maxResultChars: 400 } satisfies FeedbackLimits);
 * ```
 */
export interface FeedbackLimits {
  /** Characters of the arguments shown (default 500). */
  maxArgsChars?: number;
  /** Characters of the previous result shown (default 1000). */
  maxResultChars?: number;
}
