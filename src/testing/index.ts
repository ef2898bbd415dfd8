/**
 * `langgraph-guards/testing`: {@link ScriptedChatModel}, a chat model that answers from a script (text answers and
 * tool calls), for offline tests, demos, notebooks and benchmarks.
 *
 * @module langgraph-guards/testing
 */
export * from "./scripted-model.js";
