/**
 * `langgraph-guards/middleware`: the guards as langchain `createAgent` middleware (only here: the root's types never
 * need `langchain`). The middleware is built without loading `langchain` at run time; its types come from the peer
 * `langchain`.
 *
 * @module langgraph-guards/middleware
 */

export type { AgentTool } from "../agent/traits.js";
export type { WrapUpModel, WrapUpOption } from "../run-end/wrap-up.js";
export { fileToolsMiddleware } from "./file-tools.js";
export { type GuardMiddlewareOptions, guardMiddleware } from "./guard.js";
export { loopDetectMiddleware, type SafetyLimitsOptions, safetyLimitsMiddleware } from "./loop.js";
export { guardStack, stackShape } from "./stack.js";
