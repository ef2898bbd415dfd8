/**
 * One small scenario for the event tests, through both agent builders: the model asks for the same weather twice,
 * then answers. The second call is blocked (strike 1, one `blocked` event); the run ends with "It is sunny in Paris."
 */
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { z } from "zod";
import { escalationHook, GuardedToolNode, GuardMessagesState } from "../../src/index.js";
import { guardMiddleware } from "../../src/middleware/index.js";
import { ScriptedChatModel } from "../../src/testing/index.js";

const getWeather = tool(async ({ city }) => `Sunny in ${city}`, {
  name: "get_weather",
  description: "Current weather in a city",
  schema: z.object({ city: z.string() }),
});
const model = () =>
  new ScriptedChatModel([
    { toolCalls: [{ name: "get_weather", args: { city: "Paris" } }] },
    { toolCalls: [{ name: "get_weather", args: { city: "Paris" } }] },
    "It is sunny in Paris.",
  ]);

/** The user's message. */
export const weatherInput = { messages: [{ role: "user", content: "Weather in Paris?" }] };
/** The run's last message. */
export const WEATHER_ANSWER = "It is sunny in Paris.";

/** What the tests call on either agent (both builders' graphs have these). */
export type WeatherAgent = {
  invoke(input: unknown, config: Record<string, unknown>): Promise<{ messages: { content: unknown }[] }>;
  streamEvents(
    input: unknown,
    config: Record<string, unknown>,
  ): AsyncIterable<{ event: string; name: string; data: unknown }>;
};

/** A fresh agent of the scenario per builder: the guarded createReactAgent and createAgent with guardMiddleware. */
export const weatherAgents: Record<"createReactAgent" | "createAgent", () => WeatherAgent> = {
  createReactAgent: () => {
    const tools = new GuardedToolNode([getWeather]);
    return createReactAgent({
      llm: model(),
      tools,
      stateSchema: GuardMessagesState,
      postModelHook: escalationHook(tools),
      checkpointer: new MemorySaver(),
    }) as unknown as WeatherAgent;
  },
  createAgent: () =>
    createAgent({
      model: model(),
      tools: [getWeather],
      middleware: [guardMiddleware()],
      checkpointer: new MemorySaver(),
    }) as unknown as WeatherAgent,
};
