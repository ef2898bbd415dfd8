/**
 * Issue 35, item 9: `execute_command` ends. A command runs in its own process group with stdin closed; its answer
 * comes back promptly when its shell exits, even when a process it started in another session (`setsid`) still holds
 * the output, and a timeout ends everything the command started. Real processes, found by their command lines.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { directTools } from "./direct.js";

const root = realpathSync(mkdtempSync(join(tmpdir(), "lgg-commands-")));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The pids of the processes whose command line is `sleep <seconds>` (a number no other test uses). */
function sleepers(seconds: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      if (cmdline === `sleep\0${seconds}\0`) pids.push(Number(entry));
    } catch {
      // ended meanwhile
    }
  }
  return pids;
}

/** Processes the tests leave running on purpose (or on failure), ended after each test. */
const marks: string[] = [];
afterEach(() => {
  for (const mark of marks.splice(0)) {
    for (const pid of sleepers(mark)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone
      }
    }
  }
});

/**
 * Runs a command through the tool. The answers' texts tell an end at once from the old waits (an answer that waited
 * out the timeout says "Timed out", one that waited for a background job has its late output), and a wait that never
 * ended fails the test's own timeout: no wall-time bound is needed, which a loaded machine could break.
 */
async function run(command: string, timeoutMs = 10_000) {
  const { call } = directTools(root, { commands: { timeoutMs } });
  return call("execute_command", { command });
}

describe("execute_command ends", () => {
  it("a setsid grandchild that holds the output does not hold the answer: it comes back at once and the process ends", async () => {
    marks.push("987601");
    const answer = await run("echo start; setsid sleep 987601 & echo end", 15_000);
    // Before: never (the timeout could not end it either).
    expect(answer.text).toMatch(/^Exit code 0\.\nstart\nend\n/);
    expect(answer.text).toContain("output after the shell exited is not shown");
    await expect.poll(() => sleepers("987601"), { timeout: 15_000 }).toEqual([]);
  });

  it("stdin is closed: cat and read end at once instead of waiting out the timeout", async () => {
    const cat = await run("cat; echo after-cat");
    expect(cat.text).toBe("Exit code 0.\nafter-cat");
    const read = await run('read line; echo "read gave: $?"');
    expect(read.text).toBe("Exit code 0.\nread gave: 1");
    // Before: "Timed out after 10000 ms", each.
  });

  it("a timeout ends the whole command: its group, and a process it started in a new session", async () => {
    marks.push("987602", "987603");
    const answer = await run("setsid sleep 987602 & sleep 987603", 1500);
    expect(answer.text).toMatch(/^Timed out after 1500 ms\./);
    // Before: never.
    await expect.poll(() => [...sleepers("987602"), ...sleepers("987603")], { timeout: 15_000 }).toEqual([]);
  });

  it("output a background job prints after the shell exited is cut, and the answer says so", async () => {
    const answer = await run("(sleep 12; echo late) & echo early", 15_000);
    // Before: 12 s, until the background job ended, with its "late".
    expect(answer.text).toContain("early");
    expect(answer.text).not.toContain("late");
    expect(answer.text).toContain("output after the shell exited is not shown");
  });

  it("a background process that does not hold the output is left running, and the answer is not cut", async () => {
    marks.push("987604");
    const answer = await run("nohup sleep 987604 >/dev/null 2>&1 & echo started");
    expect(answer.text).toBe("Exit code 0.\nstarted");
    await expect.poll(() => sleepers("987604"), { timeout: 15_000 }).toHaveLength(1); // nohup execs sleep
    await new Promise((r) => setTimeout(r, 500));
    expect(sleepers("987604")).toHaveLength(1);
  });

  it("when another background process holds the output, only it is stopped: a detached server is left running", async () => {
    marks.push("987611", "987612");
    const answer = await run("nohup sleep 987611 >/dev/null 2>&1 & sleep 987612 & echo started");
    expect(answer.text).toContain("started");
    expect(answer.text).toContain("output after the shell exited is not shown");
    await expect.poll(() => sleepers("987612"), { timeout: 15_000 }).toHaveLength(0); // it held the output
    await expect.poll(() => sleepers("987611"), { timeout: 15_000 }).toHaveLength(1); // it did not (nohup execs sleep)
    await new Promise((r) => setTimeout(r, 500));
    expect(sleepers("987611")).toHaveLength(1);
  });

  it("a plain command still answers its exit code and whole output", async () => {
    const answer = await run("printf 'a\\nb\\n'; exit 3");
    expect(answer.text).toBe("Exit code 3.\na\nb");
    expect(execFileSync("bash", ["-c", "echo ok"]).toString()).toBe("ok\n");
  });
});
