import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { Command, END, MemorySaver, MessagesAnnotation, Send, START, StateGraph } from "@langchain/langgraph";
import { createReactAgent, ToolNode } from "@langchain/langgraph/prebuilt";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createWorkspaceTools, sampleProject } from "../../examples/workspace.js";
import {
  decideToolCall,
  emptyToolGuardState,
  isReadOnlyCall,
  isReadOnlyCommand,
  planToolCalls,
  reduceToolGuard,
  resolveToolGuardOptions,
  toolCallSignature,
} from "../../src/core/index.js";
import {
  escalationHook,
  escalationNode,
  GuardedToolNode,
  GuardMessagesState,
  GuardOptionsError,
  GuardStateMissingError,
  repeatQueryGuard,
} from "../../src/index.js";
import { ScriptedChatModel } from "../../src/testing/index.js";
import { outcomeEvents } from "../../src/tool-calls/core/plan.js";
import { call, fatesOf, runTurns } from "../support/helpers.js";

describe("call identity", () => {
  it("keys in any order are the same call", async () => {
    expect(toolCallSignature("t", { a: 1, b: { c: 2, d: [3] } })).toBe(
      toolCallSignature("t", { b: { d: [3], c: 2 }, a: 1 }),
    );
    const { fates } = await runTurns([
      [call("search_in_file", { pattern: "TODO", path: "app.py" })],
      [call("search_in_file", { path: "app.py", pattern: "TODO" })],
    ]);
    expect(fates.map((f) => f.fate)).toEqual(["ran", "consecutive"]);
  });

  it("odd arguments never throw and still have an identity", () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(toolCallSignature("t", cyclic)).toBe('t:{"a":1,"self":"[Circular]"}');
    expect(toolCallSignature("t", { n: 10n, u: undefined })).toBe('t:{"n":10}');
    expect(toolCallSignature("t", undefined)).toBe("t:null");
  });

  it("ignoreArgs drops volatile fields, globally and per tool, including nested ones", async () => {
    const { fates } = await runTurns(
      [
        [call("list_files", { path: ".", requestId: 1 })],
        [call("list_files", { path: ".", requestId: 2 })],
        [call("search_in_file", { pattern: "x", path: "app.py", meta: { at: 1 } })],
        [call("search_in_file", { pattern: "x", path: "app.py", meta: { at: 2 } })],
      ],
      { guard: { ignoreArgs: ["requestId"], tools: { search_in_file: { ignoreArgs: ["meta.at"] } } } },
    );
    expect(fates.map((f) => f.fate)).toEqual(["ran", "consecutive", "ran", "consecutive"]);
  });

  it("with root R, a relative and an absolute path are one operation", async () => {
    const { fates } = await runTurns(
      [
        [call("read_file", { path: "config.py" })],
        [call("list_files", { path: "." })],
        [call("read_file", { path: "/repo/config.py" })],
        [call("read_file", { path: "./sub/../config.py" })],
      ],
      { guard: { rules: { root: "/repo" } } },
    );
    expect(fates.map((f) => f.fate)).toEqual(["ran", "ran", "redundant", "redundant"]);
  });
});

