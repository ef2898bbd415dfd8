/** Tools and models of the run-boundary tests. */
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { ScriptedChatModel } from "../../src/testing/index.js";

/** A read-only lookup (by its name) whose answer never changes. */
export const weather = tool(async ({ city }) => `Sunny in ${city}`, {
  name: "get_weather",
  description: "Current weather in a city",
  schema: z.object({ city: z.string() }),
});

/** The same lookup, always failing, with an error that does not pass (no identical retry runs: issue 43, class 5). */
export const failingWeather = tool(
  async () => {
    throw new Error("no weather station reports for this city");
  },
  { name: "get_weather", description: "Current weather in a city", schema: z.object({ city: z.string() }) },
);

/** A chat model: each person's message gets one call, then an answer. */
export function chatModel(call: { name: string; args: Record<string, unknown> }) {
  return new ScriptedChatModel((messages) =>
    messages.at(-1)?.getType() === "human" ? { toolCalls: [call] } : "Here you are.",
  );
}

/** A model that repeats one call forever. */
export function repeatingModel(call: { name: string; args: Record<string, unknown> }) {
  return new ScriptedChatModel(() => ({ toolCalls: [call] }));
}
