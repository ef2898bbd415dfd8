/** The tool-call guards' texts, word for word (tests and the eval compare them); each guard decides when to send. */

import { canonicalJson } from "../../common/identity/signature.js";
import { nearestToolNames, suggestToolNames } from "../../common/identity/tool-names.js";
import { capText, ordinal, truncate } from "../../common/texts/format.js";
import type { BlockRule } from "../../common/vocabulary.js";
import type { CallLike } from "./escalation.js";

// 1. Tool-call rules

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
  file_edits: ({ path, count, rewrites }) =>
    rewrites === true
      ? `⚠️ FILE REWRITTEN TOO OFTEN: '${path ?? "this file"}' was already rewritten whole ${count - 1} times in this run. Writing the whole file again and again means the approach is not working: this rewrite, and every further rewrite of the whole file in this run, is blocked (a targeted edit of one part of it is not).`
      : `⚠️ FILE EDITED TOO OFTEN: '${path ?? "this file"}' was already written ${count - 1} times in this run. Rewriting the same file again and again means the approach is not working: this write, and every further write of this file in this run, is blocked.`,
  repeat_ceiling: ({ tool, count }) =>
    `⚠️ SAME CALL TOO OFTEN: Tool '${tool}' was already called ${count - 1} times with these arguments in this run. Its answers may change, but calling it again is not getting you anywhere: this call is blocked, and so is every further identical call until something else has changed.`,
};

/**
 * A tool's result with a note after it (the file-edits reminder), as the model reads it: after a blank line.
 *
 * @example
 * ```ts
 * withNoteAfter("Wrote 12 characters to a.py.", "[FILE EDITED OFTEN] …"); // "Wrote 12 characters to a.py.\n\n[FILE …"
 * ```
 */
export function withNoteAfter(result: string, note: string): string {
  return `${result}\n\n${note}`;
}

/**
 * The reminder a call's answer carries after the tool's result when it writes a file already written often in this
 * run (the file-edits rule, from `remindAt`): which file, how many writes so far, when writing it is blocked, and
 * what to do instead.
 *
 * @example
 * ```ts
 * fileEditsReminder("game.py", 8, 25);
 * // "[FILE EDITED OFTEN] This was the 8th write of 'game.py' in this run; the 25th and later ones are blocked. …"
 * fileEditsReminder("game.py", 8, 25, { rewrites: 8, blockAt: 12 });
 * // "[FILE EDITED OFTEN] This was the 8th write of 'game.py' in this run (the 8th of its whole content); the 12th
 * //  rewrite of the whole file and the 25th write of any kind are blocked. …"
 * ```
 */
export function fileEditsReminder(
  path: string,
  writes: number,
  blockAt: number,
  whole?: { rewrites: number; blockAt: number },
): string {
  const limit =
    whole === undefined
      ? `; the ${ordinal(blockAt)} and later ones are blocked.`
      : ` (the ${ordinal(whole.rewrites)} of its whole content); the ${ordinal(whole.blockAt)} rewrite of the whole file and the ${ordinal(blockAt)} write of any kind are blocked.`;
  return [
    `[FILE EDITED OFTEN] This was the ${ordinal(writes)} write of '${path}' in this run${limit}`,
    "So many edits of one file usually mean the approach is not working. Step back: read the file once as it is now, then make one complete edit that fixes everything you know of, or explain what is going wrong.",
  ].join("\n");
}

/** The reminder after the answer of an identical call made often in this run (the repeat ceiling, from `remindAt`). */
export function repeatCeilingReminder(tool: string, calls: number, blockAt: number, byAnswers = false): string {
  const limit = byAnswers
    ? `it runs while its answers change (the ${ordinal(blockAt)} in a row that answers the same is blocked), and the run's limits (steps, time, cost) end a run that only repeats it.`
    : `the ${ordinal(blockAt)} and later ones are blocked.`;
  return [
    `[REPEATED CALL] This was the ${ordinal(calls)} identical call of '${tool}' in this run; ${limit}`,
    "Asking again has not got you what you need. Use the answers you have, change the arguments, or say what you are waiting for.",
  ].join("\n");
}

