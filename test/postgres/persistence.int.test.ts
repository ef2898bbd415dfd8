/**
 * The persistence scenarios of the SQLite tests, on PostgreSQL (PostgresSaver): the tool node, the hooks, the
 * middleware, the file-tool caches and the escalation interrupt, split over Node processes that share a database,
 * decide exactly as the same script in one process (a MemorySaver). The server is PG_URL's, or a throwaway cluster
 * (test/support/postgres.ts); each test gets a fresh database.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { type BaseCheckpointSaver, Command, END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import type { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { buildRetrievalGraph, loopingModel } from "../../examples/repeat-query.js";
import { createWorkspaceTools, sampleProject } from "../../examples/workspace.js";
import { createFileTools } from "../../src/fs/tools.js";
import {
  type GuardArtifact,
  GuardedToolNode,
  type GuardedToolNodeOptions,
  GuardMessagesState,
  isEscalationInterrupt,
  loopDetectHook,
  type ToolGuardState,
} from "../../src/index.js";
import type { GuardMiddlewareOptions } from "../../src/middleware/index.js";
import { ScriptedChatModel, type ScriptedToolCall, type ScriptStep } from "../../src/testing/index.js";
import type { AgentTurnOutput, Session } from "../fixtures/agent-turn.js";
import type { EscalationTurnOutput } from "../fixtures/escalation-turn.js";
import { buildEscalationAgent } from "../support/escalation.js";
import { call, runTurns } from "../support/helpers.js";
import { freshDatabase, openPostgresSaver, startPostgres } from "../support/postgres.js";
import type { FileStep, FileToolsTurnOutput } from "./file-tools-turn.js";

const server = await startPostgres();
const skip = "skip" in server ? server.skip : undefined;
if (skip) console.info(`PostgreSQL persistence tests skipped: ${skip}`);
const savers: PostgresSaver[] = [];
const base = realpathSync(mkdtempSync(join(tmpdir(), "lgg-pg-persist-")));
afterAll(async () => {
  await Promise.all(savers.map((s) => s.end()));
  if (!("skip" in server)) await server.stop();
  rmSync(base, { recursive: true, force: true });
});

/** A fresh database and a PostgresSaver on it (set up, closed after the file). */
async function database(): Promise<{ url: string; saver: PostgresSaver }> {
  if ("skip" in server) throw new Error(server.skip);
  const url = await freshDatabase(server);
  const saver = await openPostgresSaver(url);
  savers.push(saver);
  return { url, saver };
}

const exec = promisify(execFile);
const cwd = join(import.meta.dirname, "..", "..");
/** Runs a fixture script in a new Node process and parses the JSON it prints. */
async function fixture<T>(script: string, args: string[]): Promise<T> {
  const { stdout } = await exec(process.execPath, ["--import", "tsx", script, ...args], { cwd, timeout: 60_000 });
  return JSON.parse(stdout.trim()) as T;
}

/**
 * The state as JSON has it (what a process prints), with what differs between any two runs (ids, clock times, the
 * scripted model's call ids) replaced by its kind.
 */
function stable(value: unknown): unknown {
  const varying = [
    "toolCallId",
    "callId",
    "lastTurn",
    "turn",
    "endedBy",
    "at",
    "run",
    "person",
    "session",
    "startedAt",
  ];
  const normalize = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(normalize);
    if (typeof v === "string" && /^call_[0-9a-f]{8}_\d+$/.test(v)) return "<call id>";
    if (typeof v !== "object" || v === null) return v;
    return Object.fromEntries(
      Object.entries(v).map(([k, x]) => [k, varying.includes(k) ? (x == null ? x : `<${typeof x}>`) : normalize(x)]),
    );
  };
  return normalize(JSON.parse(JSON.stringify(value) ?? "null"));
}

const personIds = (messages: BaseMessage[]) => messages.filter((m) => m.getType() === "human").map((m) => m.id);

