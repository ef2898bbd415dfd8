/**
 * `langgraph-guards/middleware`: the guards as langchain `createAgent` middleware (only here: the root's types never
 * need `langchain`). Nothing loads `langchain` at run time; only the types come from the peer.
 *
 * @module langgraph-guards/middleware
 */

export { guardSubAgents } from "../common/agent/sub-agents.js";
export { fileToolsMiddleware } from "../fs/middleware.js";
export { loopDetectMiddleware, type SafetyLimitsOptions, safetyLimitsMiddleware } from "../loop/middleware.js";
export { guardStack, stackShape } from "../run-end/stack.js";
export type { WrapUpModel, WrapUpOption } from "../run-end/wrap-up.js";
export { type GuardMiddlewareOptions, guardMiddleware } from "../tool-calls/middleware.js";
export type { AgentTool } from "../tool-calls/traits.js";
