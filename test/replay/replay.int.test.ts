/** Replay: the same decisions as the live graph, the input formats, and the CLI. */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import {
  AIMessage,
  type BaseMessage,
  HumanMessage,
  mapChatMessagesToStoredMessages,
  ToolMessage,
} from "@langchain/core/messages";
import { afterAll, describe, expect, it } from "vitest";
import { GuardEscalationError, type ToolGuardState } from "../../src/index.js";
import { type ReplayRun, readRuns, replayGuards, runFromMessages } from "../../src/replay/index.js";
import type { ScriptStep } from "../../src/testing/index.js";
import { liveDecisions, replayedDecisions } from "../support/decisions.js";
import { buildEscalationAgent } from "../support/escalation.js";

const exec = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "langgraph-guards-replay-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const write = { name: "write_file", args: { path: "game.py", content: "import pygame\npygame.init()\n" } };
const near = { name: "write_file", args: { path: "game.py", content: "import pygame\npygame.init( )\n" } };
const update = (n: number) => ({ name: "update_record", args: { id: "r1", fields: { status: `s${n}` } } });
const SCRIPT: ScriptStep[] = [
  { content: "Writing the game.", toolCalls: [write] },
  { content: "Let me write it again.", toolCalls: [write] }, // level 1
  { content: "Once more.", toolCalls: [near] }, // reminder
  { content: "I'll check the packages first.", toolCalls: [{ name: "run", args: { cmd: "pip list" } }] }, // progress
  { content: "", toolCalls: [update(1)] },
  { content: "", toolCalls: [update(2)] },
  { content: "", toolCalls: [update(3), update(33)] }, // parallel calls
  { content: "", toolCalls: [update(4)] }, // repeat_failure: strike 1
  { content: "", toolCalls: [update(5)] }, // strike 2
  { content: "", toolCalls: [update(6)] }, // strike 3: the hook ends the run (no interrupts)
  "never reached",
];

