/** The run's end at a graph hook right after the model: the step budget, and a guard's stop as the final message. */
import { randomUUID } from "node:crypto";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { type GuardStreamEvent, stopStreamEvent } from "../common/events/stream-events.js";
import { emitGuardEvents, type WriterHost } from "../common/events/writer.js";
import { lastAIMessageIndex, notRunAnswers } from "../common/messages.js";
import type { EndReason } from "../common/vocabulary.js";
import { stepsStop } from "./budget.js";
import { StepBudget } from "./invocations.js";
import { currentStep, graphHasChannel } from "./steps.js";
import { endedByPerson, finalMessage, reasonOf, type WrapUpModel, type WrapUpOption, wrapUpInput } from "./wrap-up.js";

/** The step budget of a graph hook: a turn point of its own, and itself the one hook node of a turn it knows of. */
export function hookBudget(): StepBudget {
  return new StepBudget(`hook:${randomUUID()}`, { around: 1, edges: 0 });
}

/**
 * At a hook after the model: records the step; when the response's tools would leave no room for another turn and
 * an answer, ends the run in this step (its calls answered "Not run", the final message, the stop's event).
 */
export async function endIfOutOfSteps(
  budget: StepBudget,
  messages: readonly BaseMessage[],
  host: WriterHost | undefined,
  ending: { wrapUp: WrapUpOption | undefined; events: boolean },
): Promise<{ messages: BaseMessage[]; log: GuardStreamEvent[] } | undefined> {
  const at = currentStep();
  if (at === undefined) return undefined;
  budget.saw(at);
  const response = messages[lastAIMessageIndex(messages as BaseMessage[])];
  if (!AIMessage.isInstance(response) || (response.tool_calls ?? []).length === 0) return undefined;
  // createReactAgent with a `responseFormat` makes the structured response in a node of its own after the answer.
  const after = graphHasChannel(at, "branch:to:generate_structured_response") ? { around: 0, edges: 1 } : undefined;
  if (budget.toolTurnFits(at, after)) return undefined;
  const reason = stepsStop(at.step, at.limit);
  const skipped = notRunAnswers(response, reason, messages);
  const final = await wrapUpWith(modelOf(ending.wrapUp), [...messages, ...skipped], { ...reason });
  return { messages: [...skipped, final], log: emitGuardEvents(host, [stopStreamEvent(reason)], ending.events) };
}

/**
 * A guard's stop at a hook: the messages it wrote, the canned final message last replaced by the model's wrap-up
 * when `wrapUp` gives a model (never after a person ended the run).
 */
export async function endAtHook(
  ending: readonly BaseMessage[],
  conversation: readonly BaseMessage[],
  wrapUp: WrapUpOption | undefined,
): Promise<BaseMessage[]> {
  const canned = ending.at(-1);
  const model = modelOf(wrapUp);
  if (model === undefined || !AIMessage.isInstance(canned) || endedByPerson(canned)) return [...ending];
  const asked = [...conversation, ...ending.slice(0, -1)];
  return [...ending.slice(0, -1), await wrapUpWith(model, asked, reasonOf(canned, "guard"), canned.id)];
}

/** A graph hook has no model of its own: it asks the one given, else writes the canned message. */
function modelOf(option: WrapUpOption | undefined): WrapUpModel | undefined {
  return typeof option === "object" ? option.model : undefined;
}

/** The final message from `model`'s wrap-up; never throws: a failure gives the canned message. */
async function wrapUpWith(
  model: WrapUpModel | undefined,
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
