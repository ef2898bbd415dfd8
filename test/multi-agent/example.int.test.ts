/**
 * examples/multi-agent.ts runs (offline, as a user runs it) and shows what docs/multi-agent.md says: a stuck worker
 * stopped and reported to the supervisor, a hand-off ping-pong ended within 4 hand-offs, a task ended by its budget.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);

describe("npx tsx examples/multi-agent.ts", () => {
  it("stops the stuck worker, the ping-pong and the task at its budget, each in words", async () => {
    const { stdout } = await run(process.execPath, ["--import", "tsx", "examples/multi-agent.ts"], {
      cwd: join(import.meta.dirname, "..", ".."),
      env: { ...process.env, NO_COLOR: "1" },
      timeout: 60_000,
    });
    const [, stuck = "", pingPong = "", budget = ""] = stdout.split(/^=== /m);
    expect(stuck).toContain(
      "supervisor: I could not get the data: the researcher did not finish. [This agent did not finish: the guards stopped it (escalation): it kept repeating a call of `search_web` that they blocked. Its task is not done.]",
    );
    expect(stuck).toContain("searches run: 1 ");
    expect(pingPong.match(/supervisor → transfer_to_writer/g)).toHaveLength(3);
    expect(pingPong).toContain("(not run: transfer_to_writer)");
    expect(pingPong).toContain("verdict: loop / handoffs");
    expect(budget).toContain("Stopped: the task's iteration budget was reached (10 model turns");
    expect(budget).toContain("verdict: limits / iterations (the task's budget)");
    expect(budget).toContain("searches run: 3");
  });
});
