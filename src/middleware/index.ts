/** `langgraph-guards/middleware`: the guards as langchain `createAgent` middleware. */
export { type GuardMiddlewareOptions, guardMiddleware } from "./guard.js";
