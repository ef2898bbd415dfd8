/** The run's end in a createAgent model call: the step budget, and a guard's stop as the final message. */
import { randomUUID } from "node:crypto";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import { stopStreamEvent } from "../common/events/stream-events.js";
import { emitGuardEvents, type WriterHost } from "../common/events/writer.js";
import { passesThrough } from "../common/messages.js";
import type { EndReason, StopReason } from "../common/vocabulary.js";
import { type StackShape, stepsStop } from "./budget.js";
import { StepBudget } from "./invocations.js";
import { currentStep, readGraphChannels, type StepReading } from "./steps.js";
import { reportRunEnd } from "./sub-agents.js";
import {
  adoptId,
  finalMessage,
  isGuardFinal,
  isWrapUpInput,
  type ModelCallHandler,
  type ModelCallRequest,
  type ModelCallResult,
  type WrapUpOption,
  wrapUpInput,
} from "./wrap-up.js";

const KNOWN_CHANNELS = ["toolGuard", "runToolCallCount", "threadToolCallCount", "runModelCallCount"];

/**
 * Hooks the budget cannot see, read from the channels: `toolGuard` guardMiddleware, `runToolCallCount`
 * toolCallLimitMiddleware (one per tool it counts), `runModelCallCount` modelCallLimitMiddleware.
 */
