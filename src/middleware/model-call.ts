/**
 * The guards' part of a createAgent model call: the run's last model call, made with the tools off (`toolChoice:
 * "none"`: a provider that needs the tools to read a history of tool calls keeps them) and asked to wrap up.
 */
import { randomUUID } from "node:crypto";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import { passesThrough } from "../agent/answers.js";
import { emitGuardEvents, type WriterHost } from "../agent/events.js";
import { atModelCall, atToolCall, currentSteps, fitsModelCallAfter, stepsStop } from "../agent/steps.js";
import type { Outcome } from "../agent/stop.js";
import type { ToolTraits } from "../agent/traits.js";
import { emptyTurnRecord, type TurnRecord } from "../agent/turn.js";
import { type EndReason, finalMessage, isWrapUpInput, reasonOf, wrapUpInput } from "../agent/wrap-up.js";
import { stopStreamEvent } from "../core/stream-events.js";

/** What the guards read of a createAgent model request. */
export interface ModelCallRequest {
  /** The messages sent to the model. */
  messages: BaseMessage[];
  /** The request's tool choice. */
  toolChoice?: unknown;
  /** The agent's state (with the middleware's channels). */
  state: unknown;
  /** The hook's runtime (its `writer` takes custom stream events). */
  runtime: unknown;
}

/** The next handler of a model call (the model, or the middleware inside this one). */
export type ModelCallHandler = (request: never) => Promise<AIMessage | Command> | AIMessage | Command;

/**
 * The run's final message from one last model call with the tools off; the canned message (the reason) when the call
 * fails or still calls tools, or without a handler (`wrapUp: "canned"`). The model's message takes the id `id` (or keeps its own, or gets one), so that the
 * final message replaces it in the conversation.
 */
export async function finalModelCall(
  request: ModelCallRequest,
  handler: ModelCallHandler | undefined,
  reason: EndReason,
  id?: string,
): Promise<AIMessage> {
  let answer: unknown;
  if (handler === undefined) return finalMessage(undefined, reason, id ?? randomUUID());
  try {
    const wrapUp = { ...request, toolChoice: "none", messages: wrapUpInput(request.messages, reason.message) };
    answer = await handler(wrapUp as never);
  } catch (error) {
    if (passesThrough(error)) throw error;
    answer = undefined;
  }
  const ownId = AIMessage.isInstance(answer) ? adoptId(answer, id) : (id ?? randomUUID());
  return finalMessage(answer, reason, ownId);
}

/** Gives the model's message the id its replacement will have (a message without one would be added, not replaced). */
export function adoptId(message: AIMessage, id: string | undefined): string {
  const chosen = id ?? message.id ?? randomUUID();
  message.id = chosen;
  (message.lc_kwargs as { id?: string }).id = chosen;
  return chosen;
}

/**
 * When the guard middleware wraps a model call, decided at each call: createAgent parses a middleware's whole state
 * again before every model call it wraps (0.3-0.5 ms a turn), so the middleware wraps only the calls that need it.
 * It wraps a call to learn the agent's tools (the first request, and the next one after a tool not seen was called),
 * to make the wrap-up a stop of the guards asked for, and to make the run's last call when LangGraph's step budget
 * would not allow another turn. createAgent looks `wrapModelCall` up at each model call; were it to keep the first
 * one it saw, every call would be wrapped, as before, and decided the same way.
 */
export class GuardModelCalls {
  /** Invocations whose next model call is a wrap-up a stop asked for (the state says it too). */
  readonly #wrapUps = new Set<object | string>();
  #learning: boolean;

  /** `agentTools` given: the tools are known, never learned from requests or calls. */
  readonly #given: boolean;

  constructor(
    private readonly traits: ToolTraits,
    agentTools: readonly unknown[] | undefined,
    private readonly options: { events: boolean; wrapUp: "model" | "canned" },
  ) {
    this.#given = agentTools !== undefined;
    this.#learning = !this.#given;
  }

  /** Puts the decision on the middleware: its `wrapModelCall` is there only for the calls to wrap. */
  install<M extends object>(middleware: M): M {
    const call = (request: ModelCallRequest & { tools: readonly unknown[] }, handler: ModelCallHandler) =>
      this.#call(request, handler);
    Object.defineProperty(middleware, "wrapModelCall", {
      get: () => (this.#wants() ? call : undefined),
      enumerable: true,
      configurable: true,
    });
    return middleware;
  }

  /** A tool call (of `tool`): its step is recorded; a tool not learned yet is learned now, and the agent's tools from the next request. */
  sawTool(tool: unknown): void {
    const at = currentSteps();
    if (at !== undefined) atToolCall(at);
    if (this.#given || this.#learning || tool === undefined || this.traits.knows(tool)) return;
    this.traits.learn([tool]);
    this.#learning = true;
  }

  /**
   * What `afterModel` writes after a stop: answered (level 3), the person's answer and back to the model; ended, the
   * held-back calls answered and, when the model may write the final message and the step budget allows one more
   * model call, back to the model for the wrap-up (the record says so), else the canned final message and the end.
   */
  afterStop(outcome: Outcome): { messages: BaseMessage[]; record: TurnRecord; jumpTo: "model" | "end" } {
    const messages = outcome.messages ?? [];
    if (outcome.kind !== "ended") return { messages, record: emptyTurnRecord(), jumpTo: "model" };
    const final = messages.at(-1);
    const at = currentSteps();
    const modelMay = this.options.wrapUp === "model" && at !== undefined && AIMessage.isInstance(final);
    if (!modelMay || !fitsModelCallAfter(at)) return { messages, record: emptyTurnRecord(), jumpTo: "end" };
    this.#wrapUps.add(at.invocation);
    const record = emptyTurnRecord({ reason: reasonOf(final, "escalation"), id: final.id ?? randomUUID() });
    return { messages: messages.slice(0, -1), record, jumpTo: "model" };
  }

  #wants(): boolean {
    if (this.#learning) return true;
    const at = currentSteps();
    return at !== undefined && (this.#wrapUps.has(at.invocation) || atModelCall(at) === "final");
  }

  async #call(request: ModelCallRequest & { tools: readonly unknown[] }, handler: ModelCallHandler) {
    if (this.#learning) {
      this.traits.learn(request.tools);
      this.#learning = false;
    }
    const at = currentSteps();
    const wrapUp = (request.state as { _guardPending?: TurnRecord })._guardPending?.wrapUp;
    if (wrapUp !== undefined) {
      if (at !== undefined) this.#wrapUps.delete(at.invocation);
      const final = await finalModelCall(request, handler, wrapUp.reason, wrapUp.id);
      return new Command({ update: { messages: [final], _guardPending: emptyTurnRecord() } });
    }
    if (at !== undefined && !isWrapUpInput(request.messages) && atModelCall(at) === "final") {
      const reason = stepsStop(at);
      const model = this.options.wrapUp === "model" ? handler : undefined;
      const final = await finalModelCall(request, model, { ...reason });
      const guardLog = emitGuardEvents(request.runtime as WriterHost, [stopStreamEvent(reason)], this.options.events);
      return new Command({ update: { messages: [final], guardLog } });
    }
    return handler(request as never);
  }
}
