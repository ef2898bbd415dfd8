/**
 * Result dedupe and path-aware effects (issue 16): an allowed call whose result repeats exactly an earlier identical
 * call's, still in the conversation, is answered with a short note pointing at that call — in createReactAgent with
 * GuardedToolNode and in createAgent with guardMiddleware alike; never when the earlier answer is gone or the note
 * would be longer. A shell write of known files makes stale only the reads of those files.
 */
import { type BaseMessage, RemoveMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { detectCall, emptyToolGuardState, reduceToolGuard, resolveToolGuardOptions } from "../../src/core/index.js";
import {
  GuardedToolNode,
  type GuardLog,
  GuardMessagesState,
  isGuardStreamEvent,
  type ToolGuardOptions,
} from "../../src/index.js";
import { guardMiddleware } from "../../src/middleware/index.js";
import { ScriptedChatModel, type ScriptedToolCall } from "../../src/testing/index.js";
import { unchangedNote } from "../../src/tool-calls/core/earlier.js";
import { commitTurn, planTurn } from "../../src/tool-calls/core/plan.js";

const REPORT = `quarterly report: ${"revenue up, costs flat. ".repeat(20)}`;

/** A tool of unknown kind whose answer never changes (judged by its results: its 2nd identical call runs). */
function reportTool(runs: { n: number }, text = () => REPORT) {
  return tool(
    async () => {
      runs.n += 1;
      return text();
    },
    { name: "fetch_report", description: "Fetches the report.", schema: z.object({ q: z.string() }) },
  );
}

const fetch = (q = "q3"): ScriptedToolCall[] => [{ name: "fetch_report", args: { q } }];

async function viaNode(turns: ScriptedToolCall[][], options: ToolGuardOptions = {}, text?: () => string) {
  const runs = { n: 0 };
  const agent = createReactAgent({
    llm: new ScriptedChatModel([...turns.map((toolCalls) => ({ toolCalls })), "Done."]),
    tools: new GuardedToolNode([reportTool(runs, text)], options),
    stateSchema: GuardMessagesState,
    checkpointer: new MemorySaver(),
  });
  const config = { configurable: { thread_id: "t" }, recursionLimit: 100 };
  const out = await agent.invoke({ messages: [{ role: "user", content: "Report?" }] }, config);
  return { runs, messages: out.messages as BaseMessage[], agent, config };
}

async function viaMiddleware(turns: ScriptedToolCall[][], options: ToolGuardOptions = {}) {
  const runs = { n: 0 };
  const agent = createAgent({
    model: new ScriptedChatModel([...turns.map((toolCalls) => ({ toolCalls })), "Done."]),
    tools: [reportTool(runs)],
    middleware: [guardMiddleware(options)],
    checkpointer: new MemorySaver(),
  });
  const out = await agent.invoke(
    { messages: [{ role: "user", content: "Report?" }] },
    { configurable: { thread_id: "t" }, recursionLimit: 100 },
  );
  return { runs, messages: out.messages as BaseMessage[] };
}

const toolMessages = (messages: BaseMessage[]) => messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m));