describe("level 3 rules", () => {
  it("a failed read is never redundant", async () => {
    const { fates } = await runTurns([
      [call("read_file", { path: "nope.py" })],
      [call("list_files", {})],
      [call("read_file", { path: "nope.py" })],
    ]);
    expect(fates.map((f) => f.fate)).toEqual(["failed", "ran", "failed"]);
  });

  it("a write is never redundant", async () => {
    const w = { path: "a.py", content: "x" };
    const { fates } = await runTurns([
      [call("write_to_file", w)],
      [call("list_files", {})],
      [call("write_to_file", w)],
    ]);
    expect(fates.map((f) => f.fate)).toEqual(["ran", "ran", "ran"]);
  });

  it("a write to x makes the next read of x allowed, and refreshes listings of its folder", async () => {
    const { fates } = await runTurns([
      [call("read_file", { path: "app.py" })],
      [call("list_files", { path: "." })],
      [call("write_to_file", { path: "app.py", content: "print(2)\n" })],
      [call("read_file", { path: "app.py" })],
      [call("list_files", { path: "." })],
    ]);
    expect(fates.map((f) => f.fate)).toEqual(["ran", "ran", "ran", "ran", "ran"]);
    expect(fates[3]?.content).toBe("print(2)\n");
  });

  it("a write to another file leaves a read valid", async () => {
    const { fates } = await runTurns([
      [call("read_file", { path: "app.py" })],
      [call("write_to_file", { path: "main.py", content: "" })],
      [call("read_file", { path: "app.py" })],
    ]);
    expect(fates.map((f) => f.fate)).toEqual(["ran", "ran", "redundant"]);
  });

  it("with operationsHistoryLimit: 2 an evicted read is allowed again", async () => {
    const { fates } = await runTurns(
      [
        [call("read_file", { path: "app.py" })],
        [call("read_file", { path: "main.py" })],
        [call("read_file", { path: "models.py" })],
        [call("read_file", { path: "app.py" })],
        [call("read_file", { path: "models.py" })],
      ],
      { guard: { memory: { operationsHistoryLimit: 2 } } },
    );
    expect(fates.map((f) => f.fate)).toEqual(["ran", "ran", "ran", "ran", "redundant"]);
  });
});

describe("read-only classification", () => {
  it("per-tool option > metadata readOnlyHint > name > shell parsing > unknown", () => {
    expect(isReadOnlyCall("get_user", {}, { tools: { get_user: { readOnly: false } } })).toBe(false);
    expect(isReadOnlyCall("get_user", {}, { readOnlyHints: { get_user: false } })).toBe(false);
    expect(isReadOnlyCall("lookup", {}, { readOnlyHints: { lookup: true } })).toBe(true);
    expect(isReadOnlyCall("filesystem.read_file", {})).toBe(true);
    expect(isReadOnlyCall("bash", { command: "git status" })).toBe(true);
    expect(isReadOnlyCall("transfer_to_human_agents", {})).toBe(false);
  });

  it.each([
    ["cat a.py", true],
    ["ls -la src && grep -rn TODO src | head -20", true],
    ["sed -n '10,40p' src/app.py", true],
    ["git diff HEAD~1 -- src", true],
    ["find . -name '*.py' 2>/dev/null", true],
    ["cd /repo && git log --oneline | head", true],
    ["sed -i 's/a/b/' src/app.py", false],
    ["echo hi > out.txt", false],
    ["find . -name '*.pyc' -delete", false],
    ["git checkout main", false],
    ["python reproduce.py", false],
    ["cat $(ls)", false],
    ["rm -rf build", false],
    ["", false],
  ])("isReadOnlyCommand(%j) is %s", (command, expected) => {
    expect(isReadOnlyCommand(command)).toBe(expected);
  });

  it("a readOnlyHint in tool metadata is honoured by the node", async () => {
    const lookups = { n: 0 };
    const lookup = tool(
      async () => {
        lookups.n += 1;
        return "42";
      },
      { name: "lookup", description: "d", schema: z.object({ q: z.string() }), metadata: { readOnlyHint: true } },
    );
    const llm = new ScriptedChatModel([
      { toolCalls: [{ name: "lookup", args: { q: "a" } }] },
      { toolCalls: [{ name: "lookup", args: { q: "b" } }] },
      { toolCalls: [{ name: "lookup", args: { q: "a" } }] },
    ]);
    const agent = createReactAgent({ llm, tools: new GuardedToolNode([lookup]), stateSchema: GuardMessagesState });
    const out = await agent.invoke({ messages: [{ role: "user", content: "go" }] });
    expect(fatesOf(out.messages).map((f) => f.fate)).toEqual(["ran", "ran", "redundant"]);
    expect(lookups.n).toBe(2);
  });
});

