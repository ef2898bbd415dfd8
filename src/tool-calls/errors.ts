import { missingHookMessage } from "./core/texts.js";

/**
 * Thrown when a {@link GuardedToolNode} runs in a graph whose state has no guard channels.
 *
 * @example
 * ```ts
 * // Thrown at the first run of a graph whose state lacks the guard channels:
 * createReactAgent({ llm, tools: new GuardedToolNode(tools) }); // missing stateSchema: GuardMessagesState
 * ```
 */
export class GuardStateMissingError extends Error {
  /** Always `"GuardStateMissingError"`. */
  override readonly name = "GuardStateMissingError";
  constructor() {
    super(
      "GuardedToolNode needs the guard channels in the graph state, so that its memory is checkpointed with the " +
        "thread. With createReactAgent pass `stateSchema: GuardMessagesState`; in a custom graph spread " +
        "`GuardState.spec` into your Annotation.Root (or `guardStateSchema.shape` into your zod object).",
    );
  }
}

/**
 * Thrown by a {@link GuardedToolNode} when a response reaches escalation level 3 or 4 (the model repeated a blocked
 * call that many times) and nothing ahead of the node acted on it: the agent has no {@link escalationHook} (or
 * {@link escalationNode}). The node cannot stop the run by itself (in createReactAgent the tools always lead back to
 * the model), so it fails here, naming the missing piece, instead of letting the model loop until
 * `GraphRecursionError`.
 *
 * @example
 * ```ts
 * try {
 *   await agent.invoke({ messages: [{ role: "user", content: "Go" }] });
 * } catch (e) {
 *   if (e instanceof GuardEscalationError) console.error(e.tool, e.strikes); // add escalationHook(tools)
 * }
 * ```
 */
export class GuardEscalationError extends Error {
  /** Always `"GuardEscalationError"`. */
  override readonly name = "GuardEscalationError";
  constructor(
    /** The tool whose blocked call was repeated. */
    readonly tool: string,
    /** Strikes so far: blocked repeats without progress in between. */
    readonly strikes: number,
    /** The escalation level reached (3 ask a person, 4 end the run). */
    readonly level: number,
  ) {
    super(missingHookMessage(tool, strikes, level));
  }
}