describe("result dedupe", () => {
  for (const [adapter, run] of [
    ["GuardedToolNode", viaNode],
    ["guardMiddleware", viaMiddleware],
  ] as const) {
    it(`${adapter}: the 2nd identical call runs and is answered with a note pointing at the 1st; the 3rd is blocked`, async () => {
      const { runs, messages } = await run([fetch(), fetch(), fetch()]);
      const answers = toolMessages(messages);
      expect(runs.n).toBe(2);
      expect(answers[0]?.content).toBe(REPORT);
      expect(answers[1]?.content).toMatch(
        new RegExp(
          `^Unchanged: exactly the same result as the earlier identical call ${answers[0]?.tool_call_id} of 'fetch_report'`,
        ),
      );
      expect(String(answers[1]?.content).length).toBeLessThan(REPORT.length);
      expect(answers[1]?.status).not.toBe("error");
      // Two identical results in a row: the 3rd identical call is stuck, blocked before it runs.
      expect(answers[2]?.status).toBe("error");
      expect(String(answers[2]?.content)).toContain("IDENTICAL inputs back-to-back");
    });

    it(`${adapter}: dedupeResults: false sends the result again`, async () => {
      const { messages } = await run([fetch(), fetch()], { feedback: { dedupeResults: false } });
      expect(toolMessages(messages).map((m) => m.content)).toEqual([REPORT, REPORT]);
    });
  }

  it("writes an `unchanged` guard event to the custom stream and counts it in guardLog, in both adapters", async () => {
    const script = () => new ScriptedChatModel([{ toolCalls: fetch() }, { toolCalls: fetch() }, "Done."]);
    const node = createReactAgent({
      llm: script(),
      tools: new GuardedToolNode([reportTool({ n: 0 })]),
      stateSchema: GuardMessagesState,
      checkpointer: new MemorySaver(),
    });
    const middleware = createAgent({
      model: script(),
      tools: [reportTool({ n: 0 })],
      middleware: [guardMiddleware()],
      checkpointer: new MemorySaver(),
    });
    for (const agent of [node, middleware] as const) {
      const config = { configurable: { thread_id: "t" }, streamMode: "custom" as const };
      const chunks: unknown[] = [];
      const input = { messages: [{ role: "user", content: "Report?" }] };
      for await (const chunk of await (agent as typeof node).stream(input, config)) chunks.push(chunk);
      const events = chunks.filter(isGuardStreamEvent);
      // The 2nd call runs although it repeats the 1st (a near miss), and its unchanged result is deduped.
      expect(events.map((e) => e.kind)).toEqual(["near-miss", "unchanged"]);
      expect(events[1]).toMatchObject({ guard: "tool-calls", tool: "fetch_report" });
      expect(events[1]?.bytesSaved).toBeGreaterThan(REPORT.length - 200);
      const state = (await (agent as typeof node).getState(config)).values as { guardLog: GuardLog };
      expect(state.guardLog.counts.unchanged).toBe(1);
    }
  });

  it("a changed result is sent whole; a result shorter than the note is sent as it is", async () => {
    let n = 0;
    const changing = await viaNode([fetch(), fetch()], {}, () => `${REPORT} v${++n}`);
    expect(toolMessages(changing.messages).map((m) => m.content)).toEqual([`${REPORT} v1`, `${REPORT} v2`]);
    const short = await viaNode([fetch(), fetch()], {}, () => "42");
    expect(toolMessages(short.messages).map((m) => m.content)).toEqual(["42", "42"]);
  });

  it("never points at an answer that is no longer in the conversation (removed, summarized)", async () => {
    const runs = { n: 0 };
    const agent = createReactAgent({
      llm: new ScriptedChatModel([{ toolCalls: fetch() }, "Done.", { toolCalls: fetch() }, "Done."]),
      tools: new GuardedToolNode([reportTool(runs)]),
      stateSchema: GuardMessagesState,
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: "t" } };
    const first = await agent.invoke({ messages: [{ role: "user", content: "Report?" }] }, config);
    const gone = toolMessages(first.messages)[0] as ToolMessage;
    await agent.updateState(config, { messages: [new RemoveMessage({ id: gone.id as string })] });
    // The same thread goes on: the identical call's result is sent whole, since the earlier one is gone.
    const again = await agent.invoke({ messages: [{ role: "user", content: "Again?" }] }, config);
    expect(runs.n).toBe(2);
    expect(toolMessages(again.messages).map((m) => m.content)).toEqual([REPORT]);
  });

  it("unchangedNote: the pure rule", () => {
    const options = resolveToolGuardOptions();
    const call = { name: "fetch_report", args: { q: "q3" }, id: "c1" };
    const plan = planTurn(emptyToolGuardState(), { id: "m1", text: "", calls: [call] }, options);
    const state = reduceToolGuard(emptyToolGuardState(), commitTurn(plan, [{ ok: true, text: REPORT }], options));
    const key = plan.decisions[0]?.key as string;
    const again = { key, tool: "fetch_report", id: "c2" };
    expect(unchangedNote(state, again, { ok: true, text: REPORT }, options, () => true)).toMatch(/call c1/);
    expect(unchangedNote(state, again, { ok: true, text: `${REPORT}!` }, options, () => true)).toBeUndefined();
    expect(unchangedNote(state, again, { ok: false, text: REPORT }, options, () => true)).toBeUndefined();
    expect(unchangedNote(state, again, { ok: true, text: REPORT }, options, () => false)).toBeUndefined();
    expect(
      unchangedNote(state, { ...again, id: "c1" }, { ok: true, text: REPORT }, options, () => true),
    ).toBeUndefined();
  });
});

