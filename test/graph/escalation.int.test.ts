/** Seed 003 in the graph: feedback, acknowledgment, the four escalation levels, near-duplicates, repeated errors. */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { Command, END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { similarityRatio } from "../../src/core/index.js";
import {
  type EscalationInterrupt,
  escalationHook,
  escalationNode,
  type GuardArtifact,
  GuardEscalationError,
  GuardedToolNode,
  type GuardedToolNodeOptions,
  GuardMessagesState,
  guardHooks,
  isEscalationInterrupt,
  loopDetectHook,
  type ToolGuardState,
} from "../../src/index.js";
import { ScriptedChatModel, type ScriptStep } from "../../src/testing/index.js";
import type { EscalationTurnOutput } from "../fixtures/escalation-turn.js";
import { buildEscalationAgent, escalationTools, seedPace, validHistory } from "../support/escalation.js";

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "langgraph-guards-escalation-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const write = { name: "write_file", args: { path: "game.py", content: "import pygame\npygame.init()\n" } };
const repeatWrite = (content = "Let me try writing the file again."): ScriptStep => ({ content, toolCalls: [write] });

function guardOf(m: BaseMessage): GuardArtifact | undefined {
  return ToolMessage.isInstance(m) ? (m.artifact as { guard?: GuardArtifact } | undefined)?.guard : undefined;
}

/** Runs test/fixtures/escalation-turn.ts on a thread of a SQLite file, in a new Node process. */
async function escalationTurn(
  db: string,
  threadId: string,
  mode: "message" | "resume",
  guard?: GuardedToolNodeOptions,
): Promise<EscalationTurnOutput> {
  const { stdout } = await run(
    process.execPath,
    [
      "--import",
      "tsx",
      "test/fixtures/escalation-turn.ts",
      db,
      threadId,
      mode,
      ...(guard ? [JSON.stringify(guard)] : []),
    ],
    { cwd: join(import.meta.dirname, "..", ".."), timeout: 60_000 },
  );
  return JSON.parse(stdout.trim()) as EscalationTurnOutput;
}

const toolReplies = (messages: BaseMessage[]) => messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m));

describe("seed 003 in the graph", () => {
  it("a blocked call's ToolMessage is the seed's feedback: previous result and 'What will you do differently'", async () => {
    const { agent, config } = buildEscalationAgent([repeatWrite("Writing the game."), repeatWrite(), "Giving up."]);
    const out = await agent.invoke({ messages: [{ role: "user", content: "Write the game." }] }, config);
    const [first, second] = toolReplies(out.messages);
    expect(first?.status).toBe("error"); // the tool ran and failed
    expect(guardOf(first as ToolMessage)).toBeUndefined();
    const content = String(second?.content);
    expect(guardOf(second as ToolMessage)).toMatchObject({ blocked: true, rule: "consecutive", escalation: 1 });
    expect(content).toContain("[DUPLICATE TOOL CALL BLOCKED]");
    expect(content).toContain("diagnostics_failed");
    expect(content).toContain("What will you do differently");
    expect(validHistory(out.messages)).toEqual([]);
  });

  it("a differing next action acknowledges the block; a near-repeat without an acknowledgment gets a reminder", async () => {
    const near = { ...write, args: { ...write.args, content: "import pygame\npygame.init( )\n" } };
    expect(similarityRatio(write.args.content, near.args.content)).toBeGreaterThan(0.9);
    const { agent, config } = buildEscalationAgent([
      repeatWrite("Writing the game."),
      repeatWrite(), // strike 1
      { content: "Once more.", toolCalls: [near] }, // does neither: a reminder, not run
      {
        content: "Instead, I will check if pygame is installed first.",
        toolCalls: [{ name: "run", args: { cmd: "pip show pygame" } }],
      },
      "pygame is missing.",
    ]);
    const out = await agent.invoke({ messages: [{ role: "user", content: "Write the game." }] }, config);
    const replies = toolReplies(out.messages);
    expect(replies.map((r) => guardOf(r)?.rule ?? r.status)).toEqual([
      "error",
      "consecutive",
      "near_duplicate",
      "success",
    ]);
    expect(guardOf(replies[2] as ToolMessage)?.reminder).toBe(true);
    expect(String(replies[2]?.content)).toContain("[ACKNOWLEDGMENT REQUIRED]");
    const state = out.toolGuard as ToolGuardState;
    // The last response acknowledged by a different call that ran and succeeded: progress, the strikes start again.
    expect(state.escalation).toMatchObject({ strikes: 0, pending: false, reminders: 0 });
    expect(state.stats.reminded).toBe(1);
  });
});

