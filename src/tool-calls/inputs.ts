/** A model response as a turn of the tool-call guards (call ids made distinct). */
import type { AIMessage, BaseMessage, ToolCall } from "@langchain/core/messages";
import { distinctCallIds } from "../common/call-ids.js";
import { canonicalJson, digest } from "../common/identity/signature.js";
import { messageText, runMarker } from "../common/messages.js";
import type { ToolCallInput } from "./core/call.js";
import type { TurnInput } from "./core/plan.js";

/** A model response as a turn: its id (or its calls' ids digested), text, the calls to decide and all, ids unique. */
export function turnInput(
  message: AIMessage | undefined,
  calls: readonly ToolCall[],
  messages: readonly BaseMessage[] = [],
): TurnInput {
  const siblings = message?.tool_calls ?? [];
  const ids = distinctCallIds(siblings.map((c) => c.id));
  const all = siblings.map((c, i): ToolCallInput => ({ name: c.name, args: c.args, id: ids[i], modelId: c.id }));
  const sameCalls = calls.length === siblings.length && calls.every((c, i) => c === siblings[i]);
  const inputs = sameCalls
    ? all
    : calls.map((c): ToolCallInput => all[siblings.indexOf(c)] ?? { name: c.name, args: c.args, id: c.id });
  return {
    id: message?.id ?? digest(canonicalJson(siblings.map((c) => c.id ?? c.name))),
    text: message === undefined ? "" : messageText(message),
    calls: inputs,
    siblings: sameCalls ? inputs : all,
    run: runMarker(messages),
  };
}