describe("replay equals the live GuardedToolNode", () => {
  it("same decisions and same messages for a scripted run (blocks, a reminder, repeated errors, the end)", async () => {
    const escalation = { sameErrorThreshold: 3 };
    const { agent, config, tools } = buildEscalationAgent(SCRIPT, { interrupt: false, guard: { escalation } });
    const out = await agent.invoke({ messages: [new HumanMessage("Write the game, then update r1.")] }, config);
    const live = liveDecisions(out.messages);
    expect(live.map((d) => d.action)).toEqual([
      "allow",
      "block",
      "block",
      "allow",
      "allow",
      "allow",
      "allow",
      "allow",
      "block",
      "block",
      "stop",
    ]);
    expect(live.map((d) => d.rule).filter(Boolean)).toEqual([
      "consecutive",
      "near_duplicate",
      "repeat_failure",
      "repeat_failure",
    ]);

    // The recorded conversation, as a checkpointer stores it, replayed with the same options and tool list.
    const stored = JSON.parse(JSON.stringify(mapChatMessagesToStoredMessages(out.messages)));
    const run = runFromMessages(stored, "live");
    const replay = replayGuards(run, { agentTools: tools.tools.map((t) => t.name), hook: true, escalation });
    expect(
      replayedDecisions(
        replay.decisions,
        live.map((d) => d.id),
      ),
    ).toEqual(live);
    // The stop is recorded as the live hook records it: the same strikes, counters and blocked calls.
    const liveState = out.toolGuard as ToolGuardState;
    expect(replay.state.escalation.strikes).toBe(3);
    expect(replay.state.stats).toEqual(liveState.stats);
    expect(replay.state.escalation.blocked.map((b) => [b.tool, b.level])).toEqual(
      liveState.escalation.blocked.map((b) => [b.tool, b.level]),
    );
  });

  it("without the hook, replay stops where the live node throws GuardEscalationError, with its message", async () => {
    const escalation = { sameErrorThreshold: 3 };
    const { agent, config, tools } = buildEscalationAgent(SCRIPT, { hook: false, guard: { escalation } });
    const thrown = await agent.invoke({ messages: [new HumanMessage("Write the game, then update r1.")] }, config).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(thrown).toBeInstanceOf(GuardEscalationError);
    // The checkpoint holds every call up to the one that threw (its AI message is the last, unanswered).
    const saved = (await agent.getState(config)).values.messages as BaseMessage[];
    const live = liveDecisions(saved);
    const pending = (saved.at(-1) as AIMessage).tool_calls ?? [];
    expect(pending).toHaveLength(1);
    const stored = JSON.parse(JSON.stringify(mapChatMessagesToStoredMessages(saved)));
    // The unanswered call is replayed too (with no recorded result): that is where the replay stops.
    const run = runFromMessages(stored, "live");
    const replay = replayGuards(run, { agentTools: tools.tools.map((t) => t.name), hook: false, escalation });
    const decided = replayedDecisions(
      replay.decisions,
      live.map((d) => d.id),
    );
    expect(decided.slice(0, live.length)).toEqual(live);
    expect(decided.slice(live.length)).toEqual([
      {
        id: undefined,
        action: "stop",
        rule: undefined,
        escalation: undefined,
        content: `GuardEscalationError: ${(thrown as Error).message}`,
      },
    ]);
  });

  it("reads the same run from every form of LangChain messages", async () => {
    const { agent, config } = buildEscalationAgent(SCRIPT.slice(0, 4).concat(["done"]), { interrupt: false });
    const out = await agent.invoke({ messages: [new HumanMessage("Write.")] }, config);
    const forms = {
      instances: out.messages,
      toJSON: JSON.parse(JSON.stringify(out.messages)),
      stored: mapChatMessagesToStoredMessages(out.messages),
      plain: out.messages.map((m: BaseMessage) => ({
        type: m.getType(),
        content: m.content,
        ...(AIMessage.isInstance(m) ? { tool_calls: m.tool_calls } : {}),
        ...(ToolMessage.isInstance(m) ? { tool_call_id: m.tool_call_id, status: m.status, name: m.name } : {}),
      })),
    };
    const actions = Object.entries(forms).map(([form, messages]) => [
      form,
      replayGuards(runFromMessages(messages, form)).decisions.map((d) => d.action),
    ]);
    for (const [, a] of actions) expect(a).toEqual(["allow", "block", "block", "allow"]);
  });
});

describe("input formats", () => {
  const openai = [
    { role: "system", content: "You are helpful." },
    { role: "user", content: "Read a.py twice." },
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "c1", type: "function", function: { name: "read_file", arguments: '{"path":"a.py"}' } }],
    },
    { role: "tool", tool_call_id: "c1", content: "print(1)" },
    {
      role: "assistant",
      content: "",
      tool_calls: [{ id: "c2", type: "function", function: { name: "read_file", arguments: '{"path": "a.py"}' } }],
    },
    { role: "tool", tool_call_id: "c2", content: "print(1)" },
  ];

  it("reads OpenAI chat messages, a normalized run, and JSON Lines of either", () => {
    const a = readRuns(JSON.stringify(openai), { file: "chat.json" });
    expect(a.errors).toEqual([]);
    expect(replayGuards(a.runs[0] as ReplayRun).decisions.map((d) => [d.action, d.waste])).toEqual([
      ["allow", false],
      ["block", true],
    ]);
    const normalized: ReplayRun = {
      id: "n1",
      steps: [
        { role: "user", text: "go" },
        { role: "assistant", text: "", tool_calls: [{ name: "get_order", args: { id: 1 } }] },
        { role: "tool", name: "get_order", ok: true, text: "{}" },
        { role: "assistant", text: "", tool_calls: [{ name: "get_order", args: { id: 1 } }] },
        { role: "tool", name: "get_order", ok: true, text: "{}" },
      ],
    };
    const lines = [JSON.stringify(normalized), JSON.stringify({ messages: openai })].join("\n");
    const b = readRuns(lines, { file: "mixed.jsonl" });
    expect(b.errors).toEqual([]);
    expect(b.runs.map((r) => r.id)).toEqual(["n1", "mixed.jsonl:2"]);
  });

  it("bad input names the line, and the other runs are still read", () => {
    const good = JSON.stringify({ id: "ok", steps: [{ role: "user", text: "hi" }] });
    const orphan = JSON.stringify({ id: "orphan", steps: [{ role: "tool", name: "x", ok: true, text: "?" }] });
    const text = [good, "{not json", JSON.stringify({ foo: 1 }), orphan, JSON.stringify(openai.slice(3))].join("\n");
    const { runs, errors } = readRuns(text, { file: "bad.jsonl" });
    expect(runs.map((r) => r.id)).toEqual(["ok"]);
    expect(errors.map((e) => e.message)).toEqual([
      expect.stringMatching(/^bad\.jsonl:2: not JSON/),
      expect.stringMatching(/^bad\.jsonl:3: unknown format/),
      "bad.jsonl:4: step 1: a tool result without its call",
      'bad.jsonl:5: message 1: a tool result without its call (tool_call_id "c1")',
    ]);
    expect(readRuns(JSON.stringify(openai), { file: "f", format: "langchain" }).errors[0]?.message).toBe(
      "f: this is openai input, not langchain",
    );
  });
});

