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
  charsNotSent: number;
  deduped: number;
  charsDeduped: number;
  dedupedProgress: number;
}
const caught = (s: Score) => s.wasteCaught / s.waste;
const harm = (s: Score) => (s.notRun === 0 ? 0 : s.progressBlocked / s.notRun);
const OURS = "langgraph-guards defaults (GuardedToolNode + escalationHook)";

describe("npm run eval on data/trajectories", () => {
  it("finds the data", () => expect(existsSync(data), data).toBe(true));

  it("prints the comparison table: our defaults and every peer policy, per source and overall", async () => {
    const { stdout } = await exec(process.execPath, ["--import", "tsx", "bench/eval.ts"], {
      cwd: root,
      timeout: 400_000,
    });
    expect(stdout).toMatch(/^langgraph-guards eval: 1481 runs, 1646 waste calls/);
    expect(stdout).toMatch(/policy\s+all\s+mini-swe-agent\/d\s+tau2-bench\s+tau-bench/);
    // The README's peer rows, reproduced.
    expect(stdout).toMatch(/identical call 4th time within last 5 calls \(threshold 3, window 5\)\s+54\.3% \/\s+0\.0%/);
    expect(stdout).toMatch(/identical call after its last 2 results were equal\s+67\.4% \/\s+4\.4%/);
    expect(stdout).toMatch(/any earlier identical call\s+100\.0% \/ 33\.0%/);
    // Tokens saved and calls saved in stuck runs: a second table, a row per policy, numbers that parse.
    expect(stdout).toMatch(/result characters not sent to the model \(thousands/);
    const saved = stdout.match(
      /langgraph-guards defaults \(GuardedToolNode \+ escalationHook\)\s+([\d.]+)k\s+([\d.]+)k(?:\s+[\d.]+k){4}\s+(\d+)\/(\d+)/,
    );
    expect(saved, "our defaults' tokens-saved row").not.toBeNull();
    for (const i of [1, 2, 3, 4]) expect(Number(saved?.[i])).toBeGreaterThan(0);
    expect(stdout).toMatch(/peer: 5 identical consecutive calls\s+[\d.]+k\s+0\.0k(?:\s+[\d.]+k){4}\s+n\/a/);
    // The text loop detector over the recorded turns: how often it fires, and in runs whose task succeeded.
    const fired = stdout.match(/loop detector .*: fires in (\d+) of 1481 runs/);
    expect(Number(fired?.[1])).toBeGreaterThan(0);
    const alarms = stdout.match(/task succeeded \(false alarms\): (\d+) of (\d+); failed: (\d+) of (\d+)/);
    expect(alarms).not.toBeNull();
    expect(Number(alarms?.[1])).toBeLessThanOrEqual(Number(alarms?.[2]));
    expect(Number(alarms?.[3])).toBeLessThanOrEqual(Number(alarms?.[4]));
  }, 450_000);

  it("our defaults catch more waste than every peer at ≤ 1% harmful, stay ≤ 1%, and stop every 5+ loop of one run in 4 calls", async () => {
    const { stdout } = await exec(process.execPath, ["--import", "tsx", "bench/eval.ts", "--json"], {
      cwd: root,
      timeout: 400_000,
    });
    const result = JSON.parse(stdout) as {
      rows: Record<string, Record<string, Score>>;
      loops: number;
      stoppedInTime: number;
      acrossRuns: number;
      late: string[];
      stuckCallsSaved: Record<string, { calls: number; turns: number } | null>;
      loopDetector: { fired: number; succeeded: number; runsSucceeded: number; turns: number[]; stuckFired: number };
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
    // Tokens saved: our defaults keep recorded results out of the context; stops save calls in the stuck runs;
    // block-only peers never stop (null: n/a).
    expect(ours.charsNotSent).toBeGreaterThan(0);
    // Result dedupe: only results equal to an earlier identical call's are replaced, so every one is waste.
    expect(ours.deduped).toBeGreaterThan(0);
    expect(ours.dedupedProgress).toBe(0);
    expect(ours.charsDeduped).toBeGreaterThan(0);
    expect(result.stuckCallsSaved[OURS]?.calls).toBeGreaterThan(0);
    expect(result.stuckCallsSaved[OURS]?.turns).toBeGreaterThan(0);
    for (const [label] of peers) expect(result.stuckCallsSaved[label], label).toBeNull();
    const detector = result.loopDetector;
    expect(detector.fired).toBe(detector.turns.length);
    expect(detector.succeeded).toBeLessThanOrEqual(Math.min(detector.fired, detector.runsSucceeded));
    expect(detector.stuckFired).toBeLessThanOrEqual(result.loops);
  }, 450_000);
});
