/** guardMiddleware beside langchain's toolCallLimitMiddleware: every call answered exactly once, in either order. */
import { type AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { createAgent, toolCallLimitMiddleware } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { guardMiddleware, loopDetectMiddleware, safetyLimitsMiddleware } from "../../src/middleware/index.js";
import { ScriptedChatModel } from "../../src/testing/index.js";
import { validHistory } from "../support/escalation.js";

const search = tool(async ({ q }) => `results for ${q}`, {
  name: "search_docs",
  description: "Search the docs.",
  schema: z.object({ q: z.string() }),
});

/** Two calls a response: one repeated every time, one new each time; then an answer. */
function model() {
  let n = 0;
  return new ScriptedChatModel(() =>
    n++ < 6
      ? {
          toolCalls: [
            { name: "search_docs", args: { q: "setup" } },
            { name: "search_docs", args: { q: `topic ${n}` } },
          ],
        }
      : "Here is what I found.",
  );
}

const kinds = (messages: BaseMessage[]) =>
  messages
    .filter((m): m is ToolMessage => ToolMessage.isInstance(m))
    .map((m) =>
      (m.artifact as { guard?: unknown } | undefined)?.guard
        ? "guard"
        : String(m.content).startsWith("Tool call limit")
          ? "limit"
          : "ran",
    );

describe("guardMiddleware with toolCallLimitMiddleware", () => {
  for (const order of ["guard, limit", "limit, guard"] as const) {
    it(`[${order}]: no call answered twice or left unanswered, both guards enforced`, async () => {
      const guard = guardMiddleware();
      const limit = toolCallLimitMiddleware({ runLimit: 4 });
      const agent = createAgent({
        model: model(),
        tools: [search],
        middleware: order === "guard, limit" ? [guard, limit] : [limit, guard],
      });
      const out = await agent.invoke(
        { messages: [{ role: "user", content: "How do I set it up?" }] },
        { recursionLimit: 60 },
      );
      const messages = out.messages as BaseMessage[];
      expect(validHistory(messages)).toEqual([]);
      const answered = kinds(messages);
      expect(answered).toContain("guard");
      expect(answered).toContain("limit");
      expect(answered.filter((k) => k === "ran").length).toBeLessThanOrEqual(4);
    });
  }
});

describe("the loop and limit middleware with toolCallLimitMiddleware", () => {
  // maxIterations: 1 runs one full turn and stops the 2nd response (issue 43, class 9: N full turns, as
  // openai-agents' max_turns and pydantic-ai's request_limit), before toolCallLimitMiddleware's limit of 3 is reached.
  const stoppers = {
    safetyLimits: () => safetyLimitsMiddleware({ maxIterations: 1 }),
    loopDetect: () => loopDetectMiddleware({ maxIterations: 1 }),
  };
  for (const [name, make] of Object.entries(stoppers)) {
    for (const order of ["stopper first", "stopper last"] as const) {
      it(`[${name}, ${order}]: a stop replaces the response in the model call: nothing is left to answer`, async () => {
        const limit = toolCallLimitMiddleware({ runLimit: 3 });
        const stopper = make();
        const agent = createAgent({
          model: model(),
          tools: [search],
          middleware: order === "stopper first" ? [stopper, limit] : [limit, stopper],
        });
        const out = await agent.invoke(
          { messages: [{ role: "user", content: "How do I set it up?" }] },
          { recursionLimit: 60 },
        );
        const messages = out.messages as BaseMessage[];
        expect(validHistory(messages)).toEqual([]);
        // The second response stops the run inside the model call, in either order: the model's wrap-up replaces it,
        // so its calls never reach the limit's afterModel or the tools.
        expect(kinds(messages)).toEqual(["ran", "ran"]);
        const final = messages.at(-1) as AIMessage;
        expect(final.response_metadata.guard).toMatchObject({ kind: "iterations", wrapUp: "model" });
        expect(String((final.response_metadata.guard as { message: string }).message)).toMatch(/iteration limit/);
      });
    }
  }
});
