/** The ToolMessages the guards write in place of a tool's result, and how they read a tool's result. */

import { inspect } from "node:util";
import { type BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { ToolCall } from "@langchain/core/messages/tool";
import { type Command, isCommand } from "@langchain/langgraph";
import { type GuardStreamEvent, guardStreamEvent } from "../common/events/stream-events.js";
import { canonicalJson } from "../common/identity/signature.js";
import { guardAnswer, passesThrough } from "../common/messages.js";
import { capText, cutEnd } from "../common/texts/format.js";
import type { GuardArtifact, ServedArtifact } from "../common/vocabulary.js";
import type { ToolCallDecision } from "./core/decide.js";
import type { ResolvedToolGuardOptions } from "./core/options.js";
import { type CallOutcome, unchangedNote } from "./core/plan.js";
import { resultDigest } from "./core/repetition.js";
import type { ToolGuardState } from "./core/state.js";
import { servedElsewhereText, toolErrorText, toolThrewText, unknownToolText, withNoteAfter } from "./core/texts.js";

/** The artifact of a blocked call's ToolMessage, from its decision. */
export function blockArtifact(decision: ToolCallDecision, extra: Partial<GuardArtifact> = {}): GuardArtifact {
  return {
    blocked: true,
    rule: decision.rule ?? "consecutive",
    count: decision.count,
    message: decision.message ?? "",
    escalation: decision.escalation,
    strikes: decision.strikes,
    reminder: decision.reminder,
    ...extra,
  };
}

/**
 * Answers every pending call of a response the run stops at: a blocked call with its block's artifact, a call that
 * would have run as stopped.
 */
export function answerAll(
  calls: readonly ToolCall[],
  decisions: readonly ToolCallDecision[],
  content: (decision: ToolCallDecision) => string,
  extra: Partial<GuardArtifact>,
): ToolMessage[] {
  return calls.map((call, i) => {
    const decision = decisions[i] as ToolCallDecision;
    const runs = decision.allowed || decision.served !== undefined;
    const guard = runs ? { stopped: true as const, kind: "escalation" } : blockArtifact(decision, extra);
    return guardAnswer(call, content(decision), guard);
  });
}

/** A tool result's text: its string content, or its blocks (text blocks as text, others as JSON). */
function resultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return canonicalJson(content);
  return content
    .map((block) => {
      if (typeof block === "string") return block;
      const text = (block as { text?: unknown })?.text;
      return typeof text === "string" ? text : canonicalJson(block);
    })
    .join("\n");
}

/**
 * What a call that ran returned, as the guards record it: its own ToolMessage (in a `Command`'s update too), or
 * for a Command without one, the update as a whole.
 */
export function outcomeOf(output: ToolMessage | Command, callId: string | undefined): CallOutcome {
  if (!isCommand(output)) return { ok: output.status !== "error", text: resultText(output.content) };
  const update = output.update as { messages?: unknown } | undefined;
  const messages = Array.isArray(update?.messages) ? update.messages : [];
  const own = messages.find((m): m is ToolMessage => ToolMessage.isInstance(m) && m.tool_call_id === callId);
  if (own !== undefined) return { ok: own.status !== "error", text: resultText(own.content) };
  return { ok: true, text: `[Command] ${canonicalJson(output.update ?? null)}` };
}

/**
 * Result dedupe in a live graph: when the call's ToolMessage repeats exactly the result of an earlier identical call
 * whose ToolMessage is still in `messages`, that message is answered with a short note instead (same id, status and
 * artifact). Returns the answer to send, the outcome to record (always the real result's, marked `deduped`) and the
 * guard event of a dedupe (`unchanged`). A `Command` is left as it is. `call.id` is the id the guards know the call by
 * (see `distinctCallIds`), `callId` the model's (its ToolMessage's).
 */
export function dedupe(
  state: ToolGuardState | undefined,
  call: { key: string; tool: string; id?: string | undefined },
  output: ToolMessage | Command,
  callId: string | undefined,
  messages: readonly BaseMessage[],
  options: ResolvedToolGuardOptions,
): { answer: ToolMessage | Command; outcome: CallOutcome; event?: GuardStreamEvent | undefined } {
  const outcome = outcomeOf(output, callId);
  if (state === undefined || isCommand(output) || typeof output.content !== "string")
    return { answer: output, outcome };
  // Whether the earlier answer is still in the conversation, unchanged.
  const note = unchangedNote(
    state,
    { key: call.key, tool: call.tool, id: call.id ?? callId },
    outcome,
    options,
    (id, digest) => heldAnswer(messages, id, digest) !== undefined,
  );
  if (note === undefined) return { answer: output, outcome };
  const answer = new ToolMessage({
    content: note,
    tool_call_id: output.tool_call_id,
    name: output.name,
    status: output.status,
    artifact: output.artifact,
    id: output.id,
  });
  const event = guardStreamEvent({
    kind: "unchanged",
    guard: "tool-calls",
    tool: call.tool,
    callId: call.id ?? callId,
    bytesSaved: outcome.text.length - note.length,
    message: note,
  });
  return { answer, outcome: { ...outcome, deduped: true }, event };
}

