/**
 * What the model is told about a blocked call: the feedback at each escalation level ({@link escalationFeedback}),
 * the duplicate handler's ({@link duplicateFeedback}) and the reminder for a repeat that owes an acknowledgment
 * ({@link reminderFeedback}). What a person is told (the level-3 question, the end of a run) is in escalation.ts.
 */

import { canonicalJson } from "../identity/signature.js";
import { truncate } from "../text.js";
import type { FeedbackLimits } from "./messages.js";

/**
 * What the model is told about a blocked call, at an escalation level.
 *
 * @example
 * ```ts
 * const input: EscalationFeedbackInput = { tool: "ls", args: {}, level: 1, strikes: 1, message: "Blocked." };
 * ```
 */
export interface EscalationFeedbackInput {
  /** The blocked call's tool. */
  tool: string;
  /** The blocked call's arguments. */
  args: unknown;
  /** The rule's message (the default, or the user's). */
  message: string;
  /** Escalation level (0 when escalation is off: the level-1 text without a count). */
  level: number;
  /** Strikes so far, this one included. */
  strikes: number;
  /** The previous result of this call (or the repeated error), when recorded. */
  previousResult?:
    | {
        /** Whether that call succeeded. */
        ok: boolean;
        /** Its result text. */
        text: string;
      }
    | undefined;
  /** Other tools the model can use (named in the level-2 options). */
  otherTools?: readonly string[] | undefined;
  /** What happens at the next strike (said at level 2 when levels 3/4 follow). */
  next?: string | undefined;
}

/**
 * The body shared by every block's feedback: the tool, the arguments (JSON, cut at `maxArgsChars`), the previous
 * result (cut at `maxResultChars`) and why the call was blocked.
 */
function body(input: EscalationFeedbackInput, limits: { maxArgsChars: number; maxResultChars: number }): string[] {
  const previous = input.previousResult;
  const outcome =
    previous === undefined ? "already failed/succeeded" : previous.ok ? "already succeeded" : "already failed";
  return [
    "[DUPLICATE TOOL CALL BLOCKED]",
    `Tool: ${input.tool}`,
    `Arguments: ${truncate(canonicalJson(input.args, 2), limits.maxArgsChars)}`,
    "",
    `Previous result for this exact call${previous && !previous.ok ? " (it failed)" : ""}:`,
    previous ? truncate(previous.text, limits.maxResultChars).trimEnd() : "(not recorded)",
    "",
    "This call was blocked because:",
    "- Repeating the same call will produce the same result",
    `- The previous attempt ${outcome}`,
  ];
}

/** Level 1's closing: the advice and the question. */
const ASK = [
  "To make progress, you must CHANGE your approach:",
  "1. If previous call failed: Fix the underlying issue first",
  "2. If previous call succeeded: Move to the next step",
  "3. If stuck: Ask the user for help or try an alternative",
  "",
  "What will you do differently?",
];

/**
 * The feedback for a blocked duplicate: the tool, the arguments (JSON, cut at
 * 500 characters), the previous result of this exact call (cut at 1000), why it was blocked, and "What will you do
 * differently?". The graph's blocks carry it under the guard's message ({@link escalationFeedback}).
 *
 * @example
 * ```ts
 * duplicateFeedback("filesystem.write_file", { path: "x.py" }, '{"error": "diagnostics_failed"}');
 * // "[DUPLICATE TOOL CALL BLOCKED]\nTool: filesystem.write_file\n…\nWhat will you do differently?"
 * ```
 */
export function duplicateFeedback(tool: string, args: unknown, previousResult: string, previousOk?: boolean): string {
  const input = {
    tool,
    args,
    message: "",
    level: 1,
    strikes: 1,
    previousResult: { ok: previousOk ?? true, text: previousResult },
  };
  const lines = body(input, { maxArgsChars: 500, maxResultChars: 1000 });
  // The wording when the outcome is not known.
  if (previousOk === undefined) lines[lines.length - 1] = "- The previous attempt already failed/succeeded";
  return [...lines, "", ...ASK].join("\n");
}

/**
 * The ToolMessage content of a blocked call at an escalation level: the rule's message, then the feedback
 * (tool, arguments, previous result, reasons); level 1 asks what will be different, level 2 and above say how
 * many times it was tried and present explicit options built from the situation.
 *
 * @example
 * ```ts
 * escalationFeedback({ tool: "write_file", args: { path: "x.py" }, message: "Blocked.", level: 2, strikes: 2,
 *   previousResult: { ok: false, text: '{"error": "diagnostics_failed"}' }, otherTools: ["read_file"] });
 * // "Blocked.\n\n[DUPLICATE TOOL CALL BLOCKED]\n…\nOptions:\n[A] Fix what made it fail…"
 * ```
 */
export function escalationFeedback(input: EscalationFeedbackInput, limits: FeedbackLimits = {}): string {
  const lim = { maxArgsChars: limits.maxArgsChars ?? 500, maxResultChars: limits.maxResultChars ?? 1000 };
  const lines = [input.message, "", ...body(input, lim), ""];
  if (input.level < 2) return [...lines, ...ASK].join("\n");
  const failed = input.previousResult !== undefined && !input.previousResult.ok;
  const others = (input.otherTools ?? []).filter((t) => t !== input.tool);
  lines.push(
    `You've now tried this ${input.strikes} times. The approach isn't working. Options:`,
    failed
      ? "[A] Fix what made it fail first (see the previous result), then call it with changed arguments"
      : "[A] Use the result you already have (above): it is what this call returns; go on to the next step",
    others.length > 0
      ? `[B] Use another tool: ${others.slice(0, 8).join(", ")}${others.length > 8 ? ", …" : ""}`
      : "[B] Take a different step toward the goal",
    "[C] Ask the user for help: say what you need in your reply, without a tool call",
    "[D] Stop and report what you have done and what blocks you",
  );
  if (input.next) lines.push("", input.next);
  lines.push("", "Which option will you take? What will you do differently?");
  return lines.join("\n");
}

/**
 * The ToolMessage content of a call held back with a reminder: the response repeated a blocked call (nearly the
 * same arguments) without saying what it will do differently.
 *
 * @example
 * ```ts
 * reminderFeedback("write_file", 1); // "[ACKNOWLEDGMENT REQUIRED] This call was not run: …"
 * ```
 */
export function reminderFeedback(tool: string, remaining: number): string {
  return [
    `[ACKNOWLEDGMENT REQUIRED] This call was not run: it repeats the blocked call to '${tool}' with nearly the same arguments, and your reply did not say what you will do differently.`,
    'Say what you will change (for example: "Instead, I will …"), or make a different call.',
    remaining > 0
      ? `${remaining} more reminder${remaining === 1 ? "" : "s"} before this counts as another repeat.`
      : "The next repeat counts as another blocked duplicate.",
    "",
    "What will you do differently?",
  ].join("\n");
}
