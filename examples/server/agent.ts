/**
 * Graph `agent`: langchain's createAgent with `guardMiddleware()`. No checkpointer: the LangGraph server brings its
 * own, so level 3 asks a person with `interrupt()`.
 */
import { createAgent } from "langchain";
import { guardMiddleware } from "langgraph-guards/middleware";
import { getWeather, repeatingModel } from "./shared.js";

export const agent = createAgent({
  model: repeatingModel(),
  tools: [getWeather],
  middleware: [guardMiddleware()],
});
