/**
 * What both served graphs share: a tool that always fails, and a scripted model that keeps calling it with the
 * same arguments, so the guards have something to stop. Offline: no API key, no network.
 */
import { tool } from "@langchain/core/tools";
import { ScriptedChatModel } from "langgraph-guards/testing";
import { z } from "zod";

/** `get_weather`: the weather service is down, every call fails. */
export const getWeather = tool(
  async () => {
    throw new Error("weather service unavailable");
  },
  { name: "get_weather", description: "Current weather in a city", schema: z.object({ city: z.string() }) },
);

/**
 * A tool-calling model that retries the same call forever. A responder (not a step list), so it never runs out and
 * can serve every thread of the server at once; put your own chat model here.
 */
export const repeatingModel = () =>
  new ScriptedChatModel(() => ({ toolCalls: [{ name: "get_weather", args: { city: "Paris" } }] }));
