/**
 * Issue 45, item 4: a write the tools made vouches for the next edit of the same file only in the same model
 * response of the same thread. With index-style tool-call ids (`call_0` in every response, as some providers send),
 * thread B's write of a file thread A changed since B read it is refused, not let through as B's own write.
 * Issue 61, item 10c: the same where the thread or the response has no name of its own (a numeric `thread_id`,
 * message ids a provider repeats, a graph whose messages carry no ids, runs without a thread).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { Annotation, END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { createFileTools } from "../../src/fs/index.js";
import { GuardedToolNode, GuardMessagesState, GuardState } from "../../src/index.js";
import { fileToolsMiddleware, guardMiddleware } from "../../src/middleware/index.js";
import { ScriptedChatModel, type ScriptStep } from "../../src/testing/index.js";
import { tempProjects } from "../support/projects.js";

const { project } = tempProjects("lgg-vouch-");

/** Each response makes one call with the id `call_0`. */
const step = (name: string, args: Record<string, unknown>): ScriptStep => ({
  toolCalls: [{ name, args, id: "call_0" }],
});

function agent(root: string, steps: ScriptStep[], saver: MemorySaver) {
  return createReactAgent({
    llm: new ScriptedChatModel(steps),
    tools: new GuardedToolNode(createFileTools({ root })),
    stateSchema: GuardMessagesState,
    checkpointer: saver,
  });
}

const lastTool = (messages: BaseMessage[]) => messages.filter((m) => ToolMessage.isInstance(m)).at(-1) as ToolMessage;

describe("writes vouch within their own thread and response", () => {
  it("thread B's write after thread A changed the file is refused, though both used call_0", async () => {
    const root = project({ "a.txt": "v0\n" });
    const saver = new MemorySaver();
    const b = agent(
      root,
      [step("read_file", { path: "a.txt" }), "read", step("write_to_file", { path: "a.txt", content: "B\n" }), "done"],
      saver,
    );
    const a = agent(
      root,
      [step("read_file", { path: "a.txt" }), step("write_to_file", { path: "a.txt", content: "A\n" }), "done"],
      saver,
    );
    const bConfig = { configurable: { thread_id: "B" } };
    await b.invoke({ messages: [{ role: "user", content: "Read a.txt." }] }, bConfig);
    await a.invoke({ messages: [{ role: "user", content: "Write A." }] }, { configurable: { thread_id: "A" } });
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("A\n");
    const out = await b.invoke({ messages: [{ role: "user", content: "Write B." }] }, bConfig);
    const answer = lastTool(out.messages as BaseMessage[]);
    expect(answer.status).toBe("error");
    expect(String(answer.content)).toMatch(/changed on disk since you last read or wrote it/);
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("A\n");
  });

  // Each adapter hands the calls of one response the same AI message (createAgent and createReactAgent v2 through
  // a Send per call): a write vouches for the next edit of the same file in it.
  const adapters = {
    "createReactAgent v1": (root: string, model: ScriptedChatModel) =>
      createReactAgent({
        llm: model,
        tools: new GuardedToolNode(createFileTools({ root })),
        stateSchema: GuardMessagesState,
        checkpointer: new MemorySaver(),
      }),
    "createReactAgent v2": (root: string, model: ScriptedChatModel) =>
      createReactAgent({
        llm: model,
        tools: new GuardedToolNode(createFileTools({ root })),
        stateSchema: GuardMessagesState,
        checkpointer: new MemorySaver(),
        version: "v2",
      }),
    createAgent: (root: string, model: ScriptedChatModel) =>
      createAgent({
        model,
        tools: [],
        middleware: [guardMiddleware(), fileToolsMiddleware({ root })],
        checkpointer: new MemorySaver(),
      }),
  };
  for (const [adapter, make] of Object.entries(adapters)) {
    it(`two writes of one file in one response of one thread still both go through (${adapter})`, async () => {
      const root = project({ "a.txt": "v0\n" });
      const both: ScriptStep = {
        toolCalls: [
          { name: "write_to_file", args: { path: "a.txt", content: "one\n" }, id: "call_0" },
          { name: "write_to_file", args: { path: "a.txt", content: "two\n" }, id: "call_1" },
        ],
      };
      const model = new ScriptedChatModel([step("read_file", { path: "a.txt" }), both, "done"]);
      const out = await make(root, model).invoke(
        { messages: [{ role: "user", content: "Write twice." }] },
        { configurable: { thread_id: "one" } },
      );
      const answers = (out.messages as BaseMessage[]).filter((m) => ToolMessage.isInstance(m)) as ToolMessage[];
      expect(answers.slice(-2).map((m) => m.status)).toEqual(["success", "success"]);
      expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("two\n");
    });
  }
});

/** Whether the last answer refused the write as one of a file changed since, and the file still holds A's write. */
function refusedKeepingA(root: string, messages: BaseMessage[]): void {
  const answer = lastTool(messages);
  expect(answer.status).toBe("error");
  expect(String(answer.content)).toMatch(/changed on disk since you last read or wrote it/);
  expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("A\n");
}

/** A state whose messages keep the ids they come with (none from a model that gives none). */
const PlainMessagesState = Annotation.Root({
  ...GuardState.spec,
  messages: Annotation<BaseMessage[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

/**
 * A custom graph over `root` without a checkpointer: its model node answers `steps` in turn (each once `gates[i]`,
 * if any, has settled), then "done".
 */
function gatedGraph(root: string, state: typeof PlainMessagesState, steps: AIMessage[], gates: unknown[] = []) {
  let at = 0;
  const model = async () => {
    await gates[at];
    const next = steps[at++];
    return { messages: [next ?? new AIMessage("done")] };
  };
  const route = (s: { messages: BaseMessage[] }) =>
    (s.messages.at(-1) as AIMessage).tool_calls?.length ? "tools" : END;
  return new StateGraph(state)
    .addNode("model", model)
    .addNode("tools", new GuardedToolNode(createFileTools({ root })))
    .addEdge(START, "model")
    .addConditionalEdges("model", route, ["tools", END])
    .addEdge("tools", "model")
    .compile();
}

describe("writes vouch within their own run where ids and positions repeat (issue 61)", () => {
  const cases = [
    { shape: "messages without ids", state: PlainMessagesState, id: (_: number) => undefined },
    // A provider that numbers its messages: the same ids in every run.
    { shape: "message ids the provider repeats", state: GuardMessagesState, id: (n: number) => `msg_${n}` },
  ];
  for (const { shape, state, id } of cases) {
    it(`two runs at once without a thread, ${shape}: the later write of a changed file is refused`, async () => {
      const root = project({ "a.txt": "v0\n" });
      const call = (n: number, name: string, args: Record<string, unknown>) =>
        new AIMessage({ id: id(n), content: "", tool_calls: [{ name, args, id: "call_0", type: "tool_call" }] });
      const ask = { messages: [new HumanMessage("Edit a.txt.")] };
      let aDone: () => void = () => undefined;
      const aWrote = new Promise<void>((resolve) => {
        aDone = resolve;
      });
      const read = (n: number) => call(n, "read_file", { path: "a.txt" });
      const write = (n: number, content: string) => call(n, "write_to_file", { path: "a.txt", content });
      const b = gatedGraph(root, state as typeof PlainMessagesState, [read(1), write(3, "B\n")], [undefined, aWrote]);
      const bRun = b.invoke(ask);
      await gatedGraph(root, state as typeof PlainMessagesState, [read(1), write(3, "A\n")]).invoke(ask);
      expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("A\n");
      aDone();
      refusedKeepingA(root, (await bRun).messages);
    });
  }
});