describe("the CLI", () => {
  const cli = (...args: string[]) =>
    exec(process.execPath, ["--import", "tsx", "src/replay/cli.ts", ...args], {
      cwd: join(import.meta.dirname, "..", ".."),
    }).then(
      (r) => ({ code: 0, ...r }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
    );

  it("prints the summary table for every input format, and JSON with --json", async () => {
    const run: ReplayRun = {
      id: "r",
      source: "demo",
      steps: [
        { role: "assistant", text: "", tool_calls: [{ name: "get_x", args: {} }] },
        { role: "tool", ok: true, text: "x" },
        { role: "assistant", text: "", tool_calls: [{ name: "get_x", args: {} }] },
        { role: "tool", ok: true, text: "x" },
      ],
    };
    writeFileSync(join(dir, "runs.jsonl"), `${JSON.stringify(run)}\n`);
    writeFileSync(
      join(dir, "chat.json"),
      JSON.stringify([
        {
          role: "assistant",
          content: "",
          tool_calls: [{ id: "a", type: "function", function: { name: "ls", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: "a", content: "a.py" },
      ]),
    );
    const text = await cli("replay", join(dir, "runs.jsonl"), join(dir, "chat.json"), "--no-progress");
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^\s+runs\s+calls\s+blocked c\/t\/r\/n\/f\/y\/e\/l/);
    expect(text.stdout).toMatch(/\ndemo\s+1\s+2\s+1\/0\/0\/0\/0\/0\/0\/0/);
    expect(text.stdout).toMatch(/\nall\s+2\s+3\s+1\/0\/0\/0\/0\/0\/0\/0\s+0\s+0\/0\s+1\s+100\.0%\s+0\.0%/);
    const json = await cli("replay", join(dir, "runs.jsonl"), "--json", "--detail");
    const parsed = JSON.parse(json.stdout) as { rates: { wasteCaught: number }; runs: { notRun: unknown[] }[] };
    expect(parsed.rates.wasteCaught).toBe(1);
    expect(parsed.runs[0]?.notRun).toEqual([
      { index: 1, toolName: "get_x", action: "block", rule: "consecutive", waste: true },
    ]);
  });

  it("reports bad input by line and still evaluates the rest; usage errors exit 2", async () => {
    writeFileSync(join(dir, "bad.jsonl"), `{oops\n${JSON.stringify({ id: "fine", steps: [] })}\n`);
    const bad = await cli("replay", join(dir, "bad.jsonl"), "--no-progress");
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("bad.jsonl:1: not JSON");
    expect(bad.stdout).toMatch(/\nall\s+1\s+0/);
    expect((await cli("replay")).code).toBe(2);
    expect((await cli("replay", join(dir, "bad.jsonl"), "--format", "xml")).stderr).toContain('unknown --format "xml"');
    writeFileSync(join(dir, "opts.json"), JSON.stringify({ windowSize: 0 }));
    const opts = await cli("replay", join(dir, "bad.jsonl"), "--options", join(dir, "opts.json"));
    expect(opts.code).toBe(2);
    expect(opts.stderr).toContain("windowSize");
  });
});
