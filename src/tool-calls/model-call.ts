/** The guard middleware's model call: learning the agent's tools, the wrap-up a stop asked for, the step budget. */
import { randomUUID } from "node:crypto";
import type { BaseMessage } from "@langchain/core/messages";
import { AIMessage } from "@langchain/core/messages";
import { withoutStructuredResponse } from "../run-end/final-call.js";
import type { StepBudget } from "../run-end/invocations.js";
import {
  endModelCall,
  guardedModelCall,
  modelCallBudget,
  modelCallMayEnd,
  wrapUpFitsAfterModel,
} from "../run-end/model-call.js";
import { currentStep } from "../run-end/steps.js";
import {
  endedByPerson,
  type ModelCallHandler,
  type ModelCallRequest,
  type ModelCallResult,
  reasonOf,
  type WrapUpOption,
} from "../run-end/wrap-up.js";
import type { StopResult } from "./stop.js";
import type { ToolTraits } from "./traits.js";
import { emptyTurnRecord, type TurnRecord } from "./turn.js";

/** The guard middleware's part of each model call: the agent's tools (shown only in requests), and the run's end. */
export class GuardModelCalls {
  readonly budget: StepBudget = modelCallBudget();
  #learning: boolean;

  /** `agentTools` given: the tools are known, never learned from requests or calls. */
  readonly #given: boolean;

  constructor(
    private readonly traits: ToolTraits,
    agentTools: readonly unknown[] | undefined,
    private readonly options: { events: boolean; wrapUp: WrapUpOption },
  ) {
    this.#learning = agentTools === undefined;
    this.#given = agentTools !== undefined;
  }

  /** A tool call (of `tool`): a tool not learned yet is learned now, and the agent's tools from the next request. */
  sawTool(tool: unknown): void {
    const at = currentStep();
    if (at !== undefined) this.budget.sawNode(at);
    if (this.#given || this.#learning || tool === undefined || this.traits.knows(tool)) return;
    this.traits.learn([tool]);
    this.#learning = true;
  }

  /** What `afterModel` writes after a stop: back to the model (an answer, or a wrap-up that fits), else the end. */
  afterStop(outcome: StopResult): { messages: BaseMessage[]; record: TurnRecord; jumpTo: "model" | "end" } {
    const messages = outcome.messages ?? [];
    if (outcome.kind !== "ended") return { messages, record: emptyTurnRecord(), jumpTo: "model" };
    const final = messages.at(-1);
    if (!AIMessage.isInstance(final)) return { messages, record: emptyTurnRecord(), jumpTo: "end" };
    if (endedByPerson(final) || !wrapUpFitsAfterModel(this.budget, this.options.wrapUp)) {
      const said = [...messages.slice(0, -1), withoutStructuredResponse(final, currentStep())];
      return { messages: said, record: emptyTurnRecord(), jumpTo: "end" };
    }
    const record = emptyTurnRecord({ reason: reasonOf(final, "escalation"), id: final.id ?? randomUUID() });
    return { messages: messages.slice(0, -1), record, jumpTo: "model" };
  }

  /**
   * Installs `wrapModelCall` as a getter, there only while learning tools or when the run may end: createAgent parses
   * the middleware's whole state again before each call it wraps (0.3-0.5 ms a turn; to be reported upstream).
   * Outside a graph step (the agent being built) it is there, so that createAgent keeps it.
   */
  install<M extends object>(middleware: M): M {
    const call = (request: ModelCallRequest & { tools: readonly unknown[] }, handler: ModelCallHandler) =>
      this.#call(request, handler);
    Object.defineProperty(middleware, "wrapModelCall", {
      get: () => (this.#wraps() ? call : undefined),
      enumerable: true,
      configurable: true,
    });
    return middleware;
  }

  #wraps(): boolean {
    if (this.#learning) return true;
    const at = currentStep();
    return at === undefined || modelCallMayEnd(this.budget, at);
  }

  #call(
    request: ModelCallRequest & { tools: readonly unknown[] },
    handler: ModelCallHandler,
  ): Promise<ModelCallResult> {
    if (this.#learning) {
      this.traits.learn(request.tools);
      this.#learning = false;
    }
    return guardedModelCall(request, handler, this.budget, this.options, async () => {
      const wrapUp = (request.state as { _guardPending?: TurnRecord })._guardPending?.wrapUp;
      if (wrapUp === undefined) return handler(request as never);
      const at = currentStep();
      if (at !== undefined) this.budget.wrapUpAsked(at, false);
      const update = { _guardPending: emptyTurnRecord() };
      return endModelCall(request, handler, this.options.wrapUp, wrapUp.reason, wrapUp.id, update);
    });
  }
}
