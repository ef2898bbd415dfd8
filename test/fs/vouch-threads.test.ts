/**
 * Issue 45, item 4: a write the tools made vouches for the next edit of the same file only in the same model
 * response of the same thread. With index-style tool-call ids (`call_0` in every response, as some providers send),
 * thread B's write of a file thread A changed since B read it is refused, not let through as B's own write.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { describe, expect, it } from "vitest";
import { createFileTools } from "../../src/fs/index.js";
import { GuardedToolNode, GuardMessagesState } from "../../src/index.js";
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

  it("two writes of one file in one response of one thread still both go through", async () => {
    const root = project({ "a.txt": "v0\n" });
    const both: ScriptStep = {
      toolCalls: [
        { name: "write_to_file", args: { path: "a.txt", content: "one\n" }, id: "call_0" },
        { name: "write_to_file", args: { path: "a.txt", content: "two\n" }, id: "call_1" },
      ],
    };
    const out = await agent(root, [step("read_file", { path: "a.txt" }), both, "done"], new MemorySaver()).invoke(
      { messages: [{ role: "user", content: "Write twice." }] },
      { configurable: { thread_id: "one" } },
    );
    const answers = (out.messages as BaseMessage[]).filter((m) => ToolMessage.isInstance(m)) as ToolMessage[];
    expect(answers.slice(-2).map((m) => m.status)).toEqual(["success", "success"]);
  });
});
