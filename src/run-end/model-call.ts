/**
 * The run's end in a createAgent model call, for every middleware of the pack: the step budget after the model's
 * response (its tools run only when another turn and an answer still fit `recursionLimit`; otherwise the run ends
 * in the same step, with the model's wrap-up), and a guard's stop (a loop, a limit, a wrap-up the guard's
 * `afterModel` asked for) turned into the final message that replaces the response.
 */
import { AIMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import { stopStreamEvent } from "../common/events/stream-events.js";
import { emitGuardEvents, type WriterHost } from "../common/events/writer.js";
import type { EndReason, StopReason } from "../common/vocabulary.js";
import { type StackShape, stepsStop } from "./budget.js";
import { finalModelCall } from "./final-call.js";
import { StepBudget } from "./invocations.js";
import { currentStep, readGraphChannels, type StepReading } from "./steps.js";
import {
  adoptId,
  isGuardFinal,
  isWrapUpInput,
  type ModelCallHandler,
  type ModelCallRequest,
  type ModelCallResult,
  type WrapUpOption,
} from "./wrap-up.js";

/**
 * Middleware that the pack knows by their state channels, and the hook nodes each adds: a `toolGuard` channel is
 * `guardMiddleware` (one `afterModel`), `runToolCallCount` is `toolCallLimitMiddleware` (`afterModel`,
 * `afterAgent`; one per tool it counts, named in `threadToolCallCount`), `runModelCallCount` is
 * `modelCallLimitMiddleware` (`beforeModel`, `afterModel`, `afterAgent`; createAgent takes it once).
 */
const KNOWN_CHANNELS = ["toolGuard", "runToolCallCount", "threadToolCallCount", "runModelCallCount"];

/**
 * The hook nodes of a createAgent stack that its channels show (the middleware the pack knows by their channels):
 * the step budget's estimate of hooks it cannot see, before a turn was measured and for the agent's own hooks.
 *
 * @example
 * ```ts
 * stackFromChannels({ toolGuard: {}, runToolCallCount: {} }); // { around: 2, edges: 1 }
 * ```
 */
function stackFromChannels(channels: Record<string, unknown> | undefined): StackShape {
  const shape = { around: 0, edges: 0 };
  if (channels === undefined) return shape;
  if ("toolGuard" in channels) shape.around += 1;
  if ("runToolCallCount" in channels) {
    const counted = new Set([
      ...Object.keys((channels.runToolCallCount as object | null) ?? {}),
      ...Object.keys((channels.threadToolCallCount as object | null) ?? {}),
    ]);
    const limits = Math.max(1, counted.size);
    shape.around += limits;
    shape.edges += limits;
  }
  if ("runModelCallCount" in channels) {
    shape.around += 2;
    shape.edges += 1;
  }
  return shape;
}

/**
 * The step budget of a middleware of the pack: its turn point is the model call (the same for every middleware of
 * an agent, whichever sees it); the hooks it knows of are counted from the graph's channels at each decision.
 */
export function modelCallBudget(): StepBudget {
  return new StepBudget("model", { around: 0, edges: 0 });
}

/** How a middleware ends a run: its `wrapUp`, and whether its guard events are on. */
interface ModelCallEnding {
  wrapUp: WrapUpOption;
  events: boolean;
}

/**
 * A guard's stop in a model call: the final message (the model's wrap-up, or the canned one) replaces `replace` when
 * given (a response, whose tool calls never run, or the id of a message), and goes with `update` to the state.
 */
export async function endModelCall(
  request: ModelCallRequest,
  handler: ModelCallHandler,
  wrapUp: WrapUpOption,
  reason: EndReason,
  replace: AIMessage | string | undefined,
  update: Record<string, unknown> = {},
): Promise<Command> {
  const id = replace === undefined || typeof replace === "string" ? replace : adoptId(replace, undefined);
  const { messages, structuredResponse } = await finalModelCall(request, handler, wrapUp, reason, id);
  const structured = structuredResponse === undefined ? {} : { structuredResponse };
  return new Command({ update: { ...update, ...structured, messages } });
}

/**
 * What a middleware's own logic gives its model call: the model's response, which stands (with an update of the
 * middleware's channels), or anything else (a `Command` that ended the run, a response it did not look at).
 */
export interface ResponseStands {
  response: AIMessage;
  update?: Record<string, unknown> | undefined;
}

function stands(v: unknown): v is ResponseStands {
  return typeof v === "object" && v !== null && AIMessage.isInstance((v as { response?: unknown }).response);
}

/**
 * The model call of a middleware of the pack, around its own logic (`inner`): the call is recorded in the step
 * budget; a wrap-up another guard asked for passes through; after `inner` answers, a response whose tools would not
 * leave room for another turn and an answer ends the run there, in the same step: the model's wrap-up (or the canned
 * message) replaces it, with a `steps` stop event.
 */
export async function guardedModelCall(
  request: ModelCallRequest,
  handler: ModelCallHandler,
  budget: StepBudget,
  ending: ModelCallEnding,
  inner: () => Promise<ModelCallResult | ResponseStands>,
): Promise<ModelCallResult> {
  if (isWrapUpInput(request.messages)) return handler(request as never);
  const at = currentStep();
  if (at !== undefined) budget.saw(at);
  const result = await inner();
  const response = stands(result) ? result.response : result;
  const update = stands(result) ? (result.update ?? {}) : {};
  const keep = (): ModelCallResult => (Object.keys(update).length > 0 ? new Command({ update }) : response);
  if (at === undefined || !wantsTools(response) || isGuardFinal(response)) return keep();
  if (budget.toolTurnFits(at, stackOf(at))) return keep();
  const reason: StopReason = stepsStop(at.step, at.limit);
  const events = emitGuardEvents(request.runtime as WriterHost, [stopStreamEvent(reason)], ending.events);
  const guardLog = [...((update.guardLog as unknown[] | undefined) ?? []), ...events];
  return endModelCall(request, handler, ending.wrapUp, { ...reason }, response as AIMessage, { ...update, guardLog });
}

/**
 * Whether a model call at `at` needs a middleware's `wrapModelCall` for the run's end: a wrap-up is pending, or a
 * response that asks for tools would end the run (no room for another turn and an answer). Far from the limit, it
 * does not: createAgent then skips the middleware's `wrapModelCall`, and with it the parse of its state (0.3-0.5 ms).
 */
export function modelCallMayEnd(budget: StepBudget, at: StepReading): boolean {
  budget.saw(at);
  return budget.wrapUpPending(at) || !budget.toolTurnFits(at, stackOf(at));
}

/** The hooks of the agent's stack that the guards know by its channels. */
function stackOf(at: StepReading): StackShape {
  return stackFromChannels(readGraphChannels(at.config, KNOWN_CHANNELS, at));
}

/** Whether a model's response asks for tools. */
function wantsTools(response: unknown): boolean {
  return AIMessage.isInstance(response) && (response.tool_calls ?? []).length > 0;
}

/**
 * createAgent's `afterModel` hook of the guard ended the run (level 4): whether the run may go back to the model for
 * its wrap-up (with `wrapUp` other than `"canned"` and room for one more model call in the step budget), or must end
 * now with the canned message.
 */
export function wrapUpFitsAfterModel(budget: StepBudget, wrapUp: WrapUpOption): boolean {
  const at = currentStep();
  if (at === undefined || wrapUp === "canned") return false;
  budget.sawNode(at);
  const fits = budget.modelCallFitsAfter(at, stackOf(at));
  budget.wrapUpAsked(at, fits);
  return fits;
}
