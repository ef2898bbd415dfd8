/** The run boundary is persisted: a thread resumed in a new process (SqliteSaver) keeps it. */
import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const exec = promisify(execFile);
const root = join(import.meta.dirname, "..", "..");

interface Turn {
  fates: string[];
  interrupted: boolean;
  final: { level?: number; strikes?: number } | null;
  run: string | null;
  strikes: number;
  allowed: number;
}

async function turn(db: string, kind: "user" | "resume", text: string): Promise<Turn> {
  const { stdout } = await exec(
    process.execPath,
    ["--import", "tsx", "test/fixtures/runs-turn.ts", db, "thread-1", kind, text],
    { cwd: root, timeout: 60_000 },
  );
  return JSON.parse(stdout.trim().split("\n").at(-1) as string) as Turn;
}

describe("run boundary across processes (SqliteSaver)", () => {
  it("a resumed question continues the run in a new process; a new person's message starts a new one", async () => {
    const db = join(mkdtempSync(join(tmpdir(), "lgg-runs-")), "thread.db");
    // Process 1: the model repeats a failing call; the 5th identical call (strike 4, issue 43 class 8) asks a person.
    const first = await turn(db, "user", "Weather in Paris?");
    expect(first.fates).toEqual(["failed", "consecutive", "consecutive", "consecutive"]);
    expect(first.interrupted).toBe(true);
    expect(first.run).not.toBeNull();
    // Process 2: the answer resumes the same run: the strikes go on, the next repeat is strike 5 and ends the run.
    const second = await turn(db, "resume", "Keep trying.");
    expect(second.run).toBe(first.run);
    expect(second.final).toMatchObject({ level: 4, strikes: 5 });
    expect(second.fates).toEqual(["consecutive", "consecutive"]);
    // Process 3: a new person's message is a new run: the call runs again, and the run escalates from strike 1.
    const third = await turn(db, "user", "Try again, please.");
    expect(third.run).not.toBe(first.run);
    expect(third.fates).toEqual(["failed", "consecutive", "consecutive", "consecutive"]);
    expect(third.interrupted).toBe(true);
    expect(third.strikes).toBe(3); // the fourth strike is recorded when the person answers
    expect(third.allowed).toBe(first.allowed + 1); // thread counters carry across runs and processes
  }, 120_000);
});
