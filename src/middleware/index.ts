/**
 * `langgraph-guards/middleware`: the guards as langchain `createAgent` middleware (only here: the root's types never
 * need `langchain`). The middleware is built without loading `langchain` at run time; its types come from the peer
 * `langchain`.
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
