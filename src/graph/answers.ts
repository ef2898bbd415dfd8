/** The ToolMessages the guards write in place of a tool's result, and how they read a tool's result. */
import { ToolMessage } from "@langchain/core/messages";
import type { ToolCall } from "@langchain/core/messages/tool";
import { type Command, isCommand } from "@langchain/langgraph";
import type { ToolCallDecision } from "../core/decide.js";
import type { BlockRule } from "../core/messages.js";
import { canonicalJson } from "../core/signature.js";
import type { CallOutcome } from "../core/turn.js";

/**
 * What a blocked call's ToolMessage carries in `artifact.guard` (never sent to the model).
 *
 * @example
 * ```ts
 * const guard = (message.artifact as { guard?: GuardArtifact } | undefined)?.guard;
 * if (guard?.blocked) console.log(`blocked (${guard.rule}), escalation ${guard.escalation}`);
 * ```
 */
export interface GuardArtifact {
  blocked: true;
  /** The rule the call broke. */
  rule: BlockRule;
  count: number;
  message: string;
  /** Escalation level of the block (1 ask, 2 options, 3 the user was asked, 4 the run ended); 0 when off. */
  escalation?: number | undefined;
  /** Strikes of the thread with this block. */
  strikes?: number | undefined;
  /** The call was held back with a reminder to acknowledge (no strike). */
  reminder?: boolean | undefined;
  /** At level 3: the person's answer given to the model. */
  answer?: string | undefined;
}

/** What a not-run call's ToolMessage carries in `artifact.guard` when the run stopped before it. */
export interface StopArtifact {
  stopped: true;
  kind: string;
}

/** The artifact of a blocked call's ToolMessage, from its decision. */
export function blockArtifact(decision: ToolCallDecision, extra: Partial<GuardArtifact> = {}): GuardArtifact {
  return {
    blocked: true,
    rule: decision.rule ?? "consecutive",
    count: decision.count,
    message: decision.message ?? "",
    escalation: decision.escalation,
    strikes: decision.strikes,
    reminder: decision.reminder,
    ...extra,
  };
}

/** The error ToolMessage that answers a call the guards did not run (same `tool_call_id` and `name`). */
export function guardAnswer(
  call: Pick<ToolCall, "id" | "name">,
  content: string,
  guard: GuardArtifact | StopArtifact,
): ToolMessage {
  return new ToolMessage({
    status: "error",
    name: call.name,
    tool_call_id: call.id ?? "",
    content,
    artifact: { guard },
  });
}

/**
 * Answers every pending call of a response the run stops at: a blocked call with its block's artifact, a call that
 * would have run as stopped.
 */
export function answerAll(
  calls: readonly ToolCall[],
  decisions: readonly ToolCallDecision[],
  content: (decision: ToolCallDecision) => string,
  extra: Partial<GuardArtifact>,
): ToolMessage[] {
  return calls.map((call, i) => {
    const decision = decisions[i] as ToolCallDecision;
    const guard = decision.allowed ? { stopped: true as const, kind: "escalation" } : blockArtifact(decision, extra);
    return guardAnswer(call, content(decision), guard);
  });
}

/** A tool result's text: its string content, or its blocks (text blocks as text, others as JSON). */
function resultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return canonicalJson(content);
  return content
    .map((block) => {
      if (typeof block === "string") return block;
      const text = (block as { text?: unknown })?.text;
      return typeof text === "string" ? text : canonicalJson(block);
    })
    .join("\n");
}

/**
 * What a call that ran returned, as the guards record it: its own ToolMessage (in a `Command`'s update too), or
 * for a Command without one, the update as a whole.
 */
export function outcomeOf(output: ToolMessage | Command, callId: string | undefined): CallOutcome {
  if (!isCommand(output)) return { ok: output.status !== "error", text: resultText(output.content) };
  const update = output.update as { messages?: unknown } | undefined;
  const messages = Array.isArray(update?.messages) ? update.messages : [];
  const own = messages.find((m): m is ToolMessage => ToolMessage.isInstance(m) && m.tool_call_id === callId);
  if (own !== undefined) return { ok: own.status !== "error", text: resultText(own.content) };
  return { ok: true, text: `[Command] ${canonicalJson(output.update ?? null)}` };
}