describe("reminders", () => {
  const near = (n: number) => ({
    content: "Retrying.",
    toolCalls: [{ name: "write_file", args: { ...write.args, content: `${write.args.content}${" ".repeat(n)}` } }],
  });

  it("are bounded: once they are used up, a near-repeat that does not acknowledge is a strike", async () => {
    for (const [maxReminders, expected] of [
      [1, ["error", "consecutive", "reminder", "near_duplicate"]],
      [0, ["error", "consecutive", "near_duplicate", "near_duplicate"]],
      [2, ["error", "consecutive", "reminder", "reminder"]],
    ] as const) {
      const { agent, config } = buildEscalationAgent([repeatWrite("Writing."), repeatWrite(), near(1), near(2), "x"], {
        guard: { escalation: { maxReminders } },
        interrupt: false, // with no reminder left, the fourth response is strike 3: the run ends there
      });
      const out = await agent.invoke({ messages: [{ role: "user", content: "Write." }] }, config);
      const fates = toolReplies(out.messages).map((r) =>
        guardOf(r)?.reminder ? "reminder" : (guardOf(r)?.rule ?? r.status),
      );
      expect(fates, `maxReminders ${maxReminders}`).toEqual(expected);
      const strikes = expected.filter((f) => f === "consecutive" || f === "near_duplicate").length;
      expect((out.toolGuard as ToolGuardState).escalation.strikes).toBe(strikes);
    }
  });
});

