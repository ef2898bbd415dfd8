/**
 * The feedback texts of sections 5–12 (see `feedback-texts.ts`, which re-exports them: import from there): the stop
 * reasons, guard events, the repeat-query hint, the file cache, tool errors, the end of a run and the wrap-up,
 * unknown tools, and limits that ask.
 */

import { normalizeQuery } from "../../repeat-query/core/query.js";
import { nearestToolNames, suggestToolNames } from "../identity/tool-names.js";
import { capText } from "./format.js";

// ---------------------------------------------------------------------------------------------------------------
// 5. Loop detector and safety limits: the stop reasons (the final AI message; "Not run: …" for pending calls)
// ---------------------------------------------------------------------------------------------------------------

const round = (n: number, digits = 2) => Number(n.toFixed(digits));

/**
 * The message of each stop reason, from its value and its limit: iterations, runtime (ms, shown in minutes),
 * tokens, cost, failures in a row, and a loop (similarity and threshold, 0..1, shown as percentages).
 */
export const STOP_REASON_TEXTS = {
  iterations: (value: number, limit: number) => `Stopped: the iteration limit was reached (${value} of ${limit}).`,
  runtime: (valueMs: number, limitMs: number) =>
    `Stopped: the runtime limit was reached (${round(valueMs / 60000, 1)} min of ${round(limitMs / 60000, 1)} min).`,
  tokens: (value: number, limit: number) => `Stopped: the token limit was reached (${value} of ${limit} tokens).`,
  cost: (value: number, limit: number) => `Stopped: the cost limit was reached ($${round(value, 4)} of $${limit}).`,
  failures: (value: number, limit: number) => `Stopped: ${value} failed iterations in a row (limit ${limit}).`,
  loop: (similarity: number, threshold: number) =>
    `Stopped: loop detected, the output is ${(similarity * 100).toFixed(1)}% similar to a previous output (threshold ${round(threshold * 100, 1)}%).`,
} as const;

/** The answer of a pending tool call the loop guard will not run: the stop reason's message. */
export function notRunStopped(reason: string): string {
  return `Not run: ${reason}`;
}

// ---------------------------------------------------------------------------------------------------------------
// 6. Guard events (custom stream, `guardLog`): messages that are not a rule's message or a stop reason
// ---------------------------------------------------------------------------------------------------------------

/** A call held back with a reminder; an escalation whose run ends; one whose run asks a person. */
export const EVENT_TEXTS = {
  reminder: "held back with a reminder (no strike)",
  ends: "the run ends",
  asks: "a person is asked",
} as const;

// ---------------------------------------------------------------------------------------------------------------
// 7. Repeat query
// ---------------------------------------------------------------------------------------------------------------

/**
 * What a hint builder knows.
 *
 * @example
 * ```ts
 * const hint = ({ query, asked }: RepeatHintInfo) => `Already searched "${query}" (${asked.length} queries so far).`;
 * ```
 */
export interface RepeatHintInfo {
  /** The query as read (after the parser). */
  query: string;
  /** The normalized queries already run. */
  asked: readonly string[];
}

/**
 * The default hint written to `repeatQueryHint` after a repeat.
 *
 * @example
 * ```ts
 * defaultRepeatHint({ query: "Foo", asked: ["foo"] });
 * ```
 */
export function defaultRepeatHint({ query, asked }: RepeatHintInfo): string {
  const list = asked.length ? asked.map((q) => `"${q}"`).join(", ") : "none";
  const what = normalizeQuery(query) === "" ? "The retrieval query was empty." : `"${query}" was already searched.`;
  return `${what} Queries already run: ${list}. Ask a different query, or answer with the evidence you have.`;
}

// ---------------------------------------------------------------------------------------------------------------
// 8. File cache (read_file answered from the cache; the tools' own errors stay with the file tools)
// ---------------------------------------------------------------------------------------------------------------

/**
 * read_file's answer when the file is unchanged since an earlier read whose result (tool call `ref`) is still in the
 * conversation; `range` when only some lines were asked for.
 */
export function unchangedReadText(path: string, ref: string, range?: { from: number; to: number }): string {
  const lines = range === undefined ? "" : ` Lines ${range.from}-${range.to} are among them.`;
  return `${path} is unchanged since your earlier read: its full content is in the result of tool call ${ref} above.${lines}`;
}

/** The message of the guard event of a file tool's answer from the cache (`ref`: answered with a reference). */
export function cacheEventText(path: string, ref?: string): string {
  return ref ? `${path}: unchanged, answered with a reference to ${ref}` : `${path}: served from the cache`;
}