/**
 * The ToolMessage of call id `callId` in `messages` whose result has exact digest `digest` (the latest first), or
 * `undefined`: trimmed, summarized or changed since.
 *
 * @example
 * ```ts
 * const earlier = heldAnswer(state.messages, "call_2", entry.digest);
 * ```
 */
export function heldAnswer(messages: readonly BaseMessage[], callId: string, digest: string): ToolMessage | undefined {
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const m = messages[i];
    if (!ToolMessage.isInstance(m) || m.tool_call_id !== callId) continue;
    if (resultDigest(m.status !== "error", resultText(m.content)) === digest) return m;
  }
  return undefined;
}

/**
 * The answer to a repeat served from the result cache (`decision.served`): the earlier answer's result, as a
 * successful ToolMessage for `call` (its artifact kept, with `guard: {@link ServedArtifact}` added when it is an
 * object), with the repeat ceiling's reminder after it. Were the earlier message gone (the turn was planned from
 * the same messages, so it is not), the model is pointed at it.
 */
export function servedAnswer(
  call: Pick<ToolCall, "id" | "name">,
  decision: ToolCallDecision,
  messages: readonly BaseMessage[],
): ToolMessage {
  const from = decision.served?.callId ?? "";
  const earlier = heldAnswer(messages, from, decision.served?.digest ?? "");
  const guard: ServedArtifact = { served: true, from };
  const own = earlier?.artifact;
  const artifact =
    own === undefined || own === null
      ? { guard }
      : typeof own === "object" && !Array.isArray(own)
        ? { ...own, guard }
        : own;
  const answer = new ToolMessage({
    content: earlier?.content ?? servedElsewhereText(call.name, from),
    tool_call_id: call.id ?? "",
    name: call.name,
    status: "success",
    artifact,
  });
  return withNote(answer, decision.repeats?.reminder) as ToolMessage;
}

/**
 * The answer with `note` after the tool's result (the file-edits reminder): a ToolMessage's string content gets it
 * after a blank line, a list of content blocks gets it as one more text block. A `Command`, or no note, is left as
 * it is.
 */
export function withNote(answer: ToolMessage | Command, note: string | undefined): ToolMessage | Command {
  if (note === undefined || isCommand(answer)) return answer;
  const content = answer.content;
  const noted =
    typeof content === "string" ? withNoteAfter(content, note) : [...content, { type: "text" as const, text: note }];
  return new ToolMessage({
    content: noted,
    tool_call_id: answer.tool_call_id,
    name: answer.name,
    status: answer.status,
    artifact: answer.artifact,
    id: answer.id,
    additional_kwargs: answer.additional_kwargs,
    response_metadata: answer.response_metadata,
  });
}

/** Runs `read`; `fallback` when it throws (a getter, a Proxy trap, a `toJSON`…). */
function attempt<T>(read: () => T, fallback: T): T {
  try {
    return read();
  } catch {
    return fallback;
  }
}

/**
 * How objects are shown: on one line, cut deep and wide, with neither the value's own `inspect` nor its getters
 * run (a Proxy is shown by its target, without its traps).
 */
const INSPECT = {
  depth: 2,
  breakLength: Number.POSITIVE_INFINITY,
  compact: true,
  maxArrayLength: 20,
  customInspect: false,
  getters: false,
  showProxy: false,
} as const;

/** A property of any value read without throwing, when it is a string. */
function stringProperty(value: unknown, key: "name" | "message"): string | undefined {
  return attempt(() => {
    const v = (value as Record<string, unknown>)[key];
    return typeof v === "string" ? v : undefined;
  }, undefined);
}

function describeValue(value: unknown, max: number, depth: number): string {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value.slice(0, cutEnd(value, max)));
    case "number":
    case "boolean":
    case "undefined":
      return String(value);
    case "bigint":
      return `${value}n`;
    case "symbol":
      return attempt(() => Symbol.prototype.toString.call(value), "a symbol");
    case "function":
      return `function ${stringProperty(value, "name") || "(anonymous)"}`;
  }
  if (value === null) return "null";
  const isError = attempt(() => value instanceof Error, false);
  const name = stringProperty(value, "name");
  const message = attempt<string | undefined | null>(() => {
    const m = (value as { message?: unknown }).message;
    return typeof m === "string" ? m : undefined;
  }, null);
  if (isError || message !== undefined) {
    const label = name || (isError ? "Error" : "an object");
    let text =
      message === null
        ? `${label} (its message cannot be read)`
        : message
          ? `${label}: ${message}`
          : `${label} (no message)`;
    const errors = attempt(() => (value as { errors?: unknown }).errors, undefined);
    if (Array.isArray(errors) && depth < 2) {
      const inner = errors.slice(0, 5).map((e) => describeValue(e, max, depth + 1));
      text += ` [${inner.join("; ")}${errors.length > 5 ? `; ${errors.length - 5} more` : ""}]`;
    }
    return text;
  }
  const shown = attempt(() => inspect(value, { ...INSPECT, maxStringLength: max }), undefined);
  return typeof shown === "string" && shown !== "" ? shown : "an object that cannot be displayed";
}

