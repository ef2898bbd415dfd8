/** The model's own wrap-up: one last call with its tools off, when the guards end a run; else the canned message. */
import { randomUUID } from "node:crypto";
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import type { Command } from "@langchain/langgraph";
import { messageText } from "../common/messages.js";
import type { EndReason } from "../common/vocabulary.js";
import { reportRunEnd, withStopNote } from "./sub-agents.js";
import { wrapUpInstruction } from "./texts.js";

/** The id of the instruction message (sent to the model, never stored): how a wrap-up request is recognized. */
export const WRAP_UP_ID = "langgraph-guards-wrap-up";

/** The model's input for the wrap-up: the conversation, then the instruction. */
export function wrapUpInput(messages: readonly BaseMessage[], reason: string): BaseMessage[] {
  if (isWrapUpInput(messages)) return [...messages];
  return [...messages, new HumanMessage({ id: WRAP_UP_ID, content: wrapUpInstruction(reason) })];
}

/** A canned final message's reason: its `response_metadata.guard` (`kind` if it names none), its text as message. */
export function reasonOf(canned: AIMessage, kind: string): EndReason {
  const guard = (canned.response_metadata as { guard?: Record<string, unknown> }).guard ?? {};
  return { kind, ...guard, message: messageText(canned) };
}

/** Whether the model's input already ends with the wrap-up instruction (another guard asked for it). */
export function isWrapUpInput(messages: readonly BaseMessage[]): boolean {
  return messages.at(-1)?.id === WRAP_UP_ID;
}

/** The final message: the model's answer if it is text without tool calls (the reason in its metadata), else canned. */
export function finalMessage(answer: unknown, reason: EndReason, id?: string): AIMessage {
  const usable =
    AIMessage.isInstance(answer) && (answer.tool_calls ?? []).length === 0 && messageText(answer).trim() !== "";
  const reported = reportRunEnd(reason, usable ? [messageText(answer as AIMessage)] : undefined);
  if (!usable) {
    return new AIMessage({
      id: id ?? randomUUID(),
      content: reason.message,
      response_metadata: { guard: { ...reason, wrapUp: "canned" } },
    });
  }
  const model = answer as AIMessage;
  const said = typeof model.content === "string" ? withStopNote(model.content, reason, reported) : model.content;
  return new AIMessage({
    id: id ?? model.id ?? randomUUID(),
    content: said,
    additional_kwargs: model.additional_kwargs,
    usage_metadata: model.usage_metadata,
    response_metadata: { ...model.response_metadata, guard: { ...reason, wrapUp: "model" } },
  });
}

/**
 * How a guard writes the run's final message when it ends the run, the same for every guard and adapter:
 * `"model"` (the default) asks the agent's own model once more with its tools off (createAgent; a graph hook has no
 * model of its own and writes the canned message), `{ model }` asks the chat model given, `"canned"` writes the
 * guard's own message. The canned message is also the fallback when the model's call fails or still calls tools.
 *
 * @example
 * ```ts
 * const wrapUp: WrapUpOption = { model: chatModelWithoutTools };
 * ```
 */
export type WrapUpOption =
  | "model"
  | "canned"
  | {
      /** The chat model (without tools) asked for the run's final message. */
      model: WrapUpModel;
    };

/**
 * A chat model a guard asks for the wrap-up (any LangChain chat model, without tools: its `invoke` is called with the
 * conversation and the wrap-up instruction).
 *
 * @example
 * ```ts
 * const wrapUp: { model: WrapUpModel } = { model: new ChatOpenAI({ model: "gpt-4o-mini" }) };
 * escalationHook(toolNode, { wrapUp });
 * ```
 */
export interface WrapUpModel {
  /** Answers the conversation and the wrap-up instruction. */
  invoke(input: BaseMessage[]): Promise<unknown>;
}

/** Whether `v` is a {@link WrapUpOption} (`{ model }` with a chat model, and nothing else). */
export function isWrapUpOption(v: unknown): v is WrapUpOption {
  if (v === "model" || v === "canned") return true;
  const o = v as { model?: { invoke?: unknown } } | null;
  return typeof o === "object" && o !== null && Object.keys(o).length === 1 && typeof o.model?.invoke === "function";
}

/** What a createAgent model call gives: the model's message, or a `Command` with the state's update. */
export type ModelCallResult = AIMessage | Command;

/** The next handler of a createAgent model call (the model, or the middleware inside this one). */
export type ModelCallHandler = (request: never) => Promise<ModelCallResult> | ModelCallResult;

/** What the guards read of a createAgent model request. */
export interface ModelCallRequest {
  messages: BaseMessage[];
  toolChoice?: unknown;
  responseFormat?: unknown;
  model?: unknown;
  state: unknown;
  runtime: unknown;
}

/** Gives the model's message the id its replacement will have (a message without one would be added, not replaced). */
export function adoptId(message: AIMessage, id: string | undefined): string {
  const chosen = id ?? message.id ?? randomUUID();
  message.id = chosen;
  (message.lc_kwargs as { id?: string }).id = chosen;
  return chosen;
}

/** Whether a model's message is a final message a guard wrote (it carries the guard's reason). */
export function isGuardFinal(message: unknown): boolean {
  return AIMessage.isInstance(message) && (message.response_metadata as { guard?: unknown })?.guard !== undefined;
}

/** Whether a person ended the run (their answer at level 3): their words end it, no model is asked to wrap up. */
export function endedByPerson(message: AIMessage): boolean {
  return (message.response_metadata as { guard?: { byPerson?: unknown } }).guard?.byPerson === true;
}
