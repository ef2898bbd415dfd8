/** A canned final message written outside a model call, in an agent with a `responseFormat`. */
import { AIMessage } from "@langchain/core/messages";
import { graphHasChannel, type StepReading } from "./steps.js";

/** The canned final message, marked `structuredResponse: "missing"` when the agent has a `responseFormat`. */
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
