/** `npm run eval` on the recorded runs in data/trajectories/: our defaults against the peer policies. */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const exec = promisify(execFile);
const root = join(import.meta.dirname, "..", "..");
const data = join(root, "data", "trajectories", "trajectories.jsonl.gz");

interface Score {
  waste: number;
  wasteCaught: number;
  notRun: number;
  progressBlocked: number;
}
const caught = (s: Score) => s.wasteCaught / s.waste;
const harm = (s: Score) => (s.notRun === 0 ? 0 : s.progressBlocked / s.notRun);
const OURS = "langgraph-guards defaults (GuardedToolNode + escalationHook)";

describe("npm run eval on data/trajectories", () => {
  it("finds the data", () => expect(existsSync(data), data).toBe(true));

  it("prints the comparison table: our defaults and every peer policy, per source and overall", async () => {
    const { stdout } = await exec(process.execPath, ["--import", "tsx", "bench/eval.ts"], {
      cwd: root,
      timeout: 120_000,
    });
    expect(stdout).toMatch(/^langgraph-guards eval: 1481 runs, 1646 waste calls/);
    expect(stdout).toMatch(/policy\s+all\s+mini-swe-agent\/d\s+tau2-bench\s+tau-bench/);
    // The README's peer rows, reproduced.
    expect(stdout).toMatch(/identical call 4th time within last 5 calls \(threshold 3, window 5\)\s+54\.3% \/\s+0\.0%/);
    expect(stdout).toMatch(/identical call after its last 2 results were equal\s+67\.4% \/\s+4\.4%/);
    expect(stdout).toMatch(/any earlier identical call\s+100\.0% \/ 33\.0%/);
  }, 180_000);

  it("our defaults catch more waste than every peer at ≤ 1% harmful, stay ≤ 1%, and stop every 5+ loop of one run in 4 calls", async () => {
    const { stdout } = await exec(process.execPath, ["--import", "tsx", "bench/eval.ts", "--json"], {
      cwd: root,
      timeout: 120_000,
    });
    const result = JSON.parse(stdout) as {
      rows: Record<string, Record<string, Score>>;
      loops: number;
      stoppedInTime: number;
      acrossRuns: number;
      late: string[];
    };
    const ours = result.rows[OURS]?.all as Score;
    expect(ours.waste).toBe(1646);
    expect(harm(ours)).toBeLessThanOrEqual(0.01);
    const peers = Object.entries(result.rows).filter(([label]) => label.startsWith("peer: "));
    expect(peers).toHaveLength(6);
    const safePeers = peers.filter(([, s]) => harm(s.all as Score) <= 0.01);
    expect(safePeers.length).toBeGreaterThan(0);
    for (const [label, s] of safePeers) expect(caught(ours), label).toBeGreaterThan(caught(s.all as Score));
    // Loops of 5+ identical consecutive calls within one run (no person's message between them): all stopped.
    expect(result.loops).toBe(14);
    expect(result.late).toEqual([]);
    expect(result.stoppedInTime).toBe(result.loops);
    // 5+ identical consecutive calls that only span person's messages (each run has fewer): counted apart.
    expect(result.acrossRuns).toBe(2);
  }, 180_000);
});
