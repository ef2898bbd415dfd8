/**
 * The step budget at a graph hook right after the model (createReactAgent's `postModelHook`, the loop and escalation
 * nodes): when the next turn would run past LangGraph's `recursionLimit`, the hook ends the run now, in words.
 */
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { type GuardStreamEvent, stopStreamEvent } from "../core/stream-events.js";
import { emitGuardEvents, type WriterHost } from "./events.js";
import { notRunAnswers } from "./loop-turn.js";
import { lastAIMessageIndex } from "./messages.js";
import { currentSteps, mustEndAtHook, stepsStop } from "./steps.js";
import { wrapUpWith } from "./wrap-up.js";

/**
 * When the model's latest response calls tools and the step budget would not allow the next turn to end in time:
 * its calls answered "Not run" and the final message (the model's wrap-up when `model` is given, else the canned
 * one), and the stop's guard event (written to the custom stream); else undefined.
 *
 * @example
 * ```ts
 * const ending = await endIfOutOfSteps(state.messages, config, true, undefined);
 * if (ending) return { messages: ending.messages, guardLog: ending.log };
 * ```
 */
export async function endIfOutOfSteps(
  messages: readonly BaseMessage[],
  host: WriterHost | undefined,
  events: boolean,
  model: { invoke(input: BaseMessage[]): Promise<unknown> } | undefined,
): Promise<{ messages: BaseMessage[]; log: GuardStreamEvent[] } | undefined> {
  const at = currentSteps();
  const response = messages[lastAIMessageIndex(messages as BaseMessage[])];
  if (at === undefined || !AIMessage.isInstance(response) || (response.tool_calls ?? []).length === 0) return undefined;
  if (!mustEndAtHook(at)) return undefined;
  const reason = stepsStop(at);
  const skipped = notRunAnswers(response, reason, messages);
  const final = await wrapUpWith(model, [...messages, ...skipped], { ...reason });
  return { messages: [...skipped, final], log: emitGuardEvents(host, [stopStreamEvent(reason)], events) };
}