describe.skipIf(skip !== undefined)(`PostgresSaver across processes${skip ? ` (skipped: ${skip})` : ""}`, () => {
  it("the repeat-query router's asked set survives a restart: a new process reads it from Postgres and routes on_repeat", async () => {
    const { url, saver } = await database();
    const graph = buildRetrievalGraph(loopingModel(), { checkpointer: saver });
    await graph.invoke({ messages: [{ role: "user", content: "Where?" }] }, { configurable: { thread_id: "rq" } });
    const result = await fixture<{
      askedBefore: string[];
      retrievalsBefore: number;
      retrievalsAfter: number;
      last: string;
    }>("test/fixtures/retrieval-turn.ts", [url, "rq"]);
    expect(result.askedBefore).toEqual(["class paymentservice definition"]);
    expect(result.retrievalsAfter).toBe(result.retrievalsBefore); // no second retrieval
    expect(result.last).toMatch(/^Not sure\./);
  });

  describe("the tool node (GuardedToolNode)", () => {
    const firstSession: ScriptedToolCall[][] = [[call("read_file", { path: "config.py" })], [call("list_files", {})]];
    const secondSession: ScriptedToolCall[][] = [
      [call("read_file", { path: "config.py" })],
      [call("read_file", { path: "app.py" })],
      [call("read_file", { path: "app.py" })],
    ];
    const ONE_RUN: GuardedToolNodeOptions = { memory: { runBoundary: "none" } };
    const turnProcess = (url: string, turns: ScriptedToolCall[][], guard?: GuardedToolNodeOptions) =>
      fixture<string[]>("test/fixtures/sqlite-turn.ts", [
        url,
        "t",
        JSON.stringify(turns),
        ...(guard ? [JSON.stringify(guard)] : []),
      ]);

    it("a new process blocks what one process would have blocked (one run), and the state reads back", async () => {
      const { url, saver } = await database();
      const first = await runTurns(firstSession, { checkpointer: saver, threadId: "t", guard: ONE_RUN });
      expect(first.fates.map((f) => f.fate)).toEqual(["ran", "ran"]);

      const memory = new MemorySaver();
      await runTurns(firstSession, { checkpointer: memory, threadId: "t", guard: ONE_RUN });
      const one = await runTurns(secondSession, { checkpointer: memory, threadId: "t", guard: ONE_RUN });
      const uninterrupted = one.fates.slice(2).map((f) => f.fate);
      expect(uninterrupted).toEqual(["redundant", "ran", "consecutive"]);

      expect(await turnProcess(url, secondSession, ONE_RUN)).toEqual(uninterrupted);

      // Read back through a third connection: the counters of both processes.
      const third = await openPostgresSaver(url);
      savers.push(third);
      const saved = await third.getTuple({ configurable: { thread_id: "t" } });
      const toolGuard = saved?.checkpoint.channel_values.toolGuard as ToolGuardState;
      expect(toolGuard.stats).toEqual(one.result.toolGuard.stats);
      expect(toolGuard.stats.blocked).toMatchObject({ consecutive: 1, redundant: 1, threshold: 0 });
      expect(stable(toolGuard)).toEqual(stable(one.result.toolGuard));
    });

    it("a new process starts the new message's run from the stored state, as one process does", async () => {
      const { url, saver } = await database();
      const first = await runTurns(firstSession, { checkpointer: saver, threadId: "t" });
      expect(first.fates.map((f) => f.fate)).toEqual(["ran", "ran"]);

      const memory = new MemorySaver();
      await runTurns(firstSession, { checkpointer: memory, threadId: "t" });
      const one = await runTurns(secondSession, { checkpointer: memory, threadId: "t" });
      const uninterrupted = one.fates.slice(2).map((f) => f.fate);
      expect(uninterrupted).toEqual(["ran", "ran", "consecutive"]);

      expect(await turnProcess(url, secondSession)).toEqual(uninterrupted);

      const saved = await saver.getTuple({ configurable: { thread_id: "t" } });
      const toolGuard = saved?.checkpoint.channel_values.toolGuard as ToolGuardState;
      const persons = personIds(saved?.checkpoint.channel_values.messages as BaseMessage[]);
      expect(persons).toHaveLength(2);
      expect(toolGuard.run).toBe(persons[1]);
      expect(toolGuard.run).not.toBe(first.result.toolGuard.run);
      expect(toolGuard.stats).toEqual(one.result.toolGuard.stats);
      expect(toolGuard.stats.allowed).toBe(4);
      expect(stable(toolGuard)).toEqual(stable(one.result.toolGuard));
    });
  });

  describe("the middleware (guardMiddleware in createAgent)", () => {
    const agentProcess = (where: string, thread: string, sessions: Session[], options?: GuardMiddlewareOptions) =>
      fixture<AgentTurnOutput>("test/fixtures/agent-turn.ts", [
        where,
        thread,
        JSON.stringify(sessions),
        ...(options ? [JSON.stringify(options)] : []),
      ]);
    const search = (q: string): ScriptedToolCall[] => [{ name: "search_docs", args: { q } }];
    const write = (text: string): ScriptedToolCall[] => [{ name: "write_note", args: { text } }];
    const first: Session = { turns: [search("a"), search("b")] };
    const second: Session = { turns: [search("a"), search("c"), search("c")] };

    it("a new process blocks the next identical call exactly as one process would (one run)", async () => {
      const { url } = await database();
      const oneRun: GuardMiddlewareOptions = { memory: { runBoundary: "none" } };
      const [one, a] = await Promise.all([
        agentProcess("memory", "t", [first, second], oneRun),
        agentProcess(url, "t", [first], oneRun),
      ]);
      expect(one.sessions.map((s) => s.fates)).toEqual([
        ["ran", "ran"],
        ["redundant", "ran", "consecutive"],
      ]);
      expect(a.sessions).toEqual([one.sessions[0]]);
      const b = await agentProcess(url, "t", [second], oneRun);
      expect(b.sessions).toEqual([one.sessions[1]]);
      expect(b.toolGuard.stats).toEqual(one.toolGuard.stats);
      expect(stable(b.toolGuard)).toEqual(stable(one.toolGuard));
      // The control: another thread of the same database has nothing to remember.
      const fresh = await agentProcess(url, "other", [second], oneRun);
      expect(fresh.sessions.map((s) => s.fates)).toEqual([["ran", "ran", "consecutive"]]);
    });

    it("a new process starts the new message's run from the stored state exactly as one process would", async () => {
      const { url } = await database();
      const [one, a] = await Promise.all([
        agentProcess("memory", "t", [first, second]),
        agentProcess(url, "t", [first]),
      ]);
      expect(one.sessions.map((s) => s.fates)).toEqual([
        ["ran", "ran"],
        ["ran", "ran", "consecutive"],
      ]);
      expect(a.sessions).toEqual([one.sessions[0]]);
      expect(a.toolGuard.run).toBe(a.person);
      const b = await agentProcess(url, "t", [second]);
      expect(b.sessions).toEqual([one.sessions[1]]);
      expect(b.toolGuard.stats).toEqual(one.toolGuard.stats);
      expect(b.person).not.toBe(a.person);
      expect(b.toolGuard.run).toBe(b.person);
      expect(stable(b.toolGuard)).toEqual(stable(one.toolGuard));
    });

    it("the escalation question asked in one process is answered in the next, as in one process", async () => {
      const { url } = await database();
      // The 5th identical call is the first that may ask (issue 43, class 8): the 4th is held at level 2.
      const repeat: Session = { turns: [write("x"), write("x"), write("x"), write("x"), write("x")] };
      const answer: Session = { turns: [], resume: "Stop writing that note." };
      const [one, paused, a] = await Promise.all([
        agentProcess("memory", "t", [repeat, answer]),
        agentProcess("memory", "t", [repeat]),
        agentProcess(url, "t", [repeat]),
      ]);
      expect(one.sessions).toEqual([
        { fates: ["ran", "consecutive", "consecutive", "consecutive"], levels: [1, 2, 2], asked: 4 },
        { fates: ["consecutive"], levels: [3], asked: null },
      ]);
      expect(a.sessions).toEqual([one.sessions[0]]);
      expect(stable(a.toolGuard)).toEqual(stable(paused.toolGuard));
      const b = await agentProcess(url, "t", [answer]);
      expect(b.sessions).toEqual([one.sessions[1]]);
      expect(b.toolGuard.escalation.strikes).toBe(4);
      expect(stable(b.toolGuard)).toEqual(stable(one.toolGuard));
      // The answer resumes the paused run: no new person's message, no new run.
      expect(b.person).toBe(a.person);
      expect(b.toolGuard.run).toBe(a.toolGuard.run);
    });
  });

  describe("the hooks", () => {
    const write = { name: "write_file", args: { path: "game.py", content: "import pygame\npygame.init()\n" } };
    const repeatWrite = (content = "Let me try writing the file again."): ScriptStep => ({
      content,
      toolCalls: [write],
    });
    const escalationProcess = (
      url: string,
      thread: string,
      mode: "message" | "resume",
      guard?: GuardedToolNodeOptions,
    ) =>
      fixture<EscalationTurnOutput>("test/fixtures/escalation-turn.ts", [
        url,
        thread,
        mode,
        ...(guard ? [JSON.stringify(guard)] : []),
      ]);

    /** What test/fixtures/escalation-turn.ts does, here, on any checkpointer: the single-process run. */
    async function escalationHere(
      checkpointer: BaseCheckpointSaver,
      threadId: string,
      mode: "message" | "resume",
      guard?: GuardedToolNodeOptions,
    ): Promise<EscalationTurnOutput> {
      const { agent, config } = buildEscalationAgent([{ content: "Let me try again.", toolCalls: [write] }, "x"], {
        checkpointer,
        threadId,
        ...(guard ? { guard } : {}),
      });
      const before = ((await agent.getState(config)).values as { messages?: BaseMessage[] }).messages?.length ?? 0;
      const input =
        mode === "resume"
          ? new Command({ resume: "Try it once more." })
          : { messages: [{ role: "user", content: "Go on." }] };
      const out = await agent.invoke(input, config);
      const toolGuard = out.toolGuard as ToolGuardState;
      const messages = out.messages as BaseMessage[];
      const snapshot = await agent.getState(config);
      const metadata = messages.at(-1)?.response_metadata as { guard?: EscalationTurnOutput["ended"] } | undefined;
      return {
        strikes: toolGuard.escalation.strikes,
        run: toolGuard.run ?? null,
        person: messages.filter((m) => m.getType() === "human").at(-1)?.id ?? null,
        replies: messages
          .slice(before)
          .filter((m): m is ToolMessage => ToolMessage.isInstance(m))
          .map(
            (m) => (m.artifact as { guard?: GuardArtifact } | undefined)?.guard?.escalation ?? m.status ?? "success",
          ),
        ended: metadata?.guard ?? null,
        interrupt: snapshot.tasks.flatMap((t) => t.interrupts.map((i) => i.value)).find(isEscalationInterrupt) ?? null,
      };
    }

    it("escalationHook: the interrupt asked in one process is answered in the next, and escalates on as in one", async () => {
      const { url, saver } = await database();
      const steps = [repeatWrite("Writing."), repeatWrite(), repeatWrite(), repeatWrite(), "never reached"];
      const first = buildEscalationAgent(steps, { checkpointer: saver, threadId: "t" });
      const out = await first.agent.invoke({ messages: [{ role: "user", content: "Write." }] }, first.config);
      const paused = out.toolGuard as ToolGuardState;
      expect(paused.escalation.strikes).toBe(2);
      const asked = (await first.agent.getState(first.config)).tasks
        .flatMap((t) => t.interrupts.map((i) => i.value))
        .find(isEscalationInterrupt);
      expect(asked).toMatchObject({ level: 3, attempts: 3, tool: "write_file" });

      // The same script in one process.
      const memory = new MemorySaver();
      const here = buildEscalationAgent(steps, { checkpointer: memory, threadId: "t" });
      const hereOut = await here.agent.invoke({ messages: [{ role: "user", content: "Write." }] }, here.config);
      expect(stable(hereOut.toolGuard)).toEqual(stable(paused));
      const one = await escalationHere(memory, "t", "resume");

      // A new Node process answers the question: the same run goes on, the next repeat is strike 4.
      const report = await escalationProcess(url, "t", "resume");
      expect({ ...report, run: null, person: null }).toEqual({ ...one, run: null, person: null });
      expect(report.replies).toEqual([3, 4]);
      expect(report.strikes).toBe(4);
      expect(report.ended).toMatchObject({ kind: "escalation", level: 4, strikes: 4 });
      expect(report.interrupt).toBeNull();
      expect(report.run).toBe(paused.run); // a resume is no new run
      expect(report.person).toBe(personIds(out.messages)[0]);
    });

    it("escalationHook with carryStrikes: strikes survive a new process and a new message; a third answers", async () => {
      const { url, saver } = await database();
      const steps = [repeatWrite("Writing."), repeatWrite(), repeatWrite(), "Pausing."];
      const carry: GuardedToolNodeOptions = { escalation: { carryStrikes: true } };
      const first = buildEscalationAgent(steps, { checkpointer: saver, guard: carry, threadId: "t" });
      const out = await first.agent.invoke({ messages: [{ role: "user", content: "Write." }] }, first.config);
      expect((out.toolGuard as ToolGuardState).escalation.strikes).toBe(2);

      const memory = new MemorySaver();
      const here = buildEscalationAgent(steps, { checkpointer: memory, guard: carry, threadId: "t" });
      await here.agent.invoke({ messages: [{ role: "user", content: "Write." }] }, here.config);
      const oneAsk = await escalationHere(memory, "t", "message", carry);
      const oneAnswer = await escalationHere(memory, "t", "resume", carry);

      const ask = await escalationProcess(url, "t", "message", carry);
      expect(stable(ask)).toEqual(stable(oneAsk));
      expect(ask.strikes).toBe(2);
      expect(ask.interrupt).toMatchObject({ level: 3, attempts: 3, tool: "write_file" });
      const answer = await escalationProcess(url, "t", "resume", carry);
      expect(stable(answer)).toEqual(stable(oneAnswer));
      expect(answer.replies[0]).toBe(3);
      expect(answer.run).toBe(ask.person);

      // The control, by default: the new message's run starts with no strikes, in Postgres as in one process.
      const plain = buildEscalationAgent(steps, { checkpointer: saver, threadId: "plain" });
      await plain.agent.invoke({ messages: [{ role: "user", content: "Write." }] }, plain.config);
      const fresh = await escalationProcess(url, "plain", "message");
      expect(fresh).toMatchObject({ strikes: 0, interrupt: null, replies: ["error"], ended: null });
      expect(fresh.run).toBe(fresh.person);
    });

    it("loopDetectHook: the loop spans two processes, as it spans two invocations in one", async () => {
      const { url } = await database();
      const script = "test/fixtures/loop-turn.ts";
      const started = await fixture<{ loopGuard: unknown; last: string }>(script, ["start", url, "t"]);
      const resumed = await fixture<{ loopGuard: { iterations: number }; last: string }>(script, ["resume", url, "t"]);

      // The fixture's agent, both halves in this process on one MemorySaver.
      const memory = new MemorySaver();
      const say = {
        content: "Let me look at the project files once more.",
        toolCalls: [{ name: "list_files", args: {} }],
      };
      const half = (interrupt: boolean) =>
        createReactAgent({
          llm: new ScriptedChatModel([say, say, say]),
          tools: new GuardedToolNode(createWorkspaceTools(sampleProject())),
          stateSchema: GuardMessagesState,
          postModelHook: loopDetectHook({ feedback: { logger: { warn: () => {} } } }),
          checkpointer: memory,
          interruptBefore: interrupt ? ["tools"] : [],
        });
      const config = { configurable: { thread_id: "t" } };
      await half(true).invoke({ messages: [{ role: "user", content: "Explore." }] }, config);
      const a = await half(true).invoke(null, config);
      const b = await half(false).invoke(null, config);
      const here = (out: { loopGuard: unknown; messages: BaseMessage[] }) => ({
        loopGuard: out.loopGuard,
        last: String(out.messages.at(-1)?.content),
      });

      expect(stable(started)).toEqual(stable(here(a)));
      expect(stable(resumed)).toEqual(stable(here(b)));
      expect(resumed.last).toBe(
        "Stopped: loop detected, the output is 100.0% similar to a previous output (threshold 90%).",
      );
      expect(resumed.loopGuard.iterations).toBe(2);
    });
  });

  describe("the file-tool caches", () => {
    const LONG = Array.from({ length: 40 }, (_, i) => `def f${i}():\n    return ${i}\n`).join("\n");
    /** The project folder (made again, the same at the same path), its files and folders modified an hour ago. */
    function project(): string {
      const root = join(base, "project");
      rmSync(root, { recursive: true, force: true });
      const files = { "config.json": '{ "debug": true }\n', "src/main.py": "print('hello')\n", "src/long.py": LONG };
      for (const [rel, content] of Object.entries(files)) {
        mkdirSync(join(root, rel, ".."), { recursive: true });
        writeFileSync(join(root, rel), content);
      }
      const hourAgo = new Date(Date.now() - 3_600_000);
      for (const rel of ["src/long.py", "src/main.py", "src", "config.json", ""])
        utimesSync(join(root, rel), hourAgo, hourAgo);
      return root;
    }
    const filesProcess = (where: string, root: string, sessions: FileStep[][]) =>
      fixture<FileToolsTurnOutput>("test/postgres/file-tools-turn.ts", [where, "t", root, JSON.stringify(sessions)]);

    it("the cache is restored in a new process, serves what one process serves, and is stale after an outside edit", async () => {
      const { url } = await database();
      const a: FileStep[] = [
        { id: "a1", name: "read_file", args: { path: "config.json" } },
        { id: "a2", name: "read_file", args: { path: "src/long.py" } },
        { id: "a3", name: "list_files", args: { recursive: true } },
      ];
      const b: FileStep[] = [
        { id: "b1", name: "read_file", args: { path: "src/long.py" } },
        { id: "b2", name: "list_files", args: { recursive: true } },
        { edit: { path: "config.json", content: '{ "debug": 1234 }\n' } }, // the same size, outside the tools
        { id: "b3", name: "read_file", args: { path: "config.json" } },
        { id: "b4", name: "read_file", args: { path: "config.json" } },
      ];
      const one = await filesProcess("memory", project(), [a, b]);
      const root = project();
      const first = await filesProcess(url, root, [a]);
      const second = await filesProcess(url, root, [b]);

      expect(first.sessions).toEqual([one.sessions[0]]);
      expect(second.sessions).toEqual([one.sessions[1]]);
      // The new process found the first one's cache in the checkpoint.
      expect(second.sessions[0]?.restored.sort()).toEqual(Object.keys(first.fileCache.files).sort());
      expect(second.sessions[0]?.restored).toEqual([join(root, "config.json"), join(root, "src/long.py")]);
      const replies = Object.fromEntries(second.sessions[0]?.replies.map((r) => [r.id, r]) ?? []);
      expect(replies.b1).toMatchObject({ cached: true, ref: "a2" }); // a reference to the first process's result
      expect(replies.b2?.cached).toBe(true);
      expect(replies.b3).toMatchObject({ cached: false, text: '     1\t{ "debug": 1234 }' }); // stale: read again
      expect(replies.b4).toMatchObject({ cached: true, text: '     1\t{ "debug": 1234 }' });
      expect(second.fileCache.stats).toEqual(one.fileCache.stats);
      expect(second.fileCache.stats.staleRefreshes).toBe(1);
      // The same cached files (digests and lengths; no contents) and tree as one process has (their stats and
      // times are of another copy).
      const contents = (out: FileToolsTurnOutput) =>
        Object.fromEntries(Object.entries(out.fileCache.files).map(([path, f]) => [path, [f.hash, f.chars]]));
      expect(contents(second)).toEqual(contents(one));
      expect(Object.keys(second.fileCache.tree ?? {})).toEqual(Object.keys(one.fileCache.tree ?? {}));
      expect(second.fileCache.bytes).toBe(one.fileCache.bytes);
    });

    it("no contents are stored: the cache's blobs and writes stay small, and it is restored", async () => {
      // 500 KB in five files: the cache holds their digests, not their contents (PostgresSaver's getTuple costs
      // time per byte of state; the cache is an ordinary channel, read from the latest checkpoint only).
      const root = join(base, "big");
      mkdirSync(root);
      for (let i = 0; i < 5; i += 1) {
        const line = `${String(i).repeat(40)} some source text of file ${i}\n`;
        writeFileSync(join(root, `big${i}.txt`), line.repeat(Math.ceil(100_000 / line.length)));
      }
      const graphOf = (saver: BaseCheckpointSaver, cache: boolean) =>
        new StateGraph(GuardMessagesState)
          .addNode(
            "tools",
            new GuardedToolNode(
              createFileTools({ root, cache, limits: { defaultLineLimit: 100_000, maxLineChars: 100_000 } }),
            ),
          )
          .addEdge(START, "tools")
          .addEdge("tools", END)
          .compile({ checkpointer: saver });
      /** Reads the five files, then lists the root twice. */
      const run = async (saver: BaseCheckpointSaver, cache: boolean) => {
        const graph = graphOf(saver, cache);
        const calls = [
          ...Array.from({ length: 5 }, (_, i) => ({ name: "read_file", args: { path: `big${i}.txt` } })),
          ...Array.from({ length: 2 }, () => ({ name: "list_files", args: {} })),
        ];
        for (const [i, c] of calls.entries()) {
          const ai = new AIMessage({ content: "", tool_calls: [{ ...c, id: `c${i}`, type: "tool_call" }] });
          await graph.invoke({ messages: [ai] }, { configurable: { thread_id: "t" } });
        }
      };
      /** Bytes stored for thread t: all of them, and the fileCache channel's blobs and writes. */
      const storedBytes = async (url: string) => {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        try {
          const { rows } = await client.query<{ total: string; blobs: string; writes: string }>(
            `SELECT (SELECT coalesce(sum(octet_length(checkpoint::text) + octet_length(metadata::text)), 0)
                       FROM checkpoints WHERE thread_id = 't')
                  + (SELECT coalesce(sum(octet_length(blob)), 0) FROM checkpoint_blobs WHERE thread_id = 't')
                  + (SELECT coalesce(sum(octet_length(blob)), 0) FROM checkpoint_writes WHERE thread_id = 't')
                    AS total,
                    (SELECT coalesce(sum(octet_length(blob)), 0) FROM checkpoint_blobs
                       WHERE thread_id = 't' AND channel = 'fileCache') AS blobs,
                    (SELECT coalesce(sum(octet_length(blob)), 0) FROM checkpoint_writes
                       WHERE thread_id = 't' AND channel = 'fileCache') AS writes`,
          );
          const row = rows[0];
          return { total: Number(row?.total), blobs: Number(row?.blobs), writes: Number(row?.writes) };
        } finally {
          await client.end();
        }
      };
      const on = await database();
      const off = await database();
      await run(on.saver, true);
      await run(off.saver, false);
      const [withCache, without] = [await storedBytes(on.url), await storedBytes(off.url)];
      expect(without.total).toBeGreaterThan(1_000_000);
      expect(withCache.total).toBeLessThanOrEqual(1.2 * without.total);
      // The contents are stored nowhere (only in the ToolMessages): the cache's writes and blobs are entries.
      expect(withCache.writes).toBeLessThan(20_000);
      expect(withCache.blobs).toBeLessThan(30_000);

      // A new connection (a new saver and graph) reads the cache back from the latest checkpoint.
      const again = await openPostgresSaver(on.url);
      savers.push(again);
      const restored = (await graphOf(again, true).getState({ configurable: { thread_id: "t" } })).values;
      expect(Object.keys(restored.fileCache.files)).toHaveLength(5);
      expect(restored.fileCache.bytes).toBeGreaterThan(500_000); // the budget still counts the files' characters
      expect(JSON.stringify(restored.fileCache)).not.toContain("some source text");
    }, 120_000);
  });
});
