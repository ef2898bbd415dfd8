// The guards for every sub-agent of a deep agent: in deepagents the main agent's `middleware` reaches no sub-agent.
import type { AgentMiddleware } from "langchain";

/**
 * Gives each declared sub-agent of the list its own guards (`guards()` once per sub-agent: no two agents share a
 * guard's memory), before the middleware it declares; a guard it declares itself (by name) is kept in place of the
 * new one. A compiled sub-agent (`runnable`) or a remote one (`graphId`) is left as it is: give it the guards where
 * it is built. Put deepagents' `GENERAL_PURPOSE_SUBAGENT` in the list: it replaces the built-in general-purpose
 * sub-agent, which gets no middleware of yours (give it `skills` if the main agent has them: the built-in inherits
 * them, a declared one does not).
 *
 * @example
 * ```ts
 * import { createDeepAgent, GENERAL_PURPOSE_SUBAGENT } from "deepagents";
 * import { guardMiddleware, guardSubAgents, loopDetectMiddleware } from "langgraph-guards/middleware";
 *
 * const guards = () => [guardMiddleware(), loopDetectMiddleware({ maxIterations: 40 })];
 * const agent = createDeepAgent({
 *   model,
 *   tools,
 *   middleware: guards(),
 *   subagents: guardSubAgents(guards, [GENERAL_PURPOSE_SUBAGENT, researcher]),
 * });
 * ```
 */
export function guardSubAgents<S extends object>(
  guards: () => readonly AgentMiddleware[],
  subagents: readonly S[],
): S[] {
  return subagents.map((spec) => {
    if ("runnable" in spec || "graphId" in spec) return spec;
    const own = (spec as { middleware?: readonly AgentMiddleware[] }).middleware ?? [];
    const added = guards().filter((guard) => !own.some((m) => m.name === guard.name));
    return { ...spec, middleware: [...added, ...own] };
  });
}
