/**
 * langchain's `createMiddleware`, typed by langchain but built here: the middleware is a plain branded object
 * (langchain 1.5 builds exactly this), so importing `langgraph-guards` does not load `langchain` at run time. Users
 * of createReactAgent or custom graphs need not install it; users of createAgent have it already.
 */
import type { createMiddleware } from "langchain";

/** The brand langchain puts on every middleware (`Symbol.for`, so it is the same symbol as langchain's own). */
const MIDDLEWARE_BRAND = Symbol.for("AgentMiddleware");

type Config = Parameters<typeof createMiddleware>[0];

export const defineMiddleware: typeof createMiddleware = ((config: Config) => ({
  [MIDDLEWARE_BRAND]: true,
  name: config.name,
  stateSchema: config.stateSchema,
  contextSchema: config.contextSchema,
  wrapToolCall: config.wrapToolCall,
  wrapModelCall: config.wrapModelCall,
  beforeAgent: config.beforeAgent,
  beforeModel: config.beforeModel,
  afterModel: config.afterModel,
  afterAgent: config.afterAgent,
  tools: config.tools,
  streamTransformers: config.streamTransformers,
})) as unknown as typeof createMiddleware;