describe("escalation levels", () => {
  it("a scripted agent that keeps repeating reaches 1, 2, 3 (an interrupt a person answers) and 4", async () => {
    let sawAnswer = "";
    const steps: ScriptStep[] = [
      repeatWrite("Writing the game."),
      repeatWrite(), // strike 1: level 1
      repeatWrite(), // strike 2: level 2
      repeatWrite(), // strike 3: level 3, a person is asked
      (messages) => {
        sawAnswer = String(messages.at(-1)?.content);
        return { content: "Thanks, retrying the write.", toolCalls: [write] }; // strike 4: level 4
      },
      "never reached",
    ];
    const { agent, config, llm } = buildEscalationAgent(steps);
    const first = await agent.invoke({ messages: [{ role: "user", content: "Write the game." }] }, config);

    // Levels 1 and 2 are the tool node's feedback.
    const replies = toolReplies(first.messages);
    expect(replies.map((r) => guardOf(r)?.escalation)).toEqual([undefined, 1, 2]);
    expect(String(replies[1]?.content)).toContain("What will you do differently?");
    expect(String(replies[2]?.content)).toContain(
      "You've now tried this 2 times. The approach isn't working. Options:",
    );
    expect(String(replies[2]?.content)).toMatch(
      /\[A\] Fix what made it fail first[\s\S]*\[B\] Use another tool: update_record, run/,
    );

    // Level 3: the run waits for a person; the interrupt is in getState().tasks.
    const snapshot = await agent.getState(config);
    const ask = snapshot.tasks
      .flatMap((t) => t.interrupts)
      .map((i) => i.value)
      .find(isEscalationInterrupt);
    expect(ask).toMatchObject({
      level: 3,
      tool: "write_file",
      args: write.args,
      attempts: 3,
    } satisfies Partial<EscalationInterrupt>);
    expect(ask?.previousResult?.ok).toBe(false);
    expect(ask?.previousResult?.text).toContain("diagnostics_failed");
    expect(ask?.question).toMatch(/^Stopping automatic execution\./);
    expect(snapshot.next).toEqual(["post_model_hook"]);
    expect(validHistory(snapshot.values.messages, { pendingLast: true })).toEqual([]);

    // The person's answer reaches the model as the result of the blocked call.
    const resumed = await agent.invoke(new Command({ resume: "Use pip to install pygame first." }), config);
    expect(sawAnswer).toContain("The user answered:\nUse pip to install pygame first.");

    // Level 4: the run ends with an AI message that explains why.
    const last = resumed.messages.at(-1) as AIMessage;
    expect(AIMessage.isInstance(last)).toBe(true);
    const said = String(last.content);
    // One message for the user: what was repeated and how often, what it gave, and what they can do.
    expect(said).toMatch(
      /^I stopped this run because I kept repeating one step: I called `write_file` with \{"content":"import pygame\\npygame.init\(\)\\n","path":"game.py"\} again and again, the guards blocked it 4 times in a row/,
    );
    expect(said).toMatch(/\nWhen it last ran, it failed: /);
    expect(said).not.toMatch(/Please fix your mistakes/);
    expect(said).toMatch(/What you can do:\n- Send a new message/);
    // Written for the end user: no option of the developer's (issue 61, 12c).
    expect(said).not.toMatch(/escalation\.|configurable|guards: false/);
    expect(last.response_metadata.guard).toMatchObject({ kind: "escalation", level: 4, strikes: 4 });
    expect(validHistory(resumed.messages)).toEqual([]);
    expect(llm.stepsTaken).toBe(5); // the model was not called again after level 4
    expect((resumed.toolGuard as ToolGuardState).escalation.strikes).toBe(4);
  });

  it("progress in between (a response whose calls all ran, one successfully) starts the count again", async () => {
    const other = { content: "", toolCalls: [{ name: "run", args: { cmd: "ls" } }] };
    const failing = { content: "", toolCalls: [{ name: "update_record", args: { id: "r1", fields: {} } }] };
    const { agent, config } = buildEscalationAgent(
      [
        repeatWrite("W."),
        repeatWrite(),
        repeatWrite(),
        other,
        repeatWrite(),
        repeatWrite(),
        failing,
        repeatWrite(),
        "x",
      ],
      { interrupt: false },
    );
    const out = await agent.invoke({ messages: [{ role: "user", content: "Write." }] }, config);
    // After `ls` succeeded, the next block is strike 1 again; a call that ran but failed is no progress, so the
    // write repeated after it (the same failing write, nothing changed since: redundant) is strike 2.
    expect(toolReplies(out.messages).map((r) => guardOf(r)?.escalation ?? r.status)).toEqual([
      "error",
      1,
      2,
      "success",
      "error",
      1,
      "error",
      2,
    ]);
    expect(
      toolReplies(out.messages)
        .map((r) => guardOf(r)?.rule)
        .at(-1),
    ).toBe("redundant");
  });

  it("the strikes per level are configurable", async () => {
    const steps: ScriptStep[] = [repeatWrite("Writing."), ...Array.from({ length: 7 }, () => repeatWrite()), "x"];
    const { agent, config } = buildEscalationAgent(steps, {
      guard: { escalation: { levelStrikes: [1, 3, 5, 7] } },
      interrupt: false,
    });
    const out = await agent.invoke({ messages: [{ role: "user", content: "Write." }] }, config);
    // Strikes 1..4 are feedback (levels 1, 1, 2, 2); strike 5 reaches level 3, which without interrupts ends the
    // run as level 4 does.
    expect(toolReplies(out.messages).map((r) => guardOf(r)?.escalation)).toEqual([undefined, 1, 1, 2, 2, 4]);
    expect(String(out.messages.at(-1)?.content)).toMatch(/^I stopped this run because I kept repeating one step/);
  });

  it("a person may reset the strikes or end the run", async () => {
    const steps: ScriptStep[] = [
      repeatWrite("Writing."),
      repeatWrite(),
      repeatWrite(),
      repeatWrite(),
      repeatWrite(),
      "x",
    ];
    const reset = buildEscalationAgent(steps, { guard: { escalation: { levelStrikes: [1, 2, 3, 4] } } });
    await reset.agent.invoke({ messages: [{ role: "user", content: "Write." }] }, reset.config);
    const afterReset = await reset.agent.invoke(
      new Command({ resume: { answer: "Try once more, it should work now.", action: "reset" } }),
      reset.config,
    );
    // Strikes start again: the next repeat is level 1 feedback, not the end.
    expect((afterReset.toolGuard as ToolGuardState).escalation.strikes).toBe(1);
    expect(toolReplies(afterReset.messages).map((r) => guardOf(r)?.escalation)).toEqual([undefined, 1, 2, 3, 1]);

    const end = buildEscalationAgent(steps);
    await end.agent.invoke({ messages: [{ role: "user", content: "Write." }] }, end.config);
    const ended = await end.agent.invoke(new Command({ resume: { answer: "Stop here.", action: "end" } }), end.config);
    const firstError = String(toolReplies(ended.messages)[0]?.content)
      .replace(/\s*Please fix your mistakes\.?\s*$/, "")
      .replace(/^Error:\s*/, "");
    expect(String(ended.messages.at(-1)?.content)).toContain(
      'I stopped this run because you asked me to: "Stop here."\nBefore that, I had called `write_file` with ' +
        '{"content":"import pygame\\npygame.init()\\n","path":"game.py"} again and again: the guards blocked it 3 times ' +
        `in a row.\nWhen it last ran, it failed: ${firstError.slice(0, 500).trimEnd()}\n\nWhat you can do:`,
    );
    expect(toolReplies(ended.messages).at(-1)?.content).toBe("Not run: the user ended the run.");
    expect(validHistory(ended.messages)).toEqual([]);
  });

  it("without a checkpointer, level 3 falls back to level 4", async () => {
    const steps: ScriptStep[] = [repeatWrite("Writing."), repeatWrite(), repeatWrite(), repeatWrite(), "x"];
    const { agent } = buildEscalationAgent(steps, { checkpointer: false });
    const out = await agent.invoke({ messages: [{ role: "user", content: "Write." }] }, { recursionLimit: 100 });
    expect(String(out.messages.at(-1)?.content)).toMatch(/^I stopped this run because I kept repeating one step/);
    expect(toolReplies(out.messages).map((r) => guardOf(r)?.escalation)).toEqual([undefined, 1, 2, 4]);
    expect(validHistory(out.messages)).toEqual([]);
  });

  it("a new human message after a run ended at level 4 forgives the strikes", async () => {
    const steps: ScriptStep[] = [
      repeatWrite("Writing."),
      repeatWrite(),
      repeatWrite(),
      repeatWrite(),
      { content: "I'll check the installed packages.", toolCalls: [{ name: "run", args: { cmd: "pip list" } }] },
      "Done.",
    ];
    const { agent, config } = buildEscalationAgent(steps, { interrupt: false });
    const first = await agent.invoke({ messages: [{ role: "user", content: "Write." }] }, config);
    expect((first.toolGuard as ToolGuardState).escalation.strikes).toBe(3);
    const second = await agent.invoke({ messages: [{ role: "user", content: "Check the packages." }] }, config);
    expect((second.toolGuard as ToolGuardState).escalation.strikes).toBe(0);
    expect(String(second.messages.at(-1)?.content)).toBe("Done.");
  });

  it("parallel repeats in one response are one strike (v1 and v2)", async () => {
    for (const version of ["v1", "v2"] as const) {
      const both: ScriptStep = { content: "again", toolCalls: [write, write] };
      const { agent, config } = buildEscalationAgent([repeatWrite("Writing."), both, "x"], { version });
      const out = await agent.invoke({ messages: [{ role: "user", content: "Write." }] }, config);
      expect((out.toolGuard as ToolGuardState).escalation.strikes, version).toBe(1);
      expect(toolReplies(out.messages).map((r) => guardOf(r)?.escalation)).toEqual([undefined, 1, 1]);
      expect(validHistory(out.messages)).toEqual([]);
    }
  });

  it("strikes survive a restart with SqliteSaver within a run: a new process resumes the question and escalates on", async () => {
    const db = join(dir, "escalation-resume.sqlite");
    const steps = [repeatWrite("Writing."), repeatWrite(), repeatWrite(), repeatWrite(), "never reached"];
    const first = buildEscalationAgent(steps, { checkpointer: SqliteSaver.fromConnString(db) });
    const out = await first.agent.invoke({ messages: [{ role: "user", content: "Write." }] }, first.config);
    // Strike 3: the run waits for a person (the third strike is written when the answer comes).
    const paused = out.toolGuard as ToolGuardState;
    expect(paused.escalation.strikes).toBe(2);
    const asked = (await first.agent.getState(first.config)).tasks
      .flatMap((t) => t.interrupts.map((i) => i.value))
      .find(isEscalationInterrupt);
    expect(asked).toMatchObject({ level: 3, attempts: 3, tool: "write_file" });
    const person = (out.messages as BaseMessage[]).find((m) => m.getType() === "human")?.id;
    expect(paused.run).toBe(person);

    // A new Node process answers the question: the same run goes on, so the model's next repeat is strike 4.
    const report = await escalationTurn(db, first.threadId, "resume");
    expect(report.run).toBe(paused.run); // a resume is no new run
    expect(report.person).toBe(person);
    expect(report.replies).toEqual([3, 4]);
    expect(report.strikes).toBe(4);
    expect(report.ended).toMatchObject({ kind: "escalation", level: 4, strikes: 4 });
    expect(report.interrupt).toBeNull();
  });

  it("with escalation.carryStrikes, strikes survive a restart and a new message: a new process escalates on", async () => {
    const steps = [repeatWrite("Writing."), repeatWrite(), repeatWrite(), "Pausing."];
    const carry = { escalation: { carryStrikes: true } };
    const db = join(dir, "escalation.sqlite");
    const first = buildEscalationAgent(steps, { checkpointer: SqliteSaver.fromConnString(db), guard: carry });
    const out = await first.agent.invoke({ messages: [{ role: "user", content: "Write." }] }, first.config);
    expect((out.toolGuard as ToolGuardState).escalation.strikes).toBe(2);

    // A new Node process, the same thread, a new message (a new run): one more repeat is the third strike, so a
    // person is asked.
    const report = await escalationTurn(db, first.threadId, "message", carry);
    expect(report.strikes).toBe(2); // the interrupt comes before the third strike is written
    expect(report.interrupt).toMatchObject({ level: 3, attempts: 3, tool: "write_file" });
    expect(report.person).not.toBe((out.toolGuard as ToolGuardState).run);
    // Another process answers: the held-back call gets the answer at level 3, and the new message's run is
    // recorded with the third strike (at the question, the state still holds the previous run's marker).
    const answered = await escalationTurn(db, first.threadId, "resume", carry);
    expect(answered.replies[0]).toBe(3);
    expect(answered.run).toBe(report.person);
    expect(answered.person).toBe(report.person);

    // The control, by default: the new message's run starts with no strikes, so the repeat runs (and fails).
    const plain = buildEscalationAgent(steps, { checkpointer: SqliteSaver.fromConnString(db) });
    const plainOut = await plain.agent.invoke({ messages: [{ role: "user", content: "Write." }] }, plain.config);
    expect((plainOut.toolGuard as ToolGuardState).escalation.strikes).toBe(2);
    const fresh = await escalationTurn(db, plain.threadId, "message");
    expect(fresh).toMatchObject({ strikes: 0, interrupt: null, replies: ["error"], ended: null });
    expect(fresh.run).toBe(fresh.person);
  });
});