describe("parallel calls in one AI message", () => {
  it("two identical calls: the first runs, the second is blocked (level 1), the tool runs once", async () => {
    const files = sampleProject();
    let writes = 0;
    const original = files.set.bind(files);
    files.set = (k: string, v: string) => {
      writes += 1;
      return original(k, v);
    };
    const w = { path: "a.py", content: "x" };
    const { fates } = await runTurns([[call("write_to_file", w), call("write_to_file", w)]], { files });
    expect(fates.map((f) => f.fate)).toEqual(["ran", "consecutive"]);
    expect(writes).toBe(1);
  });

  it("createReactAgent v2 (one task per call) decides as v1 does", async () => {
    const turns = [
      [call("read_file", { path: "app.py" }), call("read_file", { path: "app.py" }), call("list_files", {})],
      [call("read_file", { path: "app.py" })],
    ];
    const v1 = await runTurns(turns, { version: "v1" });
    const v2 = await runTurns(turns, { version: "v2" });
    expect(v1.fates.map((f) => f.fate)).toEqual(["ran", "consecutive", "ran", "redundant"]);
    expect(v2.fates.map((f) => f.fate)).toEqual(v1.fates.map((f) => f.fate));
    expect(v2.result.toolGuard.repetition.window.map((r) => r.tool)).toEqual(
      v1.result.toolGuard.repetition.window.map((r) => r.tool),
    );
  });

  it("the pure planner agrees: parallel duplicates are consecutive duplicates", () => {
    const options = resolveToolGuardOptions();
    const { decisions } = planToolCalls(
      emptyToolGuardState(),
      [
        { name: "ls", args: { a: 1 }, id: "1" },
        { name: "ls", args: { a: 1 }, id: "2" },
      ],
      options,
    );
    expect(decisions.map((d) => [d.allowed, d.rule])).toEqual([
      [true, undefined],
      [false, "consecutive"],
    ]);
  });
});

describe("escape hatches", () => {
  const loop = [
    [call("read_file", { path: "config.py" })],
    [call("read_file", { path: "config.py" })],
    [call("list_files", {})],
    [call("read_file", { path: "config.py" })],
  ];

  it("observe mode blocks nothing and records what it would have blocked", async () => {
    const { fates, result } = await runTurns(loop, { guard: { mode: "observe" } });
    expect(fates.map((f) => f.fate)).toEqual(["ran", "ran", "ran", "ran"]);
    expect(result.toolGuard.observed.map((o) => [o.rule, o.enforced])).toEqual([
      ["consecutive", false],
      ["redundant", false],
    ]);
    expect(result.toolGuard.stats.observed).toMatchObject({
      consecutive: 1,
      threshold: 0,
      redundant: 1,
      near_duplicate: 0,
      repeat_failure: 0,
    });
    expect(result.toolGuard.stats.blocked).toMatchObject({
      consecutive: 0,
      threshold: 0,
      redundant: 0,
      near_duplicate: 0,
      repeat_failure: 0,
    });
  });

  it("the per-run switch configurable.guards = false disables every block", async () => {
    const { fates } = await runTurns(loop, { configurable: { guards: false } });
    expect(fates.map((f) => f.fate)).toEqual(["ran", "ran", "ran", "ran"]);
  });

  it("an exempt tool is never blocked", async () => {
    const { fates } = await runTurns(loop, { guard: { tools: { read_file: { exempt: true } } } });
    expect(fates.map((f) => f.fate)).toEqual(["ran", "ran", "ran", "ran"]);
  });

  it("a per-tool threshold overrides the global one", async () => {
    const turns = [1, 2, 3].flatMap((i) => [
      [call("write_to_file", { path: "a.py", content: "x" })],
      [call("list_files", { path: `d${i}` })],
    ]);
    const { fates } = await runTurns(turns, { guard: { tools: { write_to_file: { repetitionThreshold: 2 } } } });
    expect(fates.map((f) => f.fate)).toEqual(["ran", "ran", "ran", "ran", "threshold", "ran"]);
  });

  it("each message can be replaced, by a text or a builder", async () => {
    const { fates } = await runTurns(loop, {
      guard: {
        feedback: {
          messages: { consecutive: "Same call twice.", redundant: ({ tool }) => `You already ran ${tool}.` },
        },
      },
    });
    expect(fates[1]?.content.startsWith("Same call twice.\n")).toBe(true);
    expect(fates[3]?.content.startsWith("You already ran read_file.\n")).toBe(true);
  });
});

