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
import type { CallOutcome } from "./core/call.js";
import type { ToolCallDecision } from "./core/decide.js";
import { sameFailureNote, unchangedNote } from "./core/earlier.js";
import type { ResolvedToolGuardOptions } from "./core/options.js";
import { resultDigest } from "./core/repetition.js";
import type { ToolGuardState } from "./core/state.js";
import { servedElsewhereText, toolErrorText, toolThrewText, unknownToolText, withNoteAfter } from "./core/texts.js";

/** A blocked call's `artifact.guard`. */
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

/** Answers every pending call of a response the run stops at (a blocked one with its block's artifact). */
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

/** What a call that ran returned: its own ToolMessage (in a `Command`'s update too), else the Command's update. */
function outcomeOf(output: ToolMessage | Command, callId: string | undefined): CallOutcome {
  if (!isCommand(output)) return { ok: output.status !== "error", text: resultText(output.content) };
  const update = output.update as { messages?: unknown } | undefined;
  const messages = Array.isArray(update?.messages) ? update.messages : [];
  const own = messages.find((m): m is ToolMessage => ToolMessage.isInstance(m) && m.tool_call_id === callId);
  if (own !== undefined) return { ok: own.status !== "error", text: resultText(own.content) };
  return { ok: true, text: `[Command] ${canonicalJson(output.update ?? null)}` };
}

/** Result dedupe, and the repeated shell failure's reminder; `call.id` is the guards' id, `callId` the model's. */
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
  const note = unchangedNote(
    state,
    { key: call.key, tool: call.tool, id: call.id ?? callId },
    outcome,
    options,
    (id, digest) => heldAnswer(messages, id, digest) !== undefined,
  );
  const failure = sameFailureNote(state, call.tool, outcome);
  if (note === undefined && failure === undefined) return { answer: output, outcome };
  const text = note ?? outcome.text;
  const answer = new ToolMessage({
    content: failure === undefined ? text : withNoteAfter(text, failure),
    tool_call_id: output.tool_call_id,
    name: output.name,
    status: output.status,
    artifact: output.artifact,
    id: output.id,
  });
  if (note === undefined) return { answer, outcome };
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

/** The latest ToolMessage of call `callId` in `messages` whose result has digest `digest`, if still there. */
export function heldAnswer(messages: readonly BaseMessage[], callId: string, digest: string): ToolMessage | undefined {
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const m = messages[i];
    if (!ToolMessage.isInstance(m) || m.tool_call_id !== callId) continue;
    if (resultDigest(m.status !== "error", resultText(m.content)) === digest) return m;
  }
  return undefined;
}

/** A cached repeat's answer: the earlier result, its artifact kept (with `guard` added to an object). */
export function servedAnswer(
  call: Pick<ToolCall, "id" | "name">,
  decision: ToolCallDecision,
  messages: readonly BaseMessage[],
): ToolMessage {
  const from = decision.served?.callId ?? "";
  const earlier = heldAnswer(messages, from, decision.served?.digest ?? "");
  const guard: ServedArtifact = { served: true, from, ...(decision.sameIdAs === undefined ? {} : { sameId: true }) };
  const own = earlier?.artifact;
  const artifact =
    own === undefined || own === null
      ? { guard }
      : typeof own === "object" && !Array.isArray(own)
        ? { ...own, guard }
        : own;
  const answer = new ToolMessage({
    content: decision.content ?? earlier?.content ?? servedElsewhereText(call.name, from),
    tool_call_id: call.id ?? "",
    name: call.name,
    status: "success",
    artifact,
  });
  return withNote(answer, decision.repeats?.reminder) as ToolMessage;
}

/** The answer with `note` after the tool's result (after a blank line, or as a text block); a Command as it is. */
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

function attempt<T>(read: () => T, fallback: T): T {
  try {
    return read();
  } catch {
    return fallback;
  }
}

/** Objects on one line, cut deep and wide, running neither their own `inspect`, their getters nor a Proxy's traps. */
const INSPECT = {
  depth: 2,
  breakLength: Number.POSITIVE_INFINITY,
  compact: true,
  maxArrayLength: 20,
  customInspect: false,
  getters: false,
  showProxy: false,
} as const;

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

/** Any thrown value as readable text of at most `max` characters; never throws. */
export function describeThrown(value: unknown, max = 500): string {
  return capText(
    attempt(() => describeValue(value, max, 0), "a value that cannot be displayed"),
    max,
  );
}

/** `ToolNode`'s own error content when `error` has a message, else one that shows what was thrown; never throws. */
export function toolErrorContent(toolName: string, error: unknown): string {
  const message = stringProperty(error, "message");
  const text =
    message !== undefined && message.trim() !== "" ? message : toolThrewText(toolName, describeThrown(error));
  return toolErrorText(text);
}

/** The error ToolMessage: what was thrown, or with `tools` the unknown tool's answer ({@link unknownToolText}). */
function errorAnswer(call: Pick<ToolCall, "id" | "name">, error: unknown, tools?: readonly string[]): ToolMessage {
  const content = tools === undefined ? toolErrorContent(call.name, error) : unknownToolText(call.name, tools);
  return new ToolMessage({ status: "error", content, name: call.name, tool_call_id: call.id ?? "" });
}

/** The answer to what a tool threw; interrupts (and a drained graph) are thrown on. */
export function thrownAnswer(call: Pick<ToolCall, "id" | "name">, error: unknown, unknown?: readonly string[]) {
  if (passesThrough(error)) throw error;
  return errorAnswer(call, error, unknown);
}

/**
 * A handler's output under `wrapToolCall`, where createAgent does not turn a throw into a ToolMessage. The handler runs
 * even for an unknown tool (`tools` given), since a middleware inside may serve it.
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
  return invalid ? errorAnswer(call, undefined, tools) : output;
}
