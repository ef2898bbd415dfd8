/**
 * The run's final message from one more model call in a createAgent model call, in the agent's `responseFormat` when
 * it has one: the wrap-up is then asked with only the format's tool bound (or the provider's JSON schema, when
 * langchain uses it), so that `structuredResponse` is set as at a normal end, and a final message after it says in
 * words why the run ended. A wrap-up that does not fit the format is not retried (langchain's retry would call the
 * model again after the end): the canned message ends the run, and its reason says `structuredResponse: "missing"`.
 */
import { randomUUID } from "node:crypto";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { passesThrough } from "../common/messages.js";
import type { EndReason } from "../common/vocabulary.js";
import { graphHasChannel, type StepReading } from "./steps.js";
import { reportRunEnd } from "./sub-agents.js";
import {
  adoptId,
  finalMessage,
  type ModelCallHandler,
  type ModelCallRequest,
  type StructuredAnswer,
  type WrapUpOption,
  wrapUpInput,
} from "./wrap-up.js";

/** The messages that end the run (the final message last), and the structured response when one was given. */
export interface FinalCall {
  messages: BaseMessage[];
  structuredResponse?: unknown;
}

/**
 * The run's end from one more model call: with `wrapUp` `"model"` the agent's own model through `handler` with the
 * tools off (`toolChoice: "none"`: a provider that needs the tools to read a history of tool calls keeps them), or
 * in the agent's `responseFormat` when it has one; with `{ model }` that model; the canned message when the call
 * fails or still calls tools, and with `"canned"`. The first message takes the id `id` (or keeps its own, or gets
 * one), so that it replaces the response it ends the run at.
 *
 * @example
 * ```ts
 * const { messages, structuredResponse } = await finalModelCall(request, handler, "model", reason, response.id);
 * ```
 */
export async function finalModelCall(
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

/**
 * The end with the structured response: the model's messages (the first takes `id`), then the final message with
 * the guard's reason in words, in place of langchain's "Returning structured response" (the response is in
 * `structuredResponse`, the reason is not anywhere else).
 */
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

/** Whether a model call answered in the agent's `responseFormat`. */
function isStructured(v: unknown): v is StructuredAnswer {
  return (
    typeof v === "object" &&
    v !== null &&
    "structuredResponse" in v &&
    (v as StructuredAnswer).structuredResponse !== undefined &&
    Array.isArray((v as StructuredAnswer).messages)
  );
}

/** Whether a createAgent request has a `responseFormat` (langchain marks "none" with `__responseFormatUndefined`). */
function hasFormat(format: unknown): boolean {
  return (
    format !== undefined && format !== null && !(typeof format === "object" && "__responseFormatUndefined" in format)
  );
}

/**
 * The agent's `responseFormat` as the wrap-up asks for it: the same strategy langchain would use, with a failed parse
 * thrown instead of retried (`handleError: false`). A schema given as is becomes the provider's format when the model
 * says it has native structured output (its `profile`, as langchain reads it), else the tool strategy. Undefined
 * when the format is of a kind not known here: the wrap-up is then asked in words. langchain is loaded here, not when
 * the package is (an agent with a `responseFormat` is a createAgent, so it is installed).
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
  const profile = (model as { profile?: unknown } | null)?.profile;
  return (
    typeof profile === "object" &&
    profile !== null &&
    (profile as { structuredOutput?: unknown }).structuredOutput === true
  );
}

/**
 * A canned final message written outside a model call (a person ended the run, or no model call fits): when the
 * agent has a `responseFormat` (its graph has the `structuredResponse` channel), its reason says that the structured
 * response is missing.
 *
 * @example
 * ```ts
 * const final = withoutStructuredResponse(canned, currentStep());
 * ```
 */
export function withoutStructuredResponse(final: AIMessage, at: StepReading | undefined): AIMessage {
  if (graphHasChannel(at, "structuredResponse") !== true) return final;
  const guard = (final.response_metadata as { guard?: Record<string, unknown> }).guard ?? {};
  return new AIMessage({
    id: final.id,
    content: final.content,
    additional_kwargs: final.additional_kwargs,
    response_metadata: { ...final.response_metadata, guard: { ...guard, structuredResponse: "missing" } },
  });
}