describe("near-duplicates and repeated errors", () => {
  const base = "abcdefghij".repeat(10);
  const replace = (n: number) => `${"0".repeat(n)}${base.slice(n)}`;
  const writeOf = (content: string) => ({ name: "write_file", args: { path: "game.py", content } });

  it("after a block, a write with 95% similar content is the same call; 50% similar is a new one", async () => {
    for (const [n, expected] of [
      [5, "near_duplicate"],
      [50, "success"],
    ] as const) {
      const { agent, config } = buildEscalationAgent([
        { content: "Writing.", toolCalls: [writeOf(base)] },
        { content: "", toolCalls: [writeOf(base)] }, // blocked: strike 1
        { content: "", toolCalls: [writeOf(replace(n))] },
        "x",
      ]);
      const out = await agent.invoke({ messages: [{ role: "user", content: "Write." }] }, config);
      const replies = toolReplies(out.messages);
      expect(
        replies.map((r) => guardOf(r)?.rule ?? r.status),
        `${100 - n}% similar`,
      ).toEqual(["success", "consecutive", expected]);
    }
  });

  it("calls that differ only in argument values but keep failing with the same error count toward the strikes", async () => {
    const update = (n: number, content = "") => ({
      content,
      toolCalls: [{ name: "update_record", args: { id: "r1", fields: { status: `s${n}` } } }],
    });
    const { agent, config } = buildEscalationAgent(
      [
        update(1),
        update(2),
        update(3),
        update(4), // three failures with one error: blocked, strike 1
        update(5, "The issue is the status field; I'll check the schema first, then update."), // acknowledged: runs
        update(6), // four failures in a row: blocked again, strike 2
        "x",
      ],
      { guard: { escalation: { sameErrorThreshold: 3 } } },
    );
    const out = await agent.invoke({ messages: [{ role: "user", content: "Update r1." }] }, config);
    const replies = toolReplies(out.messages);
    expect(replies.map((r) => guardOf(r)?.rule ?? r.status)).toEqual([
      "error",
      "error",
      "error",
      "repeat_failure",
      "error",
      "repeat_failure",
    ]);
    expect(String(replies[3]?.content)).toContain("failed 3 times in a row with the same error");
    expect(String(replies[3]?.content)).toContain("field 'status' is read-only");
    expect(guardOf(replies[5] as ToolMessage)?.escalation).toBe(2);
  });
});