/**
 * Any thrown value as readable text, for a model or a log: an error as `name: message` (an `AggregateError` with
 * its errors), a string quoted, other values as `util.inspect` shows them on one line (cut). Never throws, whatever the value (a Proxy, throwing
 * getters, cycles, a BigInt, a Symbol…); at most `max` characters.
 *
 * @example
 * ```ts
 * describeThrown(new TypeError("bad")); // "TypeError: bad"
 * describeThrown(undefined); // "undefined"
 * describeThrown({ code: 7 }); // "{ code: 7 }"
 * ```
 */
export function describeThrown(value: unknown, max = 500): string {
  return capText(
    attempt(() => describeValue(value, max, 0), "a value that cannot be displayed"),
    max,
  );
}

/**
 * The content of the error ToolMessage for a tool that threw `error`: LangGraph `ToolNode`'s own
 * (`Error: <message>\n Please fix your mistakes.`) whenever the value has a non-empty string `message`; otherwise
 * (`undefined`, a string, an object, an unreadable `message`…), where `ToolNode` writes `Error: undefined` or
 * fails, one that names the tool and shows what it threw. Never throws.
 *
 * @example
 * ```ts
 * toolErrorContent("search", new Error("timeout")); // "Error: timeout\n Please fix your mistakes."
 * toolErrorContent("search", "rate limited"); // 'Error: the tool "search" threw "rate limited"\n Please fix …'
 * ```
 */
export function toolErrorContent(toolName: string, error: unknown): string {
  const message = stringProperty(error, "message");
  const text =
    message !== undefined && message.trim() !== "" ? message : toolThrewText(toolName, describeThrown(error));
  return toolErrorText(text);
}

/** The error ToolMessage that answers a call whose tool threw `error` (same `tool_call_id` and `name`). */
function toolErrorAnswer(call: Pick<ToolCall, "id" | "name">, error: unknown): ToolMessage {
  return new ToolMessage({
    status: "error",
    content: toolErrorContent(call.name, error),
    name: call.name,
    tool_call_id: call.id ?? "",
  });
}

/**
 * The error ToolMessage that answers a call of a tool the agent does not have (same `tool_call_id` and `name`): the
 * tool probably meant, when the name is a near miss, and the agent's `tools` ({@link unknownToolText}). Recorded by
 * the guards as a failed call, like any other: the same-error rule stops a model that keeps calling it.
 */
function unknownToolAnswer(call: Pick<ToolCall, "id" | "name">, tools: readonly string[]): ToolMessage {
  return new ToolMessage({
    status: "error",
    content: unknownToolText(call.name, tools),
    name: call.name,
    tool_call_id: call.id ?? "",
  });
}

/**
 * The answer to what the tool of `call` threw, for the tool node and the middleware alike: interrupts (and a drained
 * graph) are thrown on; a tool the agent does not have (`unknown`: the agent's tools) is answered with the tool
 * probably meant ({@link unknownToolAnswer}); anything else with what was thrown, shown whatever it is (undefined,
 * a string, an object whose getters throw: the answer never fails).
 */
export function thrownAnswer(call: Pick<ToolCall, "id" | "name">, error: unknown, unknown?: readonly string[]) {
  if (passesThrough(error)) throw error;
  return unknown === undefined ? toolErrorAnswer(call, error) : unknownToolAnswer(call, unknown);
}

/**
 * A tool handler's output for `call` as the guards answer it, under a createAgent middleware's `wrapToolCall` (with
 * one present, createAgent no longer turns a throwing tool into an error ToolMessage): what it threw as an error
 * ToolMessage (interrupts are thrown on). `tools`, given when the call's tool is not one of the agent's: createAgent's
 * own answer (`Error: <name> is not a valid tool, try one of […]`) becomes {@link unknownToolAnswer}. The handler
 * runs even then, for a middleware inside may serve a tool the agent does not list.
 */
export async function handlerOutput(
  handler: () => ToolMessage | Command | Promise<ToolMessage | Command>,
  call: Pick<ToolCall, "id" | "name">,
  tools: readonly string[] | undefined,
): Promise<ToolMessage | Command> {
  let output: ToolMessage | Command;
  try {
    output = await handler();
  } catch (error) {
    return thrownAnswer(call, error);
  }
  const invalid =
    tools !== undefined &&
    !isCommand(output) &&
    output.status === "error" &&
    typeof output.content === "string" &&
    output.content.startsWith(`Error: ${call.name} is not a valid tool`);
  return invalid ? unknownToolAnswer(call, tools) : output;
}
