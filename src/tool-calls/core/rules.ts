import { DEFAULT_MESSAGES } from "../../common/texts/tool-calls.js";

/**
 * The rule a blocked call broke: `consecutive` (identical to the previous call), `threshold` (too many identical
 * calls in the recent window), `redundant` (a read whose result is still valid, or a change repeated with nothing
 * changed since), and after a block `near_duplicate` (a response repeats a blocked call in substance without saying
 * what it will do differently) and `repeat_failure` (a tool keeps failing with the same error under changing
 * arguments), `cycle` (2 to 5 calls gone round twice with the same results each time), `file_edits` (a write of a
 * file already written `rules.fileEdits.blockAt` − 1 times in the run, or a rewrite of its whole content at
 * `blockRewritesAt`), and `repeat_ceiling` (an identical call already made `rules.repeatCeiling.blockAt` − 1 times in
 * the run, its answers changing or not). Not to be confused with the escalation level (1–4) that follows a block.
 *
 * @example
 * ```ts
 * const rule: BlockRule = "redundant";
 * ```
 */
export type BlockRule =
  | "consecutive"
  | "threshold"
  | "redundant"
  | "near_duplicate"
  | "repeat_failure"
  | "cycle"
  | "file_edits"
  | "repeat_ceiling";

/**
 * Every block rule, in order.
 *
 * @example
 * ```ts
 * BLOCK_RULES.length; // 8
 * ```
 */
export const BLOCK_RULES: readonly BlockRule[] = [
  "consecutive",
  "threshold",
  "redundant",
  "near_duplicate",
  "repeat_failure",
  "cycle",
  "file_edits",
  "repeat_ceiling",
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
  /**
   * How many identical calls this one would make (including itself) within the window; for `repeat_failure` the
   * failures in a row, for `file_edits` the writes (or with `rewrites`, the whole-file rewrites) of the file in the run
   * with this one, for `repeat_ceiling` the identical calls in the run with this one.
   */
  count: number;
  /** The rule that blocked it. */
  rule: BlockRule;
  /** Whether the earlier identical call the block refers to succeeded (`false`: it failed), when known. */
  previousOk?: boolean | undefined;
  /** For `file_edits`: the file written too often (as the guards know its path). */
  path?: string | undefined;
  /**
   * For `file_edits`: the block counts the rewrites of the file's whole content (`rules.fileEdits.blockRewritesAt`),
   * and `count` is this rewrite of it; absent: it counts every write.
   */
  rewrites?: boolean | undefined;
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
