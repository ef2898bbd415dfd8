/** The tool-call guards' stream events: one per decision worth telling, and a response's escalation. */
import { type GuardStreamEvent, guardStreamEvent } from "../common/events/stream-events.js";
import type { ToolCallDecision } from "./core/decide.js";
import type { TurnStop } from "./core/plan.js";
import { EVENT_TEXTS } from "./core/texts.js";

/** The near-miss event of a call that ran with a reminder after its result. */
function reminderEvent(
  d: ToolCallDecision,
  rule: "file_edits" | "repeat_ceiling",
  count: number,
  message: string,
): GuardStreamEvent {
  const { call } = d;
  return guardStreamEvent({
    kind: "near-miss",
    guard: "tool-calls",
    ...{ tool: call.name, callId: call.id, args: call.args, count },
    rule,
    message,
  });
}

/** The event of one decision, or none (a call that ran and repeats nothing). */
function decisionEvent(d: ToolCallDecision): GuardStreamEvent | undefined {
  if (d.served !== undefined) {
    const { call } = d;
    const reminder = d.repeats?.reminder;
    const served = { kind: "cache" as const, guard: "tool-calls" as const, tool: call.name, callId: call.id };
    const count = d.repeats?.calls;
    const message = reminder ?? d.content ?? EVENT_TEXTS.served;
    return guardStreamEvent({ ...served, args: call.args, count, message });
  }
  if (d.allowed && d.fileEdits?.reminder !== undefined) {
    return reminderEvent(d, "file_edits", d.fileEdits.writes, d.fileEdits.reminder);
  }
  if (d.allowed && d.repeats?.reminder !== undefined) {
    return reminderEvent(d, "repeat_ceiling", d.repeats.calls, d.repeats.reminder);
  }
  if (d.allowed && !d.observed && d.count < 2) return undefined; // a new call: nothing to tell
  const call = { tool: d.call.name, callId: d.call.id, args: d.call.args, count: d.count };
  if (!d.allowed) {
    const escalation = d.escalation ? { level: d.escalation, strikes: d.strikes } : {};
    const message = d.reminder ? EVENT_TEXTS.reminder : d.message;
    return guardStreamEvent({ kind: "blocked", guard: "tool-calls", ...call, rule: d.rule, ...escalation, message });
  }
  if (d.observed) return guardStreamEvent({ kind: "observed", guard: "tool-calls", ...call, rule: d.rule });
  return guardStreamEvent({ kind: "near-miss", guard: "tool-calls", ...call }); // allowed, 2+ in the window
}

/**
 * The guard events of a response's decisions: one per call blocked, served, observed, or let through although it
 * repeats an earlier call.
 *
 * @example
 * ```ts
 * const plan = planTurn(state, turn, options);
 * for (const event of turnStreamEvents(plan.decisions)) writer(event);
 * ```
 */
export function turnStreamEvents(decisions: readonly ToolCallDecision[]): GuardStreamEvent[] {
  return decisions.flatMap((d) => decisionEvent(d) ?? []);
}

/**
 * The event of a response that reached escalation level 3 or 4: a person is asked, or the run ends.
 *
 * @example
 * ```ts
 * if (plan.stop) writer(escalationStreamEvent(plan.stop, plan.stop.level >= 4 ? "end" : "ask"));
 * ```
 */
export function escalationStreamEvent(stop: TurnStop, action: "ask" | "end"): GuardStreamEvent {
  const { call, rule } = stop.decision;
  return guardStreamEvent({
    kind: "escalation",
    guard: "tool-calls",
    tool: call.name,
    callId: call.id,
    args: call.args,
    rule,
    level: stop.level,
    strikes: stop.strikes,
    message: action === "end" ? EVENT_TEXTS.ends : EVENT_TEXTS.asks,
  });
}
