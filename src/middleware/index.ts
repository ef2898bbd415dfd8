/** `langgraph-guards/middleware`: the guards as langchain `createAgent` middleware (needs the peer `langchain`). */
export { type GuardMiddlewareOptions, guardMiddleware } from "./guard.js";
export { loopDetectMiddleware } from "./loop.js";
