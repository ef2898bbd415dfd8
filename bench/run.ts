/**
 * `npm run bench [-- --quick] [-- --only NAME[,NAME]] [-- --verbose]`: runs every bench, one after the other in
 * its own process, and prints one table of their headline figures (figure, ours, anchor, ratio, goal) with the
 * machine's Node version and CPU. Each bench's own detailed table is kept for the end with `--verbose`, and shown
 * when a bench fails. `--quick` runs every bench at small sizes (what CI runs: seconds, no goal judged).
 *
 * Exits non-zero when a bench fails (a wrong decision, a broken setup); a missed goal is reported, not failed:
 * timings on shared machines are noisy.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Figure, machine, quick, summaryTable } from "./report.js";

/** Every bench, in the order they run. */
export const BENCHES = ["overhead", "parts", "similarity", "normalize", "fs", "channels", "resume", "eval"] as const;

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const verbose = args.includes("--verbose");
const onlyAt = args.indexOf("--only");
const only = onlyAt >= 0 ? new Set((args[onlyAt + 1] ?? "").split(",")) : undefined;
const unknown = only ? [...only].filter((n) => !(BENCHES as readonly string[]).includes(n)) : [];
if (unknown.length > 0) {
  console.error(`unknown bench ${unknown.join(", ")}; the benches are ${BENCHES.join(", ")}`);
  process.exit(2);
}

const dir = mkdtempSync(join(tmpdir(), "lgg-bench-"));
const summary = join(dir, "summary.jsonl");
const tsx = join(here, "..", "node_modules", ".bin", "tsx");
const failed: string[] = [];
const outputs: string[] = [];
const started = Date.now();
try {
  for (const name of BENCHES) {
    if (only && !only.has(name)) continue;
    process.stderr.write(`bench ${name}${quick ? " (quick)" : ""} ...\n`);
    const t0 = Date.now();
    const child = spawnSync(tsx, [join(here, `${name}.ts`), ...(quick ? ["--quick"] : [])], {
      env: { ...process.env, LGG_BENCH_SUMMARY: summary },
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const seconds = ((Date.now() - t0) / 1000).toFixed(1);
    const output = `==> bench/${name}.ts (${seconds} s)\n${child.stdout}${child.stderr ? `\n${child.stderr}` : ""}`;
    if (child.status !== 0) {
      failed.push(name);
      console.error(output);
    } else {
      outputs.push(output);
      process.stderr.write(`bench ${name}: ${seconds} s\n`);
    }
  }
  let figures: Figure[] = [];
  try {
    figures = readFileSync(summary, "utf8")
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => JSON.parse(l) as Figure);
  } catch {
    // no bench reported a figure
  }
  console.log(`langgraph-guards benches${quick ? " (quick sizes: figures shown, goals not judged)" : ""}`);
  console.log(`${machine()}, ${((Date.now() - started) / 1000).toFixed(0)} s in all\n`);
  console.log(summaryTable(figures));
  if (verbose) console.log(`\n${outputs.join("\n")}`);
  const missed = figures.filter((f) => f.met === false);
  if (missed.length > 0) console.log(`\n${missed.length} goal(s) missed on this run (reported, not failed).`);
  const noise = figures.filter((f) => f.met === "noise");
  if (noise.length > 0) console.log(`${noise.length} goal(s) neither met nor missed: the run's noise spans them.`);
  if (failed.length > 0) {
    console.error(`\nbench failed: ${failed.join(", ")}`);
    process.exitCode = 1;
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