describe("counting rules (for tuning on recorded runs)", () => {
  const rerun = (i: number) => [
    [call("bash", { command: "python reproduce.py" })],
    [call("bash", { command: `sed -i 's/v${i}/v${i + 1}/' lib.py` })],
  ];
  const bashTool = (outputs: string[]) =>
    tool(
      async ({ command }) => {
        if (command.startsWith("python")) return outputs.shift() ?? "same";
        return "";
      },
      { name: "bash", description: "run", schema: z.object({ command: z.string() }) },
    );
  async function runBash(guard: ConstructorParameters<typeof GuardedToolNode>[1], outputs: string[]) {
    const turns = [0, 1, 2, 3].flatMap(rerun);
    const llm = new ScriptedChatModel(turns.map((toolCalls) => ({ toolCalls })));
    const agent = createReactAgent({
      llm,
      tools: new GuardedToolNode([bashTool(outputs)], guard),
      stateSchema: GuardMessagesState,
    });
    const out = await agent.invoke({ messages: [{ role: "user", content: "fix it" }] });
    return fatesOf(out.messages).map((f) => f.fate);
  }

  it("by default, a test re-run after each edit runs: only re-runs that kept producing one result count", async () => {
    expect(await runBash({}, ["fail 1", "fail 2", "fail 3", "ok"])).toEqual(Array(8).fill("ran"));
  });

  it("countChangedResults: true (seed 000 as written) blocks a test re-run after each edit the 4th time", async () => {
    expect(await runBash({ rules: { countChangedResults: true } }, ["fail 1", "fail 2", "fail 3", "ok"])).toEqual([
      ...["ran", "ran", "ran", "ran", "ran", "ran"],
      ...["threshold", "ran"],
    ]);
  });

  /** Decides and records calls one by one with the core (each allowed call returns `ok`/`text`): their fates. */
  function core(options: ReturnType<typeof resolveToolGuardOptions>) {
    let state = emptyToolGuardState();
    const fates: string[] = [];
    const step = (name: string, args: Record<string, unknown>, ok = true, text = "same") => {
      const d = decideToolCall(state, { name, args, id: `c${fates.length}` }, options);
      state = reduceToolGuard(state, d.events);
      if (d.allowed) state = reduceToolGuard(state, outcomeEvents(d, { ok, text }, options));
      fates.push(d.allowed ? "ran" : (d.rule ?? "blocked"));
    };
    return { step, fates, state: () => state };
  }

  it("the same-tool rule remembers another tool's edit across the calls after it (a read between edit and re-run)", () => {
    // countAcrossMutations "same-tool" (the default): a check re-run after another tool changed something does not
    // add up, also when a third call came between the edit and the re-run.
    const { step, fates, state } = core(resolveToolGuardOptions({ repetitionThreshold: 2, windowSize: 20 }));
    for (const content of ["1", "2"]) {
      step("run_tests", {}, false, "FAIL");
      step("write_file", { path: "a.py", content }, true, "ok");
      step("list_files", { path: content }, true, "a.py");
    }
    step("run_tests", {}, false, "FAIL");
    expect(fates).toEqual(Array(7).fill("ran"));
    // The change keeps the key of the call that made it: the same tool's other calls see it (issue 43, class 4).
    expect(state().repetition.changes?.[0]).toEqual({
      tool: "write_file",
      epoch: 2,
      paths: ["a.py"],
      key: expect.any(String),
    });
  });

  it("the same-tool rule: another tool's write separates a read's repeats only where it changed what the read reads", () => {
    const options = resolveToolGuardOptions({ repetitionThreshold: 2, windowSize: 20, rules: { redundancy: false } });
    const fatesAfterWriteTo = (written: string) => {
      const { step, fates } = core(options);
      step("read_file", { path: "a.py" });
      step("write_file", { path: written, content: "x" });
      step("read_file", { path: "a.py" });
      step("list_files", { path: "src" });
      step("read_file", { path: "a.py" });
      return fates;
    };
    // A write to another file changes nothing the read depends on: the three reads add up (seed 000's example).
    expect(fatesAfterWriteTo("b.py")).toEqual(["ran", "ran", "ran", "ran", "threshold"]);
    // A write to the file itself (or the folder it is in) is a new question for the read.
    expect(fatesAfterWriteTo("a.py")).toEqual(["ran", "ran", "ran", "ran", "ran"]);
  });

  it("the same-tool rule keeps 32 changes with their files; older ones count as one change of anything", () => {
    const options = resolveToolGuardOptions({ repetitionThreshold: 2, windowSize: 100, rules: { redundancy: false } });
    const fatesAfterWrites = (writes: number) => {
      const { step, fates, state } = core(options);
      step("read_file", { path: "a.py" });
      for (let i = 0; i < writes; i += 1) step("write_file", { path: `other/b${i}.py`, content: "x" });
      step("read_file", { path: "a.py" });
      step("list_files", { path: "src" });
      step("read_file", { path: "a.py" });
      return { fates: fates.filter((_, i) => i === 0 || i > writes), kept: state().repetition.changes?.length };
    };
    // 30 writes elsewhere: each is known not to touch a.py, the reads add up.
    expect(fatesAfterWrites(30)).toEqual({ fates: ["ran", "ran", "ran", "threshold"], kept: 30 });
    // 40: the oldest are merged into one change of anything, and the first read no longer counts (never more blocks).
    expect(fatesAfterWrites(40)).toEqual({ fates: ["ran", "ran", "ran", "ran"], kept: 33 });
    // Merged changes all made by one tool stay that tool's: its own repeats across them still add up.
    const { step, fates } = core(options);
    step("write_file", { path: "hot.py", content: "x" });
    for (let i = 0; i < 40; i += 1) step("write_file", { path: `other/b${i}.py`, content: "x" });
    step("write_file", { path: "hot.py", content: "x" });
    step("read_file", { path: "z.py" });
    step("write_file", { path: "hot.py", content: "x" });
    expect(fates.slice(-3)).toEqual(["ran", "ran", "threshold"]);
  });

  it("countAcrossMutations: false lets a re-run after each successful edit through", async () => {
    expect(await runBash({ rules: { countAcrossMutations: false } }, ["fail 1", "fail 2", "fail 3", "ok"])).toEqual(
      Array(8).fill("ran"),
    );
  });

  it("countChangedResults: false counts only re-runs that kept producing the same result", async () => {
    expect(await runBash({ rules: { countChangedResults: false } }, ["fail 1", "fail 2", "fail 3", "ok"])).toEqual(
      Array(8).fill("ran"),
    );
    expect(await runBash({ rules: { countChangedResults: false } }, ["same", "same", "same", "same"])).toEqual([
      ...["ran", "ran", "ran", "ran", "ran", "ran"],
      ...["threshold", "ran"],
    ]);
  });
});

