/**
 * Issue 61, item 9: the replay report with many run sources. 100k–130k distinct `source` values overflowed the stack
 * in the table's column widths (`Math.max(...column)`) after the whole file was replayed, and nothing was printed;
 * the per-source totals grew with the runs. The first 100 sources are listed, the runs of the rest are added up in
 * one row, and the table takes any number of rows.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { ReplayRun } from "../../src/replay/replay.js";
import { summaryTable } from "../../src/replay/report.js";
import { emptyTotals } from "../../src/replay/totals.js";
import { cli } from "../support/cli.js";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "lgg-many-sources-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

/** A small run of its own source that repeats one call (the repeat is blocked). */
const run = (i: number): ReplayRun => {
  const call = { role: "assistant" as const, text: "", tool_calls: [{ name: "get_x", args: { i } }] };
  const result = { role: "tool" as const, ok: true, text: "y".repeat(20) };
  return { id: `run-${i}`, source: `source-${i}`, steps: [call, result, call, result] };
};

describe("the replay report with many sources", () => {
  it("summaryTable lays out 200k rows (their widths without spreading them as arguments)", () => {
    const totals = { ...emptyTotals(), runs: 1, calls: 2 };
    const rows = Array.from({ length: 200_000 }, (_, i) => ({ label: `source-${i}`, totals }));
    const table = summaryTable([...rows, { label: "all", totals: { ...totals, runs: 200_000 } }]);
    const lines = table.split("\n");
    expect(lines).toHaveLength(200_003);
    expect(lines[2]).toMatch(/^source-0 +1 +2 /);
    expect(new Set(lines.map((l) => l.length)).size).toBe(1); // one width per column, every row padded to it
  });

  it("the CLI lists the first 100 sources and adds up the rest in one row; --json likewise", async () => {
    const path = join(dir, "many.jsonl");
    writeFileSync(path, `${Array.from({ length: 1_000 }, (_, i) => JSON.stringify(run(i))).join("\n")}\n`);
    const text = await cli("replay", path, "--no-progress");
    expect(text.code).toBe(0);
    const rows = text.stdout.split("\n").filter((l) => /^(source-|other sources|all )/.test(l));
    expect(rows).toHaveLength(102);
    expect(rows[0]).toMatch(/^source-0 +1 +2 /);
    expect(rows[100]).toMatch(/^other sources \(beyond the first 100\) +900 +1800 /);
    expect(rows[101]).toMatch(/^all +1000 +2000 /);

    const json = await cli("replay", path, "--json");
    const out = JSON.parse(json.stdout);
    expect(Object.keys(out.sources)).toHaveLength(100);
    expect(out.otherSources.totals).toMatchObject({ runs: 900, calls: 1_800 });
    expect(out.totals).toMatchObject({ runs: 1_000, calls: 2_000 });
  });
});
