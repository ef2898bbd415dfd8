/**
 * guardMiddleware's state in createAgent survives a new Node process through SqliteSaver: sessions split over
 * processes that share a SQLite file decide exactly as the same sessions in one process (test/fixtures/agent-turn.ts
 * runs them; `memory` is one process with a MemorySaver), and `agent.getState(config).values.toolGuard` reads back
 * in the new process.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import type { GuardMiddlewareOptions } from "../../src/middleware/index.js";
import type { ScriptedToolCall } from "../../src/testing/index.js";
import type { AgentTurnOutput, Session } from "../fixtures/agent-turn.js";

const exec = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "langgraph-guards-mw-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs sessions in one new Node process, on `where` (a SQLite file, or `memory`). */
async function agentProcess(
  where: string,
  thread: string,
  sessions: Session[],
  options?: GuardMiddlewareOptions,
): Promise<AgentTurnOutput> {
  const { stdout } = await exec(
    process.execPath,
    [
      "--import",
      "tsx",
      "test/fixtures/agent-turn.ts",
      where,
      thread,
      JSON.stringify(sessions),
      ...(options ? [JSON.stringify(options)] : []),
    ],
    { cwd: join(import.meta.dirname, "..", ".."), timeout: 60_000 },
  );
  return JSON.parse(stdout.trim()) as AgentTurnOutput;
}

/**
 * The state with what differs between any two runs (call, response and message ids, clock times) replaced by its
 * kind.
 */
function stable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stable);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k,
      ["toolCallId", "callId", "lastTurn", "turn", "endedBy", "at", "run"].includes(k)
        ? v == null
          ? v
          : `<${typeof v}>`
        : stable(v),
    ]),
  );
}

const search = (q: string): ScriptedToolCall[] => [{ name: "search_docs", args: { q } }];
const write = (text: string): ScriptedToolCall[] => [{ name: "write_note", args: { text } }];

describe("guardMiddleware state across processes (SqliteSaver)", () => {
  it("a new process blocks the next identical call exactly as one process would, and reads toolGuard back (one run)", async () => {
    const first: Session = { turns: [search("a"), search("b")] };
    const second: Session = { turns: [search("a"), search("c"), search("c")] };
    // The whole thread is one run: the second message goes on with the first one's memory.
    const oneRun: GuardMiddlewareOptions = { memory: { runBoundary: "none" } };

    const db = join(dir, "turns.sqlite");
    // One process with both sessions, and (at the same time) the first session alone in a process on the file.
    const [one, a] = await Promise.all([
      agentProcess("memory", "t", [first, second], oneRun),
      agentProcess(db, "t", [first], oneRun),
    ]);
    expect(one.sessions.map((s) => s.fates)).toEqual([
      ["ran", "ran"],
      ["redundant", "ran", "consecutive"],
    ]);
    expect(a.sessions).toEqual([one.sessions[0]]);
    expect(a.toolGuard.stats.allowed).toBe(2);
    const b = await agentProcess(db, "t", [second], oneRun);
    expect(b.sessions).toEqual([one.sessions[1]]);
    // getState in the second process: the whole guard state, as one process has it.
    expect(b.toolGuard.stats).toEqual(one.toolGuard.stats);
    expect(b.toolGuard.stats.blocked).toMatchObject({ redundant: 1, consecutive: 1 });
    expect(b.toolGuard.repetition.window.map((r) => r.result?.preview)).toEqual([
      "results for a",
      "results for b",
      "results for c",
    ]);
    expect(stable(b.toolGuard)).toEqual(stable(one.toolGuard));

    // The control: the same second session on a new thread of the same file has nothing to remember.
    const fresh = await agentProcess(db, "other", [second], oneRun);
    expect(fresh.sessions.map((s) => s.fates)).toEqual([["ran", "ran", "consecutive"]]);
  });

  it("a new process starts the new message's run from the stored state exactly as one process would", async () => {
    const first: Session = { turns: [search("a"), search("b")] };
    const second: Session = { turns: [search("a"), search("c"), search("c")] };

    const db = join(dir, "runs.sqlite");
    const [one, a] = await Promise.all([agentProcess("memory", "t", [first, second]), agentProcess(db, "t", [first])]);
    // The second message starts a new run: search("a") runs again; the repeat within the run is blocked.
    expect(one.sessions.map((s) => s.fates)).toEqual([
      ["ran", "ran"],
      ["ran", "ran", "consecutive"],
    ]);
    expect(a.sessions).toEqual([one.sessions[0]]);
    expect(a.toolGuard.run).toBe(a.person);
    const b = await agentProcess(db, "t", [second]);
    expect(b.sessions).toEqual([one.sessions[1]]);
    // Read back in the second process: the counters of both runs, the second message's run, its calls only.
    expect(b.toolGuard.stats).toEqual(one.toolGuard.stats);
    expect(b.toolGuard.stats.allowed).toBe(4);
    expect(b.toolGuard.stats.blocked).toMatchObject({ redundant: 0, consecutive: 1 });
    expect(b.person).not.toBe(a.person);
    expect(b.toolGuard.run).toBe(b.person);
    expect(one.toolGuard.run).toBe(one.person);
    expect(b.toolGuard.repetition.window.map((r) => r.result?.preview)).toEqual(["results for a", "results for c"]);
    expect(stable(b.toolGuard)).toEqual(stable(one.toolGuard));
  });

  it("the guard's escalation question asked in one process is answered in the next, as in one process", async () => {
    // The 5th identical call is the first that may ask (issue 43, class 8): the 4th is held at level 2.
    const repeat: Session = { turns: [write("x"), write("x"), write("x"), write("x"), write("x")] };
    const answer: Session = { turns: [], resume: "Stop writing that note." };

    const db = join(dir, "escalation.sqlite");
    const [one, paused, a] = await Promise.all([
      agentProcess("memory", "t", [repeat, answer]),
      agentProcess("memory", "t", [repeat]),
      agentProcess(db, "t", [repeat]),
    ]);
    expect(one.sessions).toEqual([
      { fates: ["ran", "consecutive", "consecutive", "consecutive"], levels: [1, 2, 2], asked: 4 },
      { fates: ["consecutive"], levels: [3], asked: null },
    ]);
    // Paused at the question, the state holds three strikes: the fourth is written when the guard's afterModel
    // completes, after the answer.
    expect(paused.toolGuard.escalation.strikes).toBe(3);
    expect(a.sessions).toEqual([one.sessions[0]]);
    expect(stable(a.toolGuard)).toEqual(stable(paused.toolGuard));
    expect(a.toolGuard.run).toBe(a.person);
    const b = await agentProcess(db, "t", [answer]);
    expect(b.sessions).toEqual([one.sessions[1]]);
    expect(b.toolGuard.escalation.strikes).toBe(4);
    expect(stable(b.toolGuard)).toEqual(stable(one.toolGuard));
    // The answer resumes the run the first process paused: no new person's message, no new run.
    expect(b.person).toBe(a.person);
    expect(b.toolGuard.run).toBe(a.toolGuard.run);
    expect(one.toolGuard.run).toBe(one.person);
  });
});
