import { BLOCK_RULES } from "../tool-calls/core/rules.js";
import { type ReplayTotals, rates } from "./totals.js";

/**
 * One row of a replay summary: a label (a source, a policy, "all") and its totals.
 *
 * @example
 * ```ts
 * const row: SummaryRow = { label: "all", totals };
 * ```
 */
export interface SummaryRow {
  /** The row's label (a source, a policy, "all"). */
  label: string;
  /** The totals shown in the row. */
  totals: ReplayTotals;
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

function compact(n: number): string {
  if (n >= 1_000_000) return `${(n / 1_000_000).toFixed(1)}M`;
  if (n >= 10_000) return `${Math.round(n / 1000)}k`;
  return String(n);
}

/**
 * The summary table of a replay: per row the runs and calls, the calls blocked by each rule, answered from cache and
 * stopped, the ground truth's waste, waste caught, harmful block rate, and the characters not sent again.
 *
 * @example
 * ```ts
 * console.log(summaryTable([{ label: "all", totals }]));
 * ```
 */
export function summaryTable(rows: readonly SummaryRow[]): string {
  const header = [
    "",
    "runs",
    "calls",
    "blocked c/t/r/n/f/y/e/l",
    "cached",
    "stopped runs/calls",
    "waste",
    "waste caught",
    "harmful",
    "chars not re-sent",
  ];
  const body = rows.map(({ label, totals: t }) => {
    const r = rates(t);
    return [
      label,
      String(t.runs),
      String(t.calls),
      BLOCK_RULES.map((l) => t.blocked[l]).join("/"),
      String(t.cached),
      `${t.runsStopped}/${t.stopped}`,
      String(t.waste),
      pct(r.wasteCaught),
      pct(r.harmfulBlockRate),
      compact(t.charsSaved),
    ];
  });
  // Not Math.max(...cells): a table of 100k rows would overflow the stack.
  const widths = header.map((h, i) => body.reduce((w, row) => Math.max(w, (row[i] ?? "").length), h.length));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join("  ");
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...body.map(line)].join("\n");
}

/**
 * The legend printed under {@link summaryTable}.
 *
 * @example
 * ```ts
 * console.log(SUMMARY_LEGEND);
 * ```
 */
export const SUMMARY_LEGEND = [
  "blocked c/t/r/n/f/y/e/l: consecutive / threshold / redundant / near_duplicate / repeat_failure / cycle / file_edits / repeat_ceiling",
  "stopped: runs the escalation would have stopped (level 3 asks a person, level 4 ends) / calls not made after it",
  "waste: calls whose identical predecessor returned exactly the same (the data set's ground truth)",
  "waste caught: waste calls not run / all waste calls; harmful: progress calls not run / all calls not run",
  "chars not re-sent: characters of the recorded results of calls that did not run (results the guards answered with",
  "  an 'Unchanged' note instead are not counted here; `npm run eval` adds them: the README's 'chars not sent')",
].join("\n");
