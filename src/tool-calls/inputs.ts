/** A model response's calls as the tool-call guards decide them (ids made distinct), and the response as a turn. */

import type { AIMessage, BaseMessage, ToolCall } from "@langchain/core/messages";
import { distinctCallIds } from "../common/call-ids.js";
import { canonicalJson, digest } from "../common/identity/signature.js";
import { messageText, runMarker } from "../common/messages.js";
import type { ToolCallInput } from "./core/call.js";
import type { TurnInput } from "./core/plan.js";

const toInput = (call: ToolCall, id: string | undefined = call.id): ToolCallInput => ({
  name: call.name,
  args: call.args,
  id,
});

/**
 * The calls as the guards decide them: each with the id the guards know it by ({@link distinctCallIds} over the whole
 * response `siblings`: a call whose id is empty or shared with another call of the response gets one of its own).
 * `calls` are some of `siblings` (the same objects), or all of them.
 *
 * @example
 * ```ts
 * callInputs(aiMessage.tool_calls).map((c) => c.id); // ["x#1", "x#2"] for two calls that share the id "x"
 * ```
 */
export function callInputs(siblings: readonly ToolCall[], calls: readonly ToolCall[] = siblings): ToolCallInput[] {
  const ids = distinctCallIds(siblings.map((c) => c.id));
  if (calls === siblings) return siblings.map((c, i) => toInput(c, ids[i]));
  return calls.map((c) => {
    const at = siblings.indexOf(c);
    return at < 0 ? toInput(c) : toInput(c, ids[at]);
  });
}

/**
 * A model response as the turn procedure takes it: its id (or one derived from its calls' ids), its text, the calls
 * to decide and all of its calls.
 *
 * @example
 * ```ts
 * planTurn(state.toolGuard, turnInput(aiMessage, unansweredCalls(aiMessage, state.messages)), options);
 * ```
 */
export function turnInput(
  message: AIMessage | undefined,
  calls: readonly ToolCall[],
  messages: readonly BaseMessage[] = [],
): TurnInput {
  const siblings = message?.tool_calls ?? [];
  const sameCalls = calls.length === siblings.length && calls.every((c, i) => c === siblings[i]);
  const all = callInputs(siblings);
  const inputs = sameCalls ? all : callInputs(siblings, calls);
  return {
    id: message?.id ?? digest(canonicalJson(siblings.map((c) => c.id ?? c.name))),
    text: message === undefined ? "" : messageText(message),
    calls: inputs,
    siblings: sameCalls ? inputs : all,
    run: runMarker(messages),
  };
}
