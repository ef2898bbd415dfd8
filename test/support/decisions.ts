/** What the guards did with each tool call, read from a live conversation or from a replay, in one comparable form. */
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { GuardArtifact } from "../../src/index.js";
import type { ReplayDecision } from "../../src/replay/index.js";

export interface Decided {
  id: string | undefined;
  action: "allow" | "block" | "stop" | "cache";
  rule?: string | undefined;
  escalation?: number | undefined;
  content: string;
}

/** Each answered call of each AI message, in call order, with what its ToolMessage says was done. */
export function liveDecisions(messages: BaseMessage[]): Decided[] {
  const replies = new Map(
    messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m)).map((m) => [m.tool_call_id, m]),
  );
  return messages
    .filter((m): m is AIMessage => AIMessage.isInstance(m))
    .flatMap((m) => m.tool_calls ?? [])
    .flatMap((c) => {
      const reply = replies.get(c.id as string);
      if (reply === undefined) return []; // not answered (yet)
      const guard = (reply.artifact as { guard?: GuardArtifact } | undefined)?.guard;
      const action = (guard?.escalation ?? 0) >= 3 ? "stop" : guard ? "block" : "allow";
      const blocked = action === "block";
      return [
        {
          id: c.id,
          action,
          rule: blocked ? guard?.rule : undefined,
          escalation: blocked ? guard?.escalation : undefined,
          content: String(reply.content),
        },
      ];
    });
}

/** Replay's decisions in the same form, with the live calls' ids (replay does not keep them) in order. */
export function replayedDecisions(
  decisions: readonly ReplayDecision[],
  ids: readonly (string | undefined)[],
): Decided[] {
  return decisions.map((d, i) => ({
    id: ids[i],
    action: d.action,
    rule: d.action === "block" ? d.rule : undefined,
    escalation: d.action === "block" ? d.escalation : undefined,
    content: d.content,
  }));
}
