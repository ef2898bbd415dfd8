/**
 * Issue 61, item 9: the replay CLI on millions of small runs (a 747 MB file of 3.5 M runs took 163 s on one thread of
 * a 2-core machine). Past its first 20,000 items a file's lines of JSON Lines go unread to worker threads, which parse
 * and replay them in batches; the outcomes are taken in the file's order. The report must be the one a single thread
 * gives: every total, the sources in the order they first appear (the first 100 listed), the problems with their line
 * numbers, each run's calls not run (`--detail`, `--json`).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReplayRun } from "../../src/replay/replay.js";
import { cli } from "../support/cli.js";

let dir: string;
let path: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "lgg-threads-"));
  path = join(dir, "runs.jsonl");
  writeFileSync(path, `${lines(26_000).join("\n")}\n`);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Run `i`: of one of 150 sources; every third repeats its call (blocked), every seventh fails with a time-out and
 * retries (two identical retries run).
 */
function run(i: number): ReplayRun {
  const call = { role: "assistant" as const, text: "", tool_calls: [{ name: "get_item", args: { id: i % 500 } }] };
  const ok = i % 7 !== 0;
  const result = { role: "tool" as const, ok, text: ok ? `item ${i % 500}` : "Error: timed out" };
  const steps = i % 3 === 0 ? [call, result, call, result, call, result] : [call, result];
  return { id: `run-${i}`, source: `source-${(i * 7919) % 150}`, steps };
}

/** The file's lines: runs, with a line that is not JSON now and then, before and after the threads take over. */
function lines(n: number): string[] {
  return Array.from({ length: n }, (_, i) =>
    i % 4_999 === 17 ? `{"id": "cut-${i}", "steps": [` : JSON.stringify(run(i)),
  );
}

// A worker thread started from the source compiles the replay modules with tsx first: the first test took 38 s on
// a 2-core machine doing other work, and ran past the default 60 s with two busy loops beside the suite.
describe("the replay CLI on worker threads", { timeout: 180_000 }, () => {
  it("26,000 runs on 2 worker threads give the report of one thread: totals, sources, problems, --detail", async () => {
    const one = await cli("replay", path, "--no-progress", "--threads", "0", "--detail");
    const two = await cli("replay", path, "--no-progress", "--threads", "2", "--detail");
    expect(one.code).toBe(1); // the lines that are not JSON
    expect(one.stderr).toMatch(/runs\.jsonl:25013: not JSON/); // a problem past the first 20,000 items, numbered
    expect(one.stdout).toMatch(/^other sources \(beyond the first 100\) /m);
    expect(one.stdout).toMatch(/^run-25995 \(runs\.jsonl\): 3 calls, 2 not run$/m);
    expect(one.stdout).not.toMatch(/^run-25998 /m); // timed out 3 times: both retries ran
    expect(two).toEqual(one);
  });

  it("--json on 2 worker threads is the JSON of one thread", async () => {
    const one = await cli("replay", path, "--json", "--threads", "0");
    const two = await cli("replay", path, "--json", "--threads", "2");
    expect(JSON.parse(one.stdout).totals.runs).toBe(25_994);
    expect(two).toEqual(one);
  });

  it("--threads takes a number of threads from 0 to 64", async () => {
    const bad = await cli("replay", path, "--threads", "many");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--threads "many": expected a number of threads from 0 to 64/);
  });
});
