/** Escalation level 3 or 4 in every adapter: end the run with an explanation, or ask a person. */
import { randomUUID } from "node:crypto";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ToolCall } from "@langchain/core/messages/tool";
import { isGraphInterrupt } from "@langchain/langgraph";
import { type GuardStreamEvent, guardStreamEvent } from "../common/events/stream-events.js";
import { emitGuardEvents, type WriterHost } from "../common/events/writer.js";
import { isPersonMessage } from "../common/messages.js";
import { askPerson, type EscalationInterrupt } from "../run-end/interrupt.js";
import { reportRunEnd } from "../run-end/sub-agents.js";
import { answerAll } from "./answers.js";
import type { ToolCallDecision } from "./core/decide.js";
import type { TurnStop } from "./core/plan.js";
import type { GuardEvent, ToolGuardState } from "./core/state.js";
import {
  endExplanation,
  HOW_TO_ANSWER,
  NO_ANSWER,
  notRunAnswer,
  personAnsweredText,
  userQuestion,
} from "./core/texts.js";
import { escalationStreamEvent, turnStreamEvents } from "./events.js";

/** What a stopped response turned into: its calls answered (level 3), or the run ended (level 4). */
export interface StopResult {
  kind: "pass" | "answered" | "ended";
  events: GuardEvent[];
  messages?: BaseMessage[];
  /** The guard events for the `guardLog` channel (already written to the custom stream). */
  log: GuardStreamEvent[];
}

interface StopEvents {
  host: WriterHost;
  on: boolean;
}

/** A run ended at level 4 and a person wrote since: they have taken over, the strikes start again. */
export function forgiveness(guard: ToolGuardState, messages: readonly BaseMessage[]): GuardEvent[] {
  const endedBy = guard.escalation?.endedBy;
  if (!endedBy) return [];
  const at = messages.findIndex((m) => m.id === endedBy);
  return at < 0 || messages.slice(at + 1).some(isPersonMessage) ? [{ type: "forgive" }] : [];
}

/** A response the run stops at, with the guards' state, the events so far, and where to write. */
interface Halt {
  response: { calls: readonly ToolCall[]; decisions: readonly ToolCallDecision[] };
  stop: TurnStop;
  guard: ToolGuardState;
  events: GuardEvent[];
  emit: StopEvents;
}

/** Level 4, or a person's "end" (`byPerson`: their answer): pending calls answered "Not run", a final message. */
function endRun({ response, stop, guard, events, emit }: Halt, byPerson?: string): StopResult {
  const { call, previousResult } = stop.decision;
  const id = randomUUID();
  const endedByUser = byPerson === undefined ? undefined : { answer: byPerson };
  const text = endExplanation({
    tool: call.name,
    args: call.args,
    strikes: stop.strikes,
    previousResult,
    alsoBlocked: guard.escalation?.blocked,
    endedByUser,
  });
  const content = () => notRunAnswer(call.name, stop.strikes, !!endedByUser);
  const notRun = answerAll(response.calls, response.decisions, content, { escalation: 4 });
  const guardReason = {
    kind: "escalation",
    level: 4,
    tool: call.name,
    strikes: stop.strikes,
    ...(endedByUser ? { byPerson: true } : {}),
  };
  reportRunEnd({ ...guardReason, message: text }); // the canned message says why, in words
  const final = new AIMessage({ id, content: text, response_metadata: { guard: guardReason } });
  const log = [...turnStreamEvents(response.decisions), escalationStreamEvent(stop, "end")];
  // After a person's "end" the stream has seen the escalation already (before the interrupt): only the log needs it.
  if (endedByUser === undefined) emitGuardEvents(emit.host, log, emit.on);
  return {
    kind: "ended",
    events: [...events, { type: "end", by: id }],
    messages: [...notRun, final],
    log: emit.on ? log : [],
  };
}

/** Level 3: a person's answer is the held-back calls' result; no checkpointer or `interrupt: false` ends the run. */
export function stopResponse(halt: Halt, interrupt: boolean): StopResult {
  const { response, stop, events, emit } = halt;
  if (stop.level >= 4 || !interrupt) return endRun(halt);
  const { call, previousResult } = stop.decision;
  const question = userQuestion(call.name, stop.strikes);
  const payload: EscalationInterrupt = {
    type: "langgraph-guards/escalation",
    level: 3,
    question,
    tool: call.name,
    args: call.args,
    attempts: stop.strikes,
    previousResult,
    calls: response.calls.map((c) => ({ id: c.id, name: c.name, args: c.args })),
    howToAnswer: HOW_TO_ANSWER,
  };
  const log = [
    ...turnStreamEvents(response.decisions),
    escalationStreamEvent(stop, "ask"),
    guardStreamEvent({ kind: "interrupt", guard: "tool-calls", tool: call.name, level: 3, message: question }),
  ];
  const reply = ask(payload, emit, log);
  if (reply === undefined) return endRun(halt);
  if (reply.action === "end") return endRun(halt, reply.answer);
  const said = reply.answer.trim() === "" ? NO_ANSWER : reply.answer;
  const content = (d: ToolCallDecision) => personAnsweredText(question, said, d.allowed || d.served !== undefined);
  const answered = answerAll(response.calls, response.decisions, content, { escalation: 3, answer: said });
  const after: GuardEvent = reply.action === "reset" ? { type: "forgive" } : { type: "acknowledge" };
  return { kind: "answered", events: [...events, after], messages: answered, log: emit.on ? log : [] };
}

/** `askPerson`; its events are streamed once, as the graph pauses (the paused run's `guardLog` update is lost). */
function ask(payload: EscalationInterrupt, emit: StopEvents, log: GuardStreamEvent[]) {
  try {
    return askPerson(payload);
  } catch (error) {
    if (isGraphInterrupt(error)) emitGuardEvents(emit.host, log, emit.on);
    throw error;
  }
}