function stackOf(at: StepReading): StackShape {
  const channels = readGraphChannels(at.config, KNOWN_CHANNELS, at);
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

/** The step budget of a middleware of the pack: its turn point is the model call, the same for all of them. */
export function modelCallBudget(): StepBudget {
  return new StepBudget("model", { around: 0, edges: 0 });
}

/** A guard's stop in a model call: the final message replaces `replace` (a response, or a message id) when given. */
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

/** A middleware's own logic let the model's response stand, with an update of its channels. */
export interface ResponseStands {
  response: AIMessage;
  update?: Record<string, unknown> | undefined;
}

function stands(v: unknown): v is ResponseStands {
  return typeof v === "object" && v !== null && AIMessage.isInstance((v as { response?: unknown }).response);
}

/** A pack middleware's model call around its logic (`inner`): a pending wrap-up passes; a run out of steps ends. */
export async function guardedModelCall(
  request: ModelCallRequest,
  handler: ModelCallHandler,
  budget: StepBudget,
  ending: { wrapUp: WrapUpOption; events: boolean },
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

/** Whether a model call at `at` needs `wrapModelCall` for the run's end (a pending wrap-up, or a tight budget). */
export function modelCallMayEnd(budget: StepBudget, at: StepReading): boolean {
  budget.saw(at);
  return budget.wrapUpPending(at) || !budget.toolTurnFits(at, stackOf(at));
}

function wantsTools(response: unknown): boolean {
  return AIMessage.isInstance(response) && (response.tool_calls ?? []).length > 0;
}

/** After `afterModel` ended the run (level 4): whether the run may go back to the model for its wrap-up. */
export function wrapUpFitsAfterModel(budget: StepBudget, wrapUp: WrapUpOption): boolean {
  const at = currentStep();
  if (at === undefined || wrapUp === "canned") return false;
  budget.sawNode(at);
  const fits = budget.modelCallFitsAfter(at, stackOf(at));
  budget.wrapUpAsked(at, fits);
  return fits;
}

interface FinalCall {
  messages: BaseMessage[];
  structuredResponse?: unknown;
}

/** A model call's answer in the `responseFormat` (passed through as is, though langchain's types say otherwise). */
interface StructuredAnswer {
  structuredResponse: unknown;
  messages: BaseMessage[];
}

/**
 * The run's end from one more model call: `"model"` through `handler` with `toolChoice: "none"` (some providers need
 * the tools to read a tool-call history) or a strict `responseFormat` (a retry would call the model after the end);
 * `{ model }` that model; else, or on failure, the canned message. The first message takes `id`.
 */
async function finalModelCall(
  request: ModelCallRequest,
  handler: ModelCallHandler,
  wrapUp: WrapUpOption,
  reason: EndReason,
  id?: string,
): Promise<FinalCall> {
  const format = hasFormat(request.responseFormat);
  const missing: EndReason = format ? { ...reason, structuredResponse: "missing" } : reason;
  if (wrapUp === "canned") return { messages: [finalMessage(undefined, missing, id ?? randomUUID())] };
  const input = wrapUpInput(request.messages, reason.message);
  const strict = format && wrapUp === "model" ? await strictFormat(request.responseFormat, request.model) : undefined;
  let answer: unknown;
  try {
    if (typeof wrapUp === "object") answer = await wrapUp.model.invoke(input);
    else if (strict === undefined) answer = await handler({ ...request, toolChoice: "none", messages: input } as never);
    else {
      const asked = { ...request, messages: input, tools: [], toolChoice: undefined, responseFormat: strict };
      answer = await handler(asked as never);
    }
  } catch (error) {
    if (passesThrough(error)) throw error;
    answer = undefined;
  }
  if (isStructured(answer)) return structuredEnd(answer, reason, id);
  const ownId = AIMessage.isInstance(answer) ? adoptId(answer, id) : (id ?? randomUUID());
  return { messages: [finalMessage(answer, missing, ownId)] };
}

/** The model's messages (the first takes `id`), then the reason, in place of "Returning structured response". */
function structuredEnd(answer: StructuredAnswer, reason: EndReason, id: string | undefined): FinalCall {
  const [first, ...rest] = answer.messages;
  if (AIMessage.isInstance(first)) adoptId(first, id);
  const said = rest.at(-1);
  const kept = AIMessage.isInstance(said) && (said.tool_calls ?? []).length === 0 ? rest.slice(0, -1) : rest;
  // What a tool hands back of the run: its final message, or the response as JSON (deepagents' `task`).
  reportRunEnd(reason, [reason.message, JSON.stringify(answer.structuredResponse)]);
  const final = new AIMessage({
    id: randomUUID(),
    content: reason.message,
    response_metadata: { guard: { ...reason, wrapUp: "model", structuredResponse: "given" } },
  });
  return {
    messages: [...(first === undefined ? [] : [first]), ...kept, final],
    structuredResponse: answer.structuredResponse,
  };
}

function isStructured(v: unknown): v is StructuredAnswer {
  const a = v as Partial<StructuredAnswer> | null;
  return typeof a === "object" && a !== null && a.structuredResponse !== undefined && Array.isArray(a.messages);
}

/** Whether a createAgent request has a `responseFormat` (langchain marks "none" with `__responseFormatUndefined`). */
function hasFormat(format: unknown): boolean {
  return (
    format !== undefined && format !== null && !(typeof format === "object" && "__responseFormatUndefined" in format)
  );
}

/**
 * The `responseFormat` with a failed parse thrown, not retried (`handleError: false`); undefined for an unknown kind.
 * langchain is loaded only here: an agent with a `responseFormat` is a createAgent, so it is installed.
 */
async function strictFormat(format: unknown, model: unknown): Promise<unknown> {
  try {
    const { ProviderStrategy, ToolStrategy, toolStrategy } = await import("langchain");
    const list: unknown[] = Array.isArray(format) ? format : [format];
    if (list.every((s) => s instanceof ToolStrategy || s instanceof ProviderStrategy)) {
      // A copy of the same class (langchain tells the strategies apart by class; the constructor is private), with
      // the same tool: the model is asked to call the tool the agent's format names.
      const strict = list.map((s) =>
        s instanceof ToolStrategy
          ? Object.assign(Object.create(ToolStrategy.prototype) as object, s, {
              options: { ...s.options, handleError: false },
            })
          : s,
      );
      return Array.isArray(format) ? strict : strict[0];
    }
    if (!Array.isArray(format) && nativeOutput(model)) return format;
    return toolStrategy(format as never, { handleError: false });
  } catch {
    return undefined;
  }
}

/** Whether a chat model says it has native structured output (`profile.structuredOutput`), as langchain reads it. */
function nativeOutput(model: unknown): boolean {
  const profile = (model as { profile?: { structuredOutput?: unknown } | null } | null)?.profile;
  return typeof profile === "object" && profile?.structuredOutput === true;
}
