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
    { toolCalls: [{ name: "read_file", args: { path: "app.py" } }] },
    "Read again.",
  ]);

describe.each([
  ["Annotation", buildGraph],
  ["zod", buildZodGraph],
] as const)("custom StateGraph, %s form", (_form, build) => {
  it("guards tool calls and keeps their memory across invocations of the thread (per run, and its counters)", async () => {
    const graph = build(script(), createWorkspaceTools(sampleProject()));
    const config = { configurable: { thread_id: "t" } };
    const first = await graph.invoke({ messages: [{ role: "user", content: "read app.py" }], task: "a" }, config);
    expect(fatesOf(first.messages).map((f) => f.fate)).toEqual(["ran", "ran"]);
    const person = first.messages.filter((m) => m.getType() === "human").at(-1)?.id;
    expect(person).toBeDefined();
    expect(first.toolGuard.run).toBe(person);

    // A second invocation without a person's message goes on with the same run: the channel came back from the
    // checkpoint (not reset by the input), so the read recorded by the first invocation is still valid.
    const second = await graph.invoke({ task: "b" }, config);
    expect(fatesOf(second.messages).map((f) => f.fate)).toEqual(["ran", "ran", "redundant"]);
    const saved = await graph.getState(config);
    expect(saved.values.toolGuard.stats.blocked.redundant).toBe(1);
    expect(saved.values.toolGuard.run).toBe(person);
    expect(saved.values.task).toBe("b");

    // A new person's message starts a new run: the read runs again, and the thread's counters go on.
    const third = await graph.invoke({ messages: [{ role: "user", content: "again" }], task: "c" }, config);
    expect(fatesOf(third.messages).map((f) => f.fate)).toEqual(["ran", "ran", "redundant", "ran"]);
    const again = third.messages.filter((m) => m.getType() === "human").at(-1)?.id;
    expect(again).toBeDefined();
    expect(again).not.toBe(person);
    const restored = (await graph.getState(config)).values.toolGuard;
    expect(restored.run).toBe(again);
    expect(restored.stats.allowed).toBe(3);
    expect(restored.stats.blocked.redundant).toBe(1);
  });
});

describe("channel declarations", () => {
  it("both forms declare the same channel with the same reducer and default", () => {
    expect(Object.keys(GuardState.spec)).toEqual(Object.keys(guardStateSchema.shape));
    expect(reduceToolGuard(undefined, [])).toEqual(emptyToolGuardState());
  });
});
