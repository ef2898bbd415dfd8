// langchain's `createMiddleware`, built here as the plain branded object langchain 1.5 builds, so that importing
// `langgraph-guards` does not load `langchain` at run time (users of createReactAgent need not install it).
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