describe("the redundant rule's message", () => {
  it("says a repeated change already failed (not that it succeeded) when its identical call failed", () => {
    const options = resolveToolGuardOptions();
    const call = { name: "update_order", args: { id: "o1", qty: 2 }, id: "c1" };
    const plan = planTurn(emptyToolGuardState(), { id: "m1", text: "", calls: [call] }, options);
    const failed = reduceToolGuard(
      emptyToolGuardState(),
      commitTurn(plan, [{ ok: false, text: "Error: order is locked" }], options),
    );
    const again = planTurn(failed, { id: "m2", text: "", calls: [{ ...call, id: "c2" }] }, options).decisions[0];
    expect(again?.rule).toBe("redundant");
    expect(again?.message).toMatch(/already failed with these inputs/);
    expect(again?.message).not.toMatch(/successfully/);
    // A read that succeeded, then another read in between (so the re-read is not back-to-back): the spec's text.
    const read = { name: "read_file", args: { path: "a.py" }, id: "r1" };
    const other = { name: "read_file", args: { path: "b.py" }, id: "r0" };
    const readPlan = planTurn(emptyToolGuardState(), { id: "m3", text: "", calls: [read, other] }, options);
    const outcomes = [
      { ok: true, text: "x" },
      { ok: true, text: "y" },
    ];
    const ran = reduceToolGuard(emptyToolGuardState(), commitTurn(readPlan, outcomes, options));
    const reread = planTurn(ran, { id: "m4", text: "go on", calls: [{ ...read, id: "r2" }] }, options).decisions[0];
    expect(reread?.message).toMatch(/was already successfully executed/);
  });
});

describe("path-aware effects of shell commands", () => {
  const options = resolveToolGuardOptions({ rules: { root: "/repo" } });
  /** Runs shell commands in order (each succeeds with the given output) and detects the last one. */
  function ruleAfter(commands: [string, string][], last: string) {
    let state = emptyToolGuardState();
    for (const [i, [command, text]] of commands.entries()) {
      const call = { name: "bash", args: { command }, id: `c${i}` };
      const plan = planTurn(state, { id: `m${i}`, text: "", calls: [call] }, options);
      expect(plan.decisions[0]?.allowed, command).toBe(true);
      state = reduceToolGuard(state, commitTurn(plan, [{ ok: true, text }], options));
    }
    return detectCall(state, { name: "bash", args: { command: last } }, options).rule;
  }

  it("an edit of a.py leaves the read of b.py valid, and makes the read of a.py stale", () => {
    const edits: [string, string][] = [
      ["cat b.py", "B"],
      ["cat a.py", "A"],
      ["sed -i 's/x/y/' a.py", ""],
    ];
    expect(ruleAfter(edits, "cat b.py")).toBe("redundant");
    expect(ruleAfter(edits, "cat a.py")).toBeUndefined();
    expect(ruleAfter(edits, "cat /repo/b.py")).toBeUndefined(); // another command line: another call
  });

  it("a write through a redirection or after cd is path-aware too; a folder listing above the write is stale", () => {
    expect(
      ruleAfter(
        [
          ["cat b.py", "B"],
          ["echo x > a.py", ""],
        ],
        "cat b.py",
      ),
    ).toBe("redundant");
    expect(
      ruleAfter(
        [
          ["cat b.py", "B"],
          ["cd /repo && sort -o b.py b.py", ""],
        ],
        "cat b.py",
      ),
    ).toBeUndefined();
    expect(
      ruleAfter(
        [
          ["ls", "a.py b.py"],
          ["echo x > new.py", ""],
        ],
        "ls",
      ),
    ).toBeUndefined();
  });

  it("a command not understood makes every read stale; without root a relative write is not understood", () => {
    expect(
      ruleAfter(
        [
          ["cat b.py", "B"],
          ["python fix.py", "fixed"],
        ],
        "cat b.py",
      ),
    ).toBeUndefined();
    const noRoot = resolveToolGuardOptions();
    let state = emptyToolGuardState();
    for (const [i, command] of ["cat /repo/b.py", "echo x > a.py"].entries()) {
      const plan = planTurn(
        state,
        { id: `m${i}`, text: "", calls: [{ name: "bash", args: { command }, id: `c${i}` }] },
        noRoot,
      );
      state = reduceToolGuard(state, commitTurn(plan, [{ ok: true, text: "B" }], noRoot));
    }
    expect(detectCall(state, { name: "bash", args: { command: "cat /repo/b.py" } }, noRoot).rule).toBeUndefined();
  });
});
