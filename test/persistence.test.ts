import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { MemorySaver } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { afterAll, describe, expect, it } from "vitest";
import type { ScriptedToolCall } from "../src/testing/index.js";
import { call, runTurns } from "./helpers.js";

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "langgraph-guards-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const firstSession: ScriptedToolCall[][] = [[call("read_file", { path: "config.py" })], [call("list_files", {})]];
const secondSession: ScriptedToolCall[][] = [
  [call("read_file", { path: "config.py" })],
  [call("read_file", { path: "app.py" })],
  [call("read_file", { path: "app.py" })],
];

describe("persistence", () => {
  it("MemorySaver keeps guard state across invocations of a thread", async () => {
    const checkpointer = new MemorySaver();
    const first = await runTurns(firstSession, { checkpointer, threadId: "t" });
    expect(first.fates.map((f) => f.fate)).toEqual(["ran", "ran"]);
    const second = await runTurns(secondSession, { checkpointer, threadId: "t" });
    const fresh = second.fates.slice(first.fates.length);
    expect(fresh.map((f) => f.fate)).toEqual(["redundant", "ran", "consecutive"]);
  });

  it("two threads on one compiled graph never see each other's guard state", async () => {
    const checkpointer = new MemorySaver();
    const a1 = await runTurns([[call("read_file", { path: "config.py" })]], { checkpointer, threadId: "a" });
    const b1 = await runTurns([[call("read_file", { path: "config.py" })]], { checkpointer, threadId: "b" });
    expect(a1.fates.map((f) => f.fate)).toEqual(["ran"]);
    expect(b1.fates.map((f) => f.fate)).toEqual(["ran"]);
    const a2 = await runTurns([[call("read_file", { path: "config.py" })]], { checkpointer, threadId: "a" });
    expect(a2.fates.map((f) => f.fate)).toEqual(["ran", "consecutive"]);
    const b2 = await runTurns([[call("list_files", {})]], { checkpointer, threadId: "b" });
    expect(b2.result.toolGuard.stats.blocked.consecutive).toBe(0);
    expect(b2.result.toolGuard.repetition.window.map((r) => r.tool)).toEqual(["read_file", "list_files"]);
  });

  it("with SqliteSaver on a file, a new Node process blocks what the first process would have blocked", async () => {
    const db = join(dir, "checkpoints.sqlite");
    const first = await runTurns(firstSession, { checkpointer: SqliteSaver.fromConnString(db), threadId: "t" });
    expect(first.fates.map((f) => f.fate)).toEqual(["ran", "ran"]);

    // What an uninterrupted process does with the same two sessions.
    const memory = new MemorySaver();
    await runTurns(firstSession, { checkpointer: memory, threadId: "t" });
    const uninterrupted = (await runTurns(secondSession, { checkpointer: memory, threadId: "t" })).fates
      .slice(2)
      .map((f) => f.fate);
    expect(uninterrupted).toEqual(["redundant", "ran", "consecutive"]);

    const { stdout } = await run(
      process.execPath,
      ["--import", "tsx", "test/fixtures/sqlite-turn.ts", db, "t", JSON.stringify(secondSession)],
      { cwd: join(import.meta.dirname, ".."), timeout: 60_000 },
    );
    expect(JSON.parse(stdout.trim())).toEqual(uninterrupted);

    // And the state is really in the file: read it back here, in a third connection.
    const saved = await SqliteSaver.fromConnString(db).getTuple({ configurable: { thread_id: "t" } });
    const toolGuard = saved?.checkpoint.channel_values.toolGuard as { stats: { blocked: Record<string, number> } };
    expect(toolGuard.stats.blocked).toEqual({ consecutive: 1, threshold: 0, redundant: 1 });
  });
});
