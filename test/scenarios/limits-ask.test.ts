import { type AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { Command, isInterrupted, MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import {
  GuardedToolNode,
  GuardMessagesState,
  isLimitInterrupt,
  type LimitInterrupt,
  loopDetectHook,
} from "../../src/index.js";
import { loopDetectMiddleware } from "../../src/middleware/index.js";
import { validHistory } from "../support/escalation.js";
import { endless, work } from "./support.js";

const input = { messages: [{ role: "user", content: "Do all the steps." }] };
const ran = (messages: BaseMessage[]) =>
  messages.filter((m) => ToolMessage.isInstance(m) && m.status !== "error").length;
const asked = (out: unknown): LimitInterrupt | undefined =>
  isInterrupted(out) ? (out.__interrupt__.map((i) => i.value).find(isLimitInterrupt) as LimitInterrupt) : undefined;

describe("limits that ask", () => {
  it("createReactAgent + loopDetectHook: asks at the limit, goes on with the amount granted, ends when told", async () => {
    const llm = endless();
    const agent = createReactAgent({
      llm,
      tools: new GuardedToolNode([work]),
      stateSchema: GuardMessagesState,
      postModelHook: loopDetectHook({ maxIterations: 3, ask: { iterations: 2 } }),
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: "ask-react" } };
    const first = await agent.invoke(input, config);
    const question = asked(first);
    expect(question).toMatchObject({ limit: "iterations", value: 3, max: 3, more: 2 });
    expect(question?.question).toBe(
      "The run reached a limit: the iteration limit was reached (3 of 3). Go on with 2 more iterations?",
    );
    // maxIterations: N runs N full turns (issue 43, class 9: openai-agents' max_turns, pydantic-ai's
    // request_limit): the 3rd turn's call ran, the 4th response waits for the answer.
    expect(ran(first.messages as BaseMessage[])).toBe(3);

    const second = await agent.invoke(new Command({ resume: true }), config);
    expect(asked(second)).toMatchObject({ value: 5, max: 5, more: 2 });
    expect(ran(second.messages as BaseMessage[])).toBe(5);

    const third = await agent.invoke(new Command({ resume: "no" }), config);
    expect(asked(third)).toBeUndefined();
    const messages = third.messages as BaseMessage[];
    const final = messages.at(-1) as AIMessage;
    expect(final.tool_calls ?? []).toEqual([]);
    expect(final.response_metadata.guard).toMatchObject({ kind: "iterations", value: 5, limit: 5 });
    expect(ran(messages)).toBe(5);
    expect(validHistory(messages)).toEqual([]);
    expect(llm.stepsTaken).toBe(6);
  });

  it("without a checkpointer nobody could answer: the limit ends the run", async () => {
    const agent = createReactAgent({
      llm: endless(),
      tools: new GuardedToolNode([work]),
      stateSchema: GuardMessagesState,
      postModelHook: loopDetectHook({ maxIterations: 3, ask: true }),
    });
    const out = await agent.invoke(input);
    expect(asked(out)).toBeUndefined();
    expect((out.messages.at(-1) as AIMessage).response_metadata.guard).toMatchObject({ kind: "iterations" });
  });

  it("createAgent + loopDetectMiddleware: asks before the next model call; { more } and the model's wrap-up", async () => {
    const llm = endless();
    const agent = createAgent({
      model: llm,
      tools: [work],
      middleware: [loopDetectMiddleware({ maxIterations: 3, ask: true })],
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: "ask-agent" } };
    const first = await agent.invoke(input, config);
    expect(asked(first)).toMatchObject({ limit: "iterations", value: 3, max: 3, more: 3 });
    // In createAgent the limit's response ran its calls; the question comes before the next model call.
    expect(ran(first.messages as BaseMessage[])).toBe(3);
    expect(llm.stepsTaken).toBe(3);

    const second = await agent.invoke(new Command({ resume: { more: 1 } }), config);
    expect(asked(second)).toMatchObject({ value: 4, max: 4 });
    expect(llm.stepsTaken).toBe(4); // one more model call, not two: the resume did not call the model again

    const third = await agent.invoke(new Command({ resume: false }), config);
    const messages = third.messages as BaseMessage[];
    const final = messages.at(-1) as AIMessage;
    expect(final.tool_calls ?? []).toEqual([]);
    expect(String(final.content)).toMatch(/^I have to stop here\./);
    expect(final.response_metadata.guard).toMatchObject({ kind: "iterations", wrapUp: "model" });
    expect(ran(messages)).toBe(4);
    expect(validHistory(messages)).toEqual([]);
  });
});
