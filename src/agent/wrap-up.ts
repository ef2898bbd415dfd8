/**
 * The model's own wrap-up: when the guards end a run and a model is at hand, one last call with its tools off asks
 * what was done, what failed and what is left; its answer is the run's final message, with the guard's reason in
 * its metadata. The canned message is the fallback: no model, the call fails, or it still calls tools.
 */
import { randomUUID } from "node:crypto";
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { wrapUpInstruction } from "../core/feedback-texts.js";
import { messageText } from "./messages.js";

/** The id of the instruction message (sent to the model, never stored): how a wrap-up request is recognized. */
export const WRAP_UP_ID = "langgraph-guards-wrap-up";

/** Why the run ends, as the final message's `response_metadata.guard` carries it. */
export interface EndReason {
  /** Which guard or limit ended the run (`"steps"`, `"loop"`, `"iterations"`, `"escalation"`, …). */
  kind: string;
  /** The canned message: the reason in words, and the fallback final message. */
  message: string;
  /** More of the guard's reason (level, tool, value, limit…). */
  [key: string]: unknown;
}

/**
 * The model's input for the wrap-up: the conversation, then the instruction.
 *
 * @example
 * ```ts
 * const input = wrapUpInput(messages, stepBudgetReason(25));
 * ```
 */
export function wrapUpInput(messages: readonly BaseMessage[], reason: string): BaseMessage[] {
  if (isWrapUpInput(messages)) return [...messages];
  return [...messages, new HumanMessage({ id: WRAP_UP_ID, content: wrapUpInstruction(reason) })];
}

/**
 * The reason of a canned final message a guard wrote: its `response_metadata.guard` and its text as the message
 * (`kind` when the metadata names none).
 */
export function reasonOf(canned: AIMessage, kind: string): EndReason {
  const guard = (canned.response_metadata as { guard?: Record<string, unknown> }).guard ?? {};
  return { kind, ...guard, message: messageText(canned) };
}

/** Whether the model's input already ends with the wrap-up instruction (another guard asked for it). */
export function isWrapUpInput(messages: readonly BaseMessage[]): boolean {
  return messages.at(-1)?.id === WRAP_UP_ID;
}

/**
 * The final message of a run the guards end: the model's answer when it is a text without tool calls (with the
 * guard's reason in its metadata), else the canned message. `id` replaces a message already in the conversation
 * (the response the run stops at).
 *
 * @example
 * ```ts
 * const final = finalMessage(await model.invoke(wrapUpInput(messages, reason.message)), reason);
 * ```
 */
export function finalMessage(answer: unknown, reason: EndReason, id?: string): AIMessage {
  const usable =
    AIMessage.isInstance(answer) && (answer.tool_calls ?? []).length === 0 && messageText(answer).trim() !== "";
  if (!usable) {
    return new AIMessage({
      id: id ?? randomUUID(),
      content: reason.message,
      response_metadata: { guard: { ...reason, wrapUp: "canned" } },
    });
  }
  const model = answer as AIMessage;
  return new AIMessage({
    id: id ?? model.id ?? randomUUID(),
    content: model.content,
    additional_kwargs: model.additional_kwargs,
    usage_metadata: model.usage_metadata,
    response_metadata: { ...model.response_metadata, guard: { ...reason, wrapUp: "model" } },
  });
}

/**
 * Asks a model (a chat model without tools bound, given to a graph's guard hook) for the wrap-up; never throws: a
 * failure gives the canned message.
 *
 * @example
 * ```ts
 * const final = await wrapUpWith(model, state.messages, { kind: "steps", message: stepBudgetReason(25) });
 * ```
 */
export async function wrapUpWith(
  model: { invoke(input: BaseMessage[]): Promise<unknown> } | undefined,
  messages: readonly BaseMessage[],
  reason: EndReason,
  id?: string,
): Promise<AIMessage> {
  if (model === undefined) return finalMessage(undefined, reason, id);
  try {
    return finalMessage(await model.invoke(wrapUpInput(messages, reason.message)), reason, id);
  } catch {
    return finalMessage(undefined, reason, id);
  }
}

/**
 * A graph hook's final messages with the model's wrap-up: the last message of `ending` (the canned final message the
 * guard wrote) is replaced by the model's answer, asked with the conversation and the held-back calls' answers; the
 * canned message stays when there is no model or its answer cannot be a final message.
 *
 * @example
 * ```ts
 * const messages = await withWrapUp(outcome.messages, state.messages, model);
 * ```
 */
export async function withWrapUp(
  ending: readonly BaseMessage[],
  conversation: readonly BaseMessage[],
  model: { invoke(input: BaseMessage[]): Promise<unknown> } | undefined,
): Promise<BaseMessage[]> {
  const canned = ending.at(-1);
  if (model === undefined || !AIMessage.isInstance(canned)) return [...ending];
  const final = await wrapUpWith(
    model,
    [...conversation, ...ending.slice(0, -1)],
    reasonOf(canned, "guard"),
    canned.id,
  );
  return [...ending.slice(0, -1), final];
}
