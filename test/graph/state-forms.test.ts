import { describe, expect, it } from "vitest";
import { buildGraph } from "../../examples/custom-graph.js";
import { buildZodGraph } from "../../examples/custom-graph-zod.js";
import { createWorkspaceTools, sampleProject } from "../../examples/workspace.js";
import { emptyToolGuardState, reduceToolGuard } from "../../src/core/index.js";
import { GuardState, guardStateSchema } from "../../src/index.js";
import { ScriptedChatModel } from "../../src/testing/index.js";
import { fatesOf } from "../support/helpers.js";

const script = () =>
  new ScriptedChatModel([
    { toolCalls: [{ name: "read_file", args: { path: "app.py" } }] },
    { toolCalls: [{ name: "list_files", args: {} }] },
    "Read it.",
    { toolCalls: [{ name: "read_file", args: { path: "app.py" } }] },
    "Still read.",
  ]);

describe.each([
  ["Annotation", buildGraph],
  ["zod", buildZodGraph],
] as const)("custom StateGraph, %s form", (_form, build) => {
  it("guards tool calls and keeps their memory across invocations of the thread", async () => {
    const graph = build(script(), createWorkspaceTools(sampleProject()));
    const config = { configurable: { thread_id: "t" } };
    const first = await graph.invoke({ messages: [{ role: "user", content: "read app.py" }], task: "a" }, config);
    expect(fatesOf(first.messages).map((f) => f.fate)).toEqual(["ran", "ran"]);
    const second = await graph.invoke({ messages: [{ role: "user", content: "again" }], task: "b" }, config);
    expect(fatesOf(second.messages).map((f) => f.fate)).toEqual(["ran", "ran", "redundant"]);
    const saved = await graph.getState(config);
    expect(saved.values.toolGuard.stats.blocked.redundant).toBe(1);
    expect(saved.values.task).toBe("b");
  });
});

describe("channel declarations", () => {
  it("both forms declare the same channel with the same reducer and default", () => {
    expect(Object.keys(GuardState.spec)).toEqual(Object.keys(guardStateSchema.shape));
    expect(reduceToolGuard(undefined, [])).toEqual(emptyToolGuardState());
  });
});