describe("escalationNode in a custom graph", () => {
  it("routes to the tools, to the model with a person's answer, and to the exit", async () => {
    const tools = new GuardedToolNode<typeof GuardMessagesState.Update>(escalationTools(), seedPace());
    let answerSeen = "";
    const llm = new ScriptedChatModel([
      repeatWrite("Writing."),
      repeatWrite(),
      repeatWrite(),
      repeatWrite(),
      (messages) => {
        answerSeen = String(messages.at(-1)?.content);
        return "Understood, stopping.";
      },
    ]);
    const graph = new StateGraph(GuardMessagesState)
      .addNode("agent", async (state) => ({ messages: [await llm.invoke(state.messages)] }))
      .addNode("escalation", escalationNode(tools), { ends: ["tools", "agent", END] })
      .addNode("tools", tools)
      .addEdge(START, "agent")
      .addEdge("agent", "escalation")
      .addEdge("tools", "agent")
      .compile({ checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "custom" }, recursionLimit: 100 };
    const paused = await graph.invoke({ messages: [{ role: "user", content: "Write." }] }, config);
    expect(paused.messages.length).toBeGreaterThan(0);
    const waiting = (await graph.getState(config)).tasks.flatMap((t) => t.interrupts.map((i) => i.value));
    expect(waiting.map(isEscalationInterrupt)).toEqual([true]);
    const done = await graph.invoke(new Command({ resume: "Ask me before writing." }), config);
    expect(answerSeen).toContain("Ask me before writing.");
    expect(String(done.messages.at(-1)?.content)).toBe("Understood, stopping.");
    expect(validHistory(done.messages)).toEqual([]);
  });
});

