import type { BlockRule } from "../../common/vocabulary.js";
import { type BlockContext, DEFAULT_MESSAGES } from "./texts.js";

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