// 2. Escalation, to the model: the feedback of a blocked call

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
  /**
   * For a `file_edits` block: the file, its writes in this run before this call, and the write that is blocked.
   * The feedback then speaks of the file rather than of a repeated call.
   */
  file?:
    | {
        /** The file written too often. */
        path: string;
        /** Its writes in this run so far (this call not included). */
        writes: number;
        /** The write of a file that is blocked (`rules.fileEdits.blockAt`; with `rewrites`, `blockRewritesAt`). */
        blockAt: number;
        /** The block counts rewrites of the whole file, and `writes` is those rewrites. */
        rewrites?: boolean | undefined;
      }
    | undefined;
  /** For a `repeat_ceiling` block: the identical calls made in this run before this one (the reasons say so). */
  repeats?: number | undefined;
}

/** The body every block's feedback shares: the tool, the arguments, the previous result and why it was blocked. */
function body(input: EscalationFeedbackInput, limits: { maxArgsChars: number; maxResultChars: number }): string[] {
  if (input.file !== undefined) return fileBody(input, input.file, limits);
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
    ...(input.repeats === undefined
      ? ["- Repeating the same call will produce the same result", `- The previous attempt ${outcome}`]
      : [
          `- It was already called ${input.repeats} times with these arguments in this run`,
          "- Its answers change, but another identical call is unlikely to tell you what the earlier ones did not",
        ]),
  ];
}

/** The body of a `file_edits` block's feedback: the tool, the file, the arguments and why it was blocked. */
function fileBody(
  input: EscalationFeedbackInput,
  file: NonNullable<EscalationFeedbackInput["file"]>,
  limits: { maxArgsChars: number },
): string[] {
  return [
    "[FILE EDIT BLOCKED]",
    `Tool: ${input.tool}`,
    `File: ${file.path}`,
    `Arguments: ${truncate(canonicalJson(input.args, 2), limits.maxArgsChars)}`,
    "",
    "This call was blocked because:",
    file.rewrites === true
      ? `- '${file.path}' was already rewritten whole ${file.writes} times in this run (the ${ordinal(file.blockAt)} rewrite is blocked)`
      : `- '${file.path}' was already written ${file.writes} times in this run (the ${ordinal(file.blockAt)} write is blocked)`,
    "- Another rewrite is unlikely to fix what the previous ones did not",
    file.rewrites === true
      ? "- Every further rewrite of the whole file in this run is blocked too; a targeted edit of one part still runs"
      : "- Every further write of this file in this run is blocked too",
  ];
}