describe("the tool node alone", () => {
  it("gives level 1 and 2 feedback without the hook, then fails loudly at level 3 instead of looping", async () => {
    const tools = new GuardedToolNode(escalationTools(), seedPace());
    const { agent, config } = buildEscalationAgent(
      [repeatWrite("W."), repeatWrite(), repeatWrite(), repeatWrite(), "x"],
      {
        hook: false,
        tools,
      },
    );
    const error = await agent.invoke({ messages: [{ role: "user", content: "Write." }] }, config).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(GuardEscalationError);
    expect(error).toMatchObject({ tool: "write_file", strikes: 3, level: 3 });
    expect((error as Error).message).toMatch(/postModelHook: escalationHook\(toolNode\)/);
    expect((error as Error).message).toMatch(/escalationNode\(toolNode\)/);
    // What the checkpointer kept before the error: the levels 1 and 2 feedback, and plain-JSON guard state.
    const saved = await agent.getState(config);
    const messages = saved.values.messages as BaseMessage[];
    expect(toolReplies(messages).map((r) => guardOf(r)?.escalation)).toEqual([undefined, 1, 2]);
    const state = saved.values.toolGuard as ToolGuardState;
    expect(JSON.parse(JSON.stringify(state))).toEqual(state);
    expect(state.escalation.blocked.map((b) => b.level)).toEqual([1, 2]);
  });

  it("never reaches GraphRecursionError: without a checkpointer the error comes at the 4th call", async () => {
    const tools = new GuardedToolNode(escalationTools(), seedPace());
    const { agent, llm } = buildEscalationAgent(
      Array.from({ length: 50 }, () => repeatWrite()),
      {
        hook: false,
        tools,
        checkpointer: false,
      },
    );
    await expect(
      agent.invoke({ messages: [{ role: "user", content: "Write." }] }, { recursionLimit: 100 }),
    ).rejects.toThrow(GuardEscalationError);
    expect(llm.stepsTaken).toBe(4);
  });

  it("escalation: { enabled: false } keeps the seed-000 behaviour (no strikes)", async () => {
    const { agent, config } = buildEscalationAgent([repeatWrite("W."), repeatWrite(), repeatWrite(), "x"], {
      guard: { escalation: { enabled: false } },
    });
    const out = await agent.invoke({ messages: [{ role: "user", content: "Write." }] }, config);
    expect(toolReplies(out.messages).map((r) => guardOf(r)?.escalation)).toEqual([undefined, 0, 0]);
    expect((out.toolGuard as ToolGuardState).escalation.strikes).toBe(0);
  });
});

