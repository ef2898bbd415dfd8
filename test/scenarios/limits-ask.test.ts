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

/** createReactAgent with loopDetectHook: 3 iterations, then asks for 2 more; a scripted model that never ends. */
function askingReactAgent() {
  const llm = endless();
  const agent = createReactAgent({
    llm,
    tools: new GuardedToolNode([work]),
    stateSchema: GuardMessagesState,
    postModelHook: loopDetectHook({ maxIterations: 3, ask: { iterations: 2 } }),
    checkpointer: new MemorySaver(),
  });
  return { llm, agent };
}

/** createAgent with loopDetectMiddleware: 3 iterations, then asks for 3 more. */
function askingCreateAgent() {
  const llm = endless();
  const middleware = [loopDetectMiddleware({ maxIterations: 3, ask: true })];
  return { llm, agent: createAgent({ model: llm, tools: [work], middleware, checkpointer: new MemorySaver() }) };
}

describe("limits that ask", () => {
  it("createReactAgent + loopDetectHook: asks at the limit, goes on with the amount granted, ends when told", async () => {
    const { llm, agent } = askingReactAgent();
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
    const { llm, agent } = askingCreateAgent();
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

  it("answers as a person writes them: 'Yes' and 'y' go on, an unread one is asked again, 'No.' ends", async () => {
    const { agent } = askingReactAgent();
    const config = { configurable: { thread_id: "ask-words" } };
    expect(asked(await agent.invoke(input, config))).toMatchObject({ value: 3, max: 3 });
    const yes = await agent.invoke(new Command({ resume: "Yes" }), config);
    expect(asked(yes)).toMatchObject({ value: 5, max: 5 });
    expect(ran(yes.messages as BaseMessage[])).toBe(5);

    const unread = await agent.invoke(new Command({ resume: "maybe later" }), config);
    const again = asked(unread);
    expect(again).toMatchObject({ value: 5, max: 5, more: 2 });
    expect(again?.question).toBe(
      'I could not read "maybe later" as yes, no or a number. The run reached a limit: the iteration limit was reached (5 of 5). Go on with 2 more iterations?',
    );
    expect(ran(unread.messages as BaseMessage[])).toBe(5);

    const y = await agent.invoke(new Command({ resume: "y" }), config);
    expect(asked(y)).toMatchObject({ value: 7, max: 7 });
    expect(ran(y.messages as BaseMessage[])).toBe(7);

    const no = await agent.invoke(new Command({ resume: "No." }), config);
    expect(asked(no)).toBeUndefined();
    const messages = no.messages as BaseMessage[];
    expect((messages.at(-1) as AIMessage).response_metadata.guard).toMatchObject({ kind: "iterations", value: 7 });
    expect(ran(messages)).toBe(7);
    expect(validHistory(messages)).toEqual([]);
  });

  it("createAgent: 'y' goes on, '2 more' grants two", async () => {
    const { agent } = askingCreateAgent();
    const config = { configurable: { thread_id: "ask-agent-words" } };
    expect(asked(await agent.invoke(input, config))).toMatchObject({ value: 3, max: 3, more: 3 });
    expect(asked(await agent.invoke(new Command({ resume: "y" }), config))).toMatchObject({ value: 6, max: 6 });
    const two = await agent.invoke(new Command({ resume: "2 more" }), config);
    expect(asked(two)).toMatchObject({ value: 8, max: 8 });
    expect(ran(two.messages as BaseMessage[])).toBe(8);
  });
});
