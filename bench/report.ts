/**
 * The shared parts of the benches: the quick flag, medians, and the summary figures that `npm run bench`
 * (bench/run.ts) gathers from every bench into one table.
 *
 * A bench reports its headline figures with {@link report}. When run by bench/run.ts the figures go to the file
 * named by `LGG_BENCH_SUMMARY` (one JSON line each); run alone they are printed after the bench's own table.
 * In `--quick` mode a bench runs small sizes in seconds: its figures are printed but no goal is judged.
 */
import { appendFileSync } from "node:fs";
import { cpus } from "node:os";
import { performance } from "node:perf_hooks";

/** `--quick`: small sizes, a few seconds, no goal judged (CI runs every bench so). */
export const quick = process.argv.includes("--quick");

/** The value of a bench's `--name value` argument, if given. */
export function argument(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : undefined;
}

/** A `--name N` argument (a count), or `fallback`. */
export function countArgument(name: string, fallback: number): number {
  const given = argument(name);
  if (given === undefined) return fallback;
  const n = Number(given);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} takes a count, got ${given}`);
  return n;
}

/** One headline figure of a bench. */
export interface Figure {
  /** The bench that measured it (its file name without `.ts`). */
  bench: string;
  /** What was measured, with its size. */
  figure: string;
  /** Our figure, formatted. */
  ours: string;
  /** What it is compared with, formatted with its name ("12 ms fdir"), or "" when nothing is. */
  anchor: string;
  /** ours / anchor (or the figure's own ratio), formatted, or "". */
  ratio: string;
  /** The goal ("<= 1.05x"), or "" when there is none. */
  goal: string;
  /**
   * Whether the goal is met: `true`, `false`, `"noise"` (a figure with an interval that spans the goal: this run
   * cannot tell), or `null` (no goal, or not judged in quick mode).
   */
  met: boolean | "noise" | null;
}

/** Reports headline figures: to bench/run.ts's summary file when set, else printed. */
export function report(figures: readonly Figure[]): void {
  const file = process.env.LGG_BENCH_SUMMARY;
  const judged = figures.map((f) => (quick ? { ...f, met: null } : f));
  if (file) {
    appendFileSync(file, judged.map((f) => `${JSON.stringify(f)}\n`).join(""));
    return;
  }
  console.log(`\n${summaryTable(judged)}`);
}

/** A judged goal as the tables print it. */
export function verdictText(met: boolean | "noise"): string {
  return met === "noise" ? "within noise" : met ? "met" : "MISSED";
}

/** The figures as one aligned table. */
export function summaryTable(figures: readonly Figure[]): string {
  const header = ["bench", "figure", "ours", "anchor", "ratio", "goal", "result"];
  const rows = figures.map((f) => [
    f.bench,
    f.figure,
    f.ours,
    f.anchor,
    f.ratio,
    f.goal,
    f.met === null ? (f.goal && quick ? "not judged (quick)" : "info") : verdictText(f.met),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => (i >= 2 && i <= 4 ? c.padStart(widths[i] as number) : c.padEnd(widths[i] as number)))
      .join("  ")
      .trimEnd();
  return [line(header), "-".repeat(line(header).length), ...rows.map(line)].join("\n");
}

/** The machine, for the table's heading: Node version, CPU model and count. */
export function machine(): string {
  const list = cpus();
  return `node ${process.version}, ${list[0]?.model.trim() ?? "unknown CPU"} x ${list.length}, ${process.platform}`;
}

/** The median of some numbers. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Milliseconds, formatted for a table (µs below 1 ms). */
export function fmtMs(ms: number): string {
  if (ms < 1) return `${(ms * 1000).toFixed(0)} µs`;
  return `${ms.toFixed(ms < 10 ? 2 : 1)} ms`;
}

/** A ratio, formatted ("1.03x"). */
export function fmtRatio(ratio: number): string {
  return `${ratio.toFixed(ratio < 10 ? 2 : 0)}x`;
}

/** The median time of `runs` calls of `fn`, in ms. */
export async function timeMs(fn: () => unknown, runs: number): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const start = performance.now();
    await fn();
    samples.push(performance.now() - start);
  }
  return median(samples);
}