describe("guardHooks: the loop detector and the escalation as one postModelHook", () => {
  const textOnly = (m: AIMessage) => (typeof m.content === "string" ? m.content : "");

  it("with text-only loop outputs, repeated calls go through the escalation; a limit still stops the run first", async () => {
    const steps: ScriptStep[] = [repeatWrite("Writing."), repeatWrite("a"), repeatWrite("b"), repeatWrite("c"), "x"];
    const tools = new GuardedToolNode(escalationTools(), seedPace());
    const build = (maxIterations: number) => {
      const llm = new ScriptedChatModel(steps);
      return createReactAgent({
        llm,
        tools,
        stateSchema: GuardMessagesState,
        postModelHook: guardHooks(
          loopDetectHook({ maxIterations, turns: { outputOf: textOnly } }),
          escalationHook(tools),
        ),
        checkpointer: new MemorySaver(),
      });
    };
    const config = { configurable: { thread_id: "hooks" }, recursionLimit: 100 };
    const agent = build(100);
    const paused = await agent.invoke({ messages: [{ role: "user", content: "Write." }] }, config);
    expect(toolReplies(paused.messages).map((r) => guardOf(r)?.escalation)).toEqual([undefined, 1, 2]);
    const waiting = (await agent.getState(config)).tasks.flatMap((t) => t.interrupts.map((i) => i.value));
    expect(waiting.map(isEscalationInterrupt)).toEqual([true]);
    expect((paused.loopGuard as { iterations?: number }).iterations).toBeGreaterThan(0);

    // maxIterations: N runs N full turns and stops the (N+1)th (issue 43, class 9: openai-agents' max_turns,
    // pydantic-ai's request_limit). The 2nd turn's call is blocked (a free turn), so the limit is 1: the 2nd turn.
    const limited = build(1);
    const out = await limited.invoke({ messages: [{ role: "user", content: "Write." }] }, config);
    expect(String(out.messages.at(-1)?.content)).toMatch(/^Stopped: the iteration limit was reached/);
    expect(validHistory(out.messages)).toEqual([]);
  });
});