/** Level 1's closing for a `file_edits` block: step back, and the question. */
const ASK_FILE = [
  "To make progress, step back:",
  "1. Read the file once, as it is now",
  "2. Explain what is going wrong with it, and what you would change",
  "3. Go on with the rest of the task, or ask the user for help",
  "",
  "What will you do differently?",
];

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
  if (input.level < 2) return [...lines, ...(input.file === undefined ? ASK : ASK_FILE)].join("\n");
  const failed = input.previousResult !== undefined && !input.previousResult.ok;
  const others = (input.otherTools ?? []).filter((t) => t !== input.tool);
  lines.push(
    `You've now tried this ${input.strikes} times. The approach isn't working. Options:`,
    input.file !== undefined
      ? `[A] Read '${input.file.path}' once as it is now, and say what is still wrong with it (it cannot be written again in this run)`
      : failed
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

/** Said at level 2 (as `next` of {@link escalationFeedback}) when the next strike reaches level 3 or 4. */
export const NEXT_STRIKE_STOPS =
  "Repeating it again stops automatic execution: the user is asked to step in, or the run ends.";

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

// 3. Escalation, to a person: the level-3 question, the end of a run

/**
 * The message a person sees at level 3 (and the model, with the person's answer, when the run resumes).
 *
 * @example
 * ```ts
 * userQuestion("write_file", 3);
 * // "Stopping automatic execution. The agent repeated blocked calls 3 times (the last: 'write_file'). Please tell me what you need help with."
 * ```
 */
export function userQuestion(tool: string, attempts: number): string {
  return `Stopping automatic execution. The agent repeated blocked calls ${attempts} times (the last: '${tool}'). Please tell me what you need help with.`;
}

/** The level-3 interrupt's `howToAnswer`: the forms of a person's answer. */
export const HOW_TO_ANSWER =
  'Resume with new Command({ resume: "guidance for the agent" }), or { answer, action: "continue" | "reset" | "end" }.';

/** A person's empty answer at level 3, as the model is given it. */
export const NO_ANSWER = "(no answer)";

/** A held-back call's answer after a person answered at level 3: "not run", or for a blocked call the question. */
export function personAnsweredText(question: string, said: string, wouldHaveRun: boolean): string {
  return wouldHaveRun
    ? `Not run: automatic execution was stopped to ask the user. The user answered:\n${said}`
    : `${question}\n\nThe user answered:\n${said}`;
}

/**
 * What {@link endExplanation} explains: the call that kept being repeated, and how the run came to its end.
 *
 * @example
 * ```ts
 * const input: EndExplanationInput = { tool: "get_weather", args: { city: "Paris" }, strikes: 4 };
 * ```
 */
export interface EndExplanationInput {
  /** The tool whose blocked call was repeated. */
  tool: string;
  /** Its arguments. */
  args?: unknown;
  /** Strikes: blocked repeats without progress in between. */
  strikes: number;
  /** The call's result when it last ran, when recorded. */
  previousResult?: EscalationFeedbackInput["previousResult"];
  /** Other calls blocked on the way (shown as what else was tried; the repeated call itself is left out). */
  alsoBlocked?: readonly CallLike[] | undefined;
  /** Set when a person ended the run at level 3: their answer (may be empty). */
  endedByUser?:
    | {
        /** The person's answer. */
        answer: string;
      }
    | undefined;
}

/** The tool's result for the user: without the words ToolNode's error text addresses to the model (`toolErrorText`). */
function resultForUser(text: string): string {
  return text
    .replace(/\s*Please fix your mistakes\.?\s*$/, "")
    .replace(/^Error:\s*/, "")
    .trim();
}

function describeCall(tool: string, args: unknown): string {
  const json = canonicalJson(args ?? {});
  return json === "{}" ? `\`${tool}\`` : `\`${tool}\` with ${truncate(json, 200)}`;
}

/**
 * The final AI message at level 4 (or when a person ends the run at level 3), written for the user: what was
 * repeated and how often, what it gave when it last ran and what else was tried, and what they can do next (in
 * their words: the developer's settings, such as `escalation.askFrom` or `configurable.guards`, are in the docs).
 *
 * @example
 * ```ts
 * endExplanation({
 *   tool: "get_weather",
 *   args: { city: "Paris" },
 *   strikes: 4,
 *   previousResult: { ok: false, text: "Error: weather service unavailable" },
 * });
 * // "I stopped this run because I kept repeating one step: I called `get_weather` with {"city":"Paris"} ..."
 * ```
 */
export function endExplanation(input: EndExplanationInput): string {
  const call = describeCall(input.tool, input.args);
  const times = `${input.strikes} time${input.strikes === 1 ? "" : "s"}`;
  const lines: string[] = [];
  if (input.endedByUser !== undefined) {
    const said = input.endedByUser.answer.trim();
    lines.push(
      `I stopped this run because you asked me to${said === "" ? "." : `: "${truncate(said, 300)}"`}`,
      `Before that, I had called ${call} again and again: the guards blocked it ${times} in a row.`,
    );
  } else {
    lines.push(
      `I stopped this run because I kept repeating one step: I called ${call} again and again, the guards ` +
        `blocked it ${times} in a row, and I did not change my approach.`,
    );
  }
  if (input.previousResult !== undefined) {
    const text = truncate(resultForUser(input.previousResult.text), 500).trimEnd();
    lines.push(
      input.previousResult.ok
        ? `When it last ran, it returned: ${text === "" ? "(nothing)" : text}`
        : `When it last ran, it failed: ${text === "" ? "(no error message)" : text}`,
    );
  }
  const key = canonicalJson([input.tool, input.args ?? {}]);
  const seen = new Set([key]);
  const others: string[] = [];
  for (const c of input.alsoBlocked ?? []) {
    const k = canonicalJson([c.tool, c.args ?? {}]);
    if (seen.has(k)) continue;
    seen.add(k);
    others.push(describeCall(c.tool, c.args));
  }
  if (others.length > 0) lines.push(`Also blocked as repeats: ${others.join("; ")}.`);
  lines.push(
    "",
    "What you can do:",
    "- Send a new message with what to do differently (another approach, other input, or to skip this step); I will go on from there.",
    "- If the step needs something I cannot change here (a service that is down, access I do not have), set that right first, then ask me again.",
  );
  return lines.join("\n");
}

/**
 * The answer a call gets when the run ends before it runs (every pending call of the last response).
 *
 * @example
 * ```ts
 * notRunAnswer("get_weather", 4); // "Not run: the run was stopped after 4 blocked repeats of `get_weather`."
 * ```
 */
export function notRunAnswer(tool: string, strikes: number, byUser = false): string {
  return byUser
    ? "Not run: the user ended the run."
    : `Not run: the run was stopped after ${strikes} blocked repeat${strikes === 1 ? "" : "s"} of \`${tool}\`.`;
}

/**
 * The message of the error a `GuardedToolNode` throws when a response reaches escalation level 3 or 4 and no
 * escalation hook acted on it (replay reports the same text).
 *
 * @example
 * ```ts
 * missingHookMessage("get_weather", 3, 3); // "The model repeated a blocked call to 'get_weather' 3 times: ..."
 * ```
 */
export function missingHookMessage(tool: string, strikes: number, level: number): string {
  return (
    `The model repeated a blocked call to '${tool}' ${strikes} times: escalation level ${level} ` +
    `(${level >= 4 ? "end the run" : "ask a person"}), which GuardedToolNode cannot do by itself. ` +
    "Add the escalation hook so the run asks a person or ends with a message: with createReactAgent " +
    "`postModelHook: escalationHook(toolNode)` (or `guardHooks(..., escalationHook(toolNode))`), in a custom graph " +
    "`escalationNode(toolNode)` between the model and the tools."
  );
}

// 4. Result dedupe

/** Sent instead of a result (or error) exactly like the earlier identical call `callId`'s, still in the thread. */
export function unchangedResultNote(what: "result" | "error", callId: string, tool: string): string {
  return `Unchanged: exactly the same ${what} as the earlier identical call ${callId} of '${tool}' (its message above). Nothing new since then.`;
}

/** The reminder after a shell failure that `same` of the last `of` shell commands failed with, byte for byte. */
export function sameFailureText(same: number, of: number): string {
  return `[SAME FAILURE] ${same} of your last ${of} shell commands failed with exactly this output.\nChanging the command has not changed the failure: read the error, fix its cause (or ask), then try again.`;
}

/** A cache-served repeat's answer if its earlier message is not found (a fallback: planning always finds it). */
export function servedElsewhereText(tool: string, callId: string): string {
  return `Same result as the earlier identical call ${callId} of '${tool}' (its message above): served from the cache, nothing changed since.`;
}

/** The answer to a call that repeats an earlier call of its response under the same id: that answer is its answer. */
export function sameIdNote(callId: string): string {
  return `Not run: this response already sent call id ${callId}; its answer above is this call's answer.`;
}

// 5. Guard events (custom stream, `guardLog`): messages that are not a rule's message or a stop reason

/** A call held back with a reminder; an escalation whose run ends; one whose run asks a person. */
export const EVENT_TEXTS = {
  reminder: "held back with a reminder (no strike)",
  served: "answered from the result cache (not run, no strike)",
  ends: "the run ends",
  asks: "a person is asked",
} as const;

// 6. Tool errors: LangGraph ToolNode's wording, word for word (resultForUser above takes it off again)

/** The content of the error ToolMessage for a tool that threw: `message`, addressed to the model. */
export function toolErrorText(message: string): string {
  return `Error: ${message}\n Please fix your mistakes.`;
}

/** The error's text when the thrown value has no message: the tool's name (JSON) and what it threw. */
export function toolThrewText(tool: string, thrown: string): string {
  return `the tool ${JSON.stringify(String(tool))} threw ${thrown}`;
}

// 7. Unknown tools: a call of a tool the agent does not have

/** The most tools the answer to an unknown tool names; with more, it names the nearest ten and the count. */
export const MAX_LISTED_TOOLS = 30;
/** The tools named when there are more than {@link MAX_LISTED_TOOLS}. */
const NEAREST_TOOLS = 10;

/**
 * The error for a call of `tool`, not among the agent's `tools`: the tool probably meant, and the tools there are.
 * It ignores the arguments, so retries with other ones fail alike and the same-error rule stops them.
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