// ---------------------------------------------------------------------------------------------------------------
// 9. Tool errors: LangGraph ToolNode's wording, word for word (resultForUser above takes it off again)
// ---------------------------------------------------------------------------------------------------------------

/** The content of the error ToolMessage for a tool that threw: `message`, addressed to the model. */
export function toolErrorText(message: string): string {
  return `Error: ${message}\n Please fix your mistakes.`;
}

/** The error's text when the thrown value has no message: the tool's name (JSON) and what it threw. */
export function toolThrewText(tool: string, thrown: string): string {
  return `the tool ${JSON.stringify(String(tool))} threw ${thrown}`;
}

// ---------------------------------------------------------------------------------------------------------------
// 10. Ending a run: LangGraph's step budget, and the model's own wrap-up
// ---------------------------------------------------------------------------------------------------------------

/**
 * Why a run ends when LangGraph's step budget (`recursionLimit`) would not allow another turn.
 *
 * @example
 * ```ts
 * stepBudgetReason(25); // "Stopped: this run has used the steps LangGraph allows it (recursionLimit 25). …"
 * ```
 */
export function stepBudgetReason(limit: number): string {
  return `Stopped: this run has used the steps LangGraph allows it (recursionLimit ${limit}). To go on, send another message to continue from here, or run it again with a higher recursionLimit in its config.`;
}

/**
 * What the model is asked in its last call, made with its tools off, when the guards end a run: its answer is the
 * run's final message.
 *
 * @example
 * ```ts
 * wrapUpInstruction("Stopped: the iteration limit was reached (30 of 30).");
 * ```
 */
export function wrapUpInstruction(reason: string): string {
  return [
    `[The run ends now. ${reason}]`,
    "Do not call any tool. In a few sentences, tell the user what you did, what failed or is still unresolved, and what is left to do and how they can continue.",
  ].join("\n");
}

// ---------------------------------------------------------------------------------------------------------------
// 11. Unknown tools: a call of a tool the agent does not have
// ---------------------------------------------------------------------------------------------------------------

/** The most tools the answer to an unknown tool names; with more, it names the nearest ten and the count. */
export const MAX_LISTED_TOOLS = 30;
/** The tools named when there are more than {@link MAX_LISTED_TOOLS}. */
const NEAREST_TOOLS = 10;

/**
 * The content of the error ToolMessage for a call of `tool`, which is not among the agent's `tools`: the tool
 * probably meant, when the name is a near miss (`suggestToolNames`), and the tools there are (the nearest ten and
 * their count, when there are more than 30). It does not depend on the call's arguments: retried with other
 * arguments, the call fails with the same error, which the same-error rule (`escalation.sameErrorThreshold`) stops.
 *
 * @example
 * ```ts
 * unknownToolText("read-file", ["read_file", "list_files"]);
 * // "Error: read-file is not a valid tool. Did you mean read_file? Available tools: read_file, list_files."
 * ```
 */
export function unknownToolText(tool: string, tools: readonly string[]): string {
  const meant = suggestToolNames(tool, tools);
  const guess =
    meant.length === 0 ? "" : ` Did you mean ${meant.length === 1 ? meant[0] : `one of ${meant.join(", ")}`}?`;
  const unique = [...new Set(tools)];
  const listed =
    unique.length === 0
      ? "There are no tools."
      : unique.length <= MAX_LISTED_TOOLS
        ? `Available tools: ${unique.join(", ")}.`
        : `The nearest of the ${unique.length} tools: ${nearestToolNames(tool, unique, NEAREST_TOOLS).join(", ")}.`;
  return `Error: ${capText(tool, 100)} is not a valid tool.${guess} ${listed}`;
}

// ---------------------------------------------------------------------------------------------------------------
// 12. Limits that ask: the question before a limit ends the run
// ---------------------------------------------------------------------------------------------------------------

/**
 * The question a limit asks a person before it ends the run (`ask`): the limit reached, and how much more.
 *
 * @example
 * ```ts
 * limitQuestion("Stopped: the iteration limit was reached (30 of 30).", "10 more iterations");
 * // "The run reached a limit: the iteration limit was reached (30 of 30). Go on with 10 more iterations?"
 * ```
 */
export function limitQuestion(reason: string, more: string): string {
  return `The run reached a limit: ${reason.replace(/^Stopped: /, "")} Go on with ${more}?`;
}

/** How to answer a limit's question (in its interrupt payload). */
export const LIMIT_HOW_TO_ANSWER =
  "Resume with Command({ resume: true }) to go on with the amount offered, { more: n } to go on with n more, or anything else to end the run.";
