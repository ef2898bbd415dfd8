/**
 * Agents for the run's-end tests: a scripted model that works through a task of N tool turns and then answers (or
 * never stops), and the stacks of item 4 of issue 42 with and without the guards.
 */
import { randomUUID } from "node:crypto";
import { type AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { createAgent, createMiddleware } from "langchain";
import { z } from "zod";
import { ScriptedChatModel } from "../../src/testing/index.js";

export const work = tool(async ({ n }) => `step ${n} done, output ${n * 7}`, {
  name: "work",
  description: "Does one step of the work",
  schema: z.object({ n: z.number() }),
});

/** The model's answer after the last step of a task. */
export const ANSWER = /^All \d+ steps are done\.$/;

/**
 * A model that works through a task of `turns` tool turns (one new call and a new text each), then answers "All N
 * steps are done."; `Infinity` never answers. It counts the tool results in its input, so one model serves any
 * number of runs and threads.
 */
export function taskModel(turns: number): ScriptedChatModel {
  return new ScriptedChatModel((messages: BaseMessage[]) => {
    const done = doneSteps(messages);
    if (done >= turns) return { content: `All ${done} steps are done.` };
    return { content: `Next: ${randomUUID()}`, toolCalls: [{ name: "work", args: { n: done } }] };
  });
}

/** The tool results that ran (not blocked, not "Not run") since the last person's message. */
export function doneSteps(messages: readonly BaseMessage[]): number {
  let start = 0;
  messages.forEach((m, i) => {
    if (m.getType() === "human") start = i;
  });
  return messages.slice(start).filter((m) => ToolMessage.isInstance(m) && m.status !== "error").length;
}

/** The text of a message. */
export const text = (m: AIMessage) => (typeof m.content === "string" ? m.content : "");

/** A middleware of the user's own with one hook (a node of the graph, invisible to the guards). */
export function userHook(name: string, hook: "beforeAgent" | "afterAgent" | "beforeModel" | "afterModel") {
  return createMiddleware({ name, [hook]: () => undefined } as Parameters<typeof createMiddleware>[0]);
}

/** A createAgent as the tests use it (the middleware list is of any shape, so the agent's types are loose). */
export interface TestAgent {
  invoke(input: unknown, config?: unknown): Promise<{ messages: BaseMessage[] }>;
  graph: ReturnType<typeof createAgent>["graph"];
}

/** A createAgent with the model of a task and the middleware given. */
export function agentWith(turns: number, middleware: readonly unknown[], name?: string): TestAgent {
  return createAgent({
    model: taskModel(turns),
    tools: [work],
    middleware: middleware as never,
    ...(name === undefined ? {} : { name }),
  }) as unknown as TestAgent;
}