describe("integration details", () => {
  it("options are validated when the node is built, naming the bad field", () => {
    expect(() => new GuardedToolNode([], { windowSize: 0 })).toThrow(GuardOptionsError);
    expect(() => new GuardedToolNode([], { windowSize: 0 })).toThrow(/windowSize/);
    expect(() => new GuardedToolNode([], { mode: "strict" as "enforce" })).toThrow(/mode/);
    expect(() => new GuardedToolNode([], { tools: { t: { exempt: "yes" as unknown as boolean } } })).toThrow(
      /tools\.t\.exempt/,
    );
    expect(() => new GuardedToolNode([], { windowSise: 3 } as never)).toThrow(/windowSise/);
  });

  it("rare options live in groups; one written at the top is refused by name, and a group is strict", () => {
    expect(() => new GuardedToolNode([], { consecutive: false, runBoundary: "none" } as never)).toThrow(
      /unrecognized options: consecutive, runBoundary/,
    );
    expect(() => new GuardedToolNode([], { events: false } as never)).toThrow(/events/);
    expect(() => new GuardedToolNode([], { rules: { windowSize: 3 } } as never)).toThrow(/rules: .*windowSize/);
    expect(() => new GuardedToolNode([], { memory: { runBoundary: "thread" } } as never)).toThrow(
      /memory\.runBoundary/,
    );
    const node = new GuardedToolNode([], {
      rules: { cycles: false, root: "/repo" },
      feedback: { maxArgsChars: 80 },
      memory: { acrossRuns: "keep" },
    });
    expect(node.guardOptions.rules).toMatchObject({ cycles: false, root: "/repo", consecutive: true });
    expect(node.guardOptions.feedback).toMatchObject({ maxArgsChars: 80, maxResultChars: 1000, events: true });
    expect(node.guardOptions.memory).toMatchObject({ acrossRuns: "keep", runBoundary: "human-message" });
  });

  it("the escalation hook and node and the repeat-query guard validate their options too", () => {
    const node = new GuardedToolNode([]);
    expect(() => escalationHook(node, { interrupt: "no" } as never)).toThrow(/escalationHook options:\n- interrupt/);
    expect(() => escalationHook(node, { exit: "end" } as never)).toThrow(/unrecognized option: exit/);
    expect(() => escalationNode(node, { next: "" })).toThrow(/next: must be a non-empty node name/);
    expect(() => escalationNode(node, { model: "agent", next: "tools", done: END, exit: END })).not.toThrow();
    expect(() => repeatQueryGuard({ on_ok: "a", on_repeat: "b", hint: "yes" as never })).toThrow(GuardOptionsError);
  });

  it("planCalls gives the response's own events with its plan: a person's new message starts a new run", () => {
    const node = new GuardedToolNode(createWorkspaceTools(sampleProject()));
    const toolGuard = reduceToolGuard(undefined, [
      { type: "run", run: "h1", keep: { operations: false, strikes: false } },
    ]);
    const messages = [
      new HumanMessage({ id: "h2", content: "Next task" }),
      new AIMessage({ content: "", tool_calls: [{ name: "list_files", args: {}, id: "c1" }] }),
    ];
    const plan = node.planCalls({ messages, toolGuard });
    expect(plan.decisions.map((d) => d.allowed)).toEqual([true]);
    expect(plan.turn.turnEvents).toMatchObject([{ type: "run", run: "h2" }]);
  });

  it("a graph without the guard channels fails with a clear error", async () => {
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("tools", new GuardedToolNode(createWorkspaceTools(sampleProject())))
      .addEdge(START, "tools")
      .addEdge("tools", END)
      .compile();
    const ai = new AIMessage({ content: "", tool_calls: [{ name: "list_files", args: {}, id: "1" }] });
    await expect(graph.invoke({ messages: [ai] })).rejects.toThrow(GuardStateMissingError);
  });

  it("tools named like Object.prototype members are classified by their own settings only", () => {
    expect(isReadOnlyCall("toString", {}, { tools: {}, readOnlyHints: {} })).toBe(false);
    expect(isReadOnlyCall("constructor", { path: "a" })).toBe(false);
    const options = resolveToolGuardOptions();
    const state = planToolCalls(
      emptyToolGuardState(),
      [
        { name: "valueOf", args: { path: "log.txt" }, id: "1" },
        { name: "read_notes", args: {}, id: "2" },
      ],
      options,
    ).state;
    expect(
      planToolCalls(state, [{ name: "valueOf", args: { path: "log.txt" }, id: "3" }], options).decisions[0]?.allowed,
    ).toBe(true);
  });

  it("arguments that throw when read give the tool's own error, as in ToolNode, never a crash", async () => {
    const args = {};
    Object.defineProperty(args, "path", {
      enumerable: true,
      get() {
        throw new Error("boom");
      },
    });
    const graph = new StateGraph(GuardMessagesState)
      .addNode("tools", new GuardedToolNode(createWorkspaceTools(sampleProject()), { ignoreArgs: ["path"] }))
      .addEdge(START, "tools")
      .addEdge("tools", END)
      .compile();
    const ai = new AIMessage({ content: "", tool_calls: [{ name: "read_file", args, id: "1" }] });
    const out = await graph.invoke({ messages: [ai] });
    const reply = out.messages[1] as ToolMessage;
    expect(reply.status).toBe("error");
    expect(reply.tool_call_id).toBe("1");
    expect(toolCallSignature("read_file", args, { ignoreArgs: ["path"] })).toMatch(/^read_file:/);
  });

  it("tool errors still become error ToolMessages, as in ToolNode", async () => {
    const { fates } = await runTurns([[call("read_file", { path: "missing.py" })], [call("no_such_tool", {})]]);
    expect(fates.map((f) => f.fate)).toEqual(["failed", "failed"]);
    // A tool the node does not have: the answer names its tools (test/graph/unknown-tools.test.ts).
    expect(fates[1]?.content).toMatch(/^Error: no_such_tool is not a valid tool\. Available tools: read_file, /);
  });

  it("a tool that returns a Command still works, and its call is recorded", async () => {
    const setTopic = tool(
      async (_input, runtime) =>
        new Command({
          update: {
            messages: [new ToolMessage({ content: "topic set", tool_call_id: runtime.toolCall?.id ?? "" })],
          },
        }),
      { name: "set_topic", description: "d", schema: z.object({ topic: z.string() }) },
    );
    const llm = new ScriptedChatModel([
      { toolCalls: [{ name: "set_topic", args: { topic: "a" } }] },
      { toolCalls: [{ name: "set_topic", args: { topic: "a" } }] },
    ]);
    const agent = createReactAgent({
      llm,
      tools: new GuardedToolNode([setTopic]),
      stateSchema: GuardMessagesState,
      checkpointer: new MemorySaver(),
    });
    const out = await agent.invoke(
      { messages: [{ role: "user", content: "go" }] },
      { configurable: { thread_id: "c" } },
    );
    // set_ says "the same change again does nothing new": with nothing changed since, it is redundant.
    expect(fatesOf(out.messages).map((f) => f.fate)).toEqual(["ran", "redundant"]);
    expect(out.toolGuard.stats.allowed).toBe(1);
  });

  it("answers a response with Commands as ToolNode does: updates, Commands, and parent sends merged into one", async () => {
    const plainTool = tool(async ({ n }) => `plain ${n}`, {
      name: "plain_tool",
      description: "d",
      schema: z.object({ n: z.number() }),
    });
    const updating = tool(
      async (_input, runtime) =>
        new Command({
          update: { messages: [new ToolMessage({ content: "updated", tool_call_id: runtime.toolCall?.id ?? "" })] },
        }),
      { name: "update_topic", description: "d", schema: z.object({ topic: z.string() }) },
    );
    const sending = tool(async ({ to }) => new Command({ graph: Command.PARENT, goto: [new Send(to, { from: to })] }), {
      name: "hand_off",
      description: "d",
      schema: z.object({ to: z.string() }),
    });
    const message = new AIMessage({
      content: "",
      tool_calls: [
        { name: "plain_tool", args: { n: 1 }, id: "a", type: "tool_call" },
        { name: "hand_off", args: { to: "x" }, id: "b", type: "tool_call" },
        { name: "update_topic", args: { topic: "t" }, id: "c", type: "tool_call" },
        { name: "hand_off", args: { to: "y" }, id: "d", type: "tool_call" },
      ],
    });
    const tools = [plainTool, updating, sending];
    const plain = (await new ToolNode(tools).invoke({ messages: [message] })) as unknown[];
    const node: { invoke(input: unknown): Promise<unknown> } = new GuardedToolNode<unknown>(tools);
    const guarded = (await node.invoke({ messages: [message], toolGuard: emptyToolGuardState() })) as unknown[];
    // The guarded node adds its own update (the toolGuard events) after ToolNode's outputs.
    expect(guarded.length).toBe(plain.length + 1);
    const shape = (outputs: unknown[]) =>
      outputs.map((o) =>
        o instanceof Command
          ? { graph: o.graph, goto: o.goto, update: JSON.stringify(o.update) }
          : JSON.stringify((o as { messages: ToolMessage[] }).messages.map((m) => [m.tool_call_id, m.content])),
      );
    expect(shape(guarded.slice(0, -1))).toEqual(shape(plain));
    // The two hand-offs became one parent Command that sends to both.
    const parent = plain.find((o) => o instanceof Command && o.graph === Command.PARENT) as Command;
    expect((parent.goto as Send[]).map((s) => s.node)).toEqual(["x", "y"]);
  });

  it("behaves as ToolNode when nothing is blocked (same messages)", async () => {
    const turns = [[call("read_file", { path: "app.py" }), call("list_files", {})], [call("read_file", { path: "x" })]];
    const guarded = await runTurns(turns);
    const llm = new ScriptedChatModel([...turns.map((toolCalls) => ({ toolCalls })), "Finished."]);
    const plain = await createReactAgent({ llm, tools: new ToolNode(createWorkspaceTools(sampleProject())) }).invoke({
      messages: [{ role: "user", content: "Work on the project." }],
    });
    const strip = (ms: typeof plain.messages) =>
      ms.filter((m) => m.getType() === "tool").map((m) => [(m as ToolMessage).status, m.content]);
    expect(strip(guarded.result.messages)).toEqual(strip(plain.messages));
  });
});
