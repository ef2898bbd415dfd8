/**
 * The run's end at a graph hook right after the model (createReactAgent's `postModelHook`, the loop and escalation
 * nodes of a custom graph), for every guard there: the step budget (when the response's tools would not leave room
 * for another turn and an answer, the hook ends the run now, in the same step), and a guard's stop turned into the
 * final message (the model's wrap-up with `wrapUp: { model }`, else the canned one).
 */
import { randomUUID } from "node:crypto";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { type GuardStreamEvent, stopStreamEvent } from "../common/events/stream-events.js";
import { emitGuardEvents, type WriterHost } from "../common/events/writer.js";
import { lastAIMessageIndex, notRunAnswers } from "../common/messages.js";
import { type StackShape, stepsStop } from "./budget.js";
import { StepBudget } from "./invocations.js";
import { currentStep, graphHasChannel, type StepReading } from "./steps.js";
import { type WrapUpOption, withWrapUp, wrapUpModelOf, wrapUpWith } from "./wrap-up.js";

/**
 * The step budget of a graph hook: its own turn point (each hook instance sees its own steps), and the hook itself as
 * the one hook node of a turn it knows of before a turn was measured.
 */
export function hookBudget(): StepBudget {
  return new StepBudget(`hook:${randomUUID()}`, { around: 1, edges: 0 });
}

/**
 * The nodes of the graph after its answer that the step budget must leave room for: createReactAgent with a
 * `responseFormat` makes the structured response in a node of its own (`generate_structured_response`) after the
 * final message.
 */
function afterAnswer(at: StepReading): StackShape | undefined {
  return graphHasChannel(at, "branch:to:generate_structured_response") ? { around: 0, edges: 1 } : undefined;
}

/** What ends a run at a hook: the messages to add (answers to the pending calls, the final message) and the events. */
interface HookEnding {
  messages: BaseMessage[];
  log: GuardStreamEvent[];
}

/**
 * At a hook after the model: records the step, and when the latest response calls tools that would not leave room
 * for another turn and an answer, ends the run: its calls answered "Not run" and the final message (the model's
 * wrap-up with `wrapUp: { model }`, else the canned one), with the stop's guard event (written to the custom stream);
 * else undefined.
 *
 * @example
 * ```ts
 * const ending = await endIfOutOfSteps(budget, state.messages, config, { wrapUp: "canned", events: true });
 * if (ending) return { messages: ending.messages, guardLog: ending.log };
 * ```
 */
export async function endIfOutOfSteps(
  budget: StepBudget,
  messages: readonly BaseMessage[],
  host: WriterHost | undefined,
  ending: { wrapUp: WrapUpOption | undefined; events: boolean },
): Promise<HookEnding | undefined> {
  const at = currentStep();
  if (at === undefined) return undefined;
  budget.saw(at);
  const response = messages[lastAIMessageIndex(messages as BaseMessage[])];
  if (!AIMessage.isInstance(response) || (response.tool_calls ?? []).length === 0) return undefined;
  if (budget.toolTurnFits(at, afterAnswer(at))) return undefined;
  const reason = stepsStop(at.step, at.limit);
  const skipped = notRunAnswers(response, reason, messages);
  const final = await wrapUpWith(wrapUpModelOf(ending.wrapUp), [...messages, ...skipped], { ...reason });
  return { messages: [...skipped, final], log: emitGuardEvents(host, [stopStreamEvent(reason)], ending.events) };
}

/**
 * A guard's stop at a hook: the messages it wrote (answers to the held-back calls and the canned final message), with
 * the final message replaced by the model's wrap-up when `wrapUp` gives a model.
 *
 * @example
 * ```ts
 * const messages = await endAtHook(outcome.messages, state.messages, options.wrapUp);
 * ```
 */
export function endAtHook(
  ending: readonly BaseMessage[],
  conversation: readonly BaseMessage[],
  wrapUp: WrapUpOption | undefined,
): Promise<BaseMessage[]> {
  return withWrapUp(ending, conversation, wrapUpModelOf(wrapUp));
}
