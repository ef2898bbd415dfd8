/**
 * Graph `react`: createReactAgent with its tools in a `GuardedToolNode` and `escalationHook` as its post-model hook.
 * No checkpointer: the LangGraph server brings its own, so level 3 asks a person with `interrupt()`.
 */
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { escalationHook, GuardedToolNode, GuardMessagesState } from "langgraph-guards";
import { getWeather, repeatingModel } from "./shared.js";

const tools = new GuardedToolNode([getWeather]);

export const react = createReactAgent({
  llm: repeatingModel(),
  tools,
  stateSchema: GuardMessagesState,
  postModelHook: escalationHook(tools),
});
