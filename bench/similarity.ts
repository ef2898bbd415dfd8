/**
 * bench/similarity: one `detectLoop` call against a full window of 5 outputs of 1 KB, 10 KB and 50 KB, ours
 * (exact upper bound + bit-parallel LCS) vs the seed's loop over `fuzzball.ratio`, side by side in one run.
 * Scenarios: unrelated outputs, a loop (the new output repeats the oldest), the worst case (five outputs
 * 0.87–0.89 similar to the new one, none a loop: every pair must be computed), and outputs the bound rules out.
 * Decisions must be identical; the table prints medians and the speed-up.
 *
 * Run: npm run bench:similarity   (fuzzball at 50 KB takes ~8 s a pair, so that column runs once)
 */
import { performance } from "node:perf_hooks";
import * as fuzz from "fuzzball";
import { detectLoopIn, emptyLoopState, resolveSafetyOptions } from "../src/core/index.js";
import { similarityScore, similarityUpperBound } from "../src/core/similarity.js";
import type { LoopState } from "../src/index.js";

const WORDS = (
  "the agent reads the file and then writes a patch for the failing test while checking the logs of the " +
  "service before it retries the request with a new token and reports the result to the user in a short summary"
).split(" ");

/** Deterministic pseudo-random numbers (mulberry32), so every run measures the same texts. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function prose(bytes: number, seed: number): string {
  const next = rng(seed);
  let out = "";
  while (out.length < bytes) out += `${WORDS[Math.floor(next() * WORDS.length)]} `;
  return out.slice(0, bytes);
}

/** `text` with `swaps` random character swaps: the histogram (so the bound) stays, the order changes. */
function swapped(text: string, swaps: number, seed: number): string {
  const chars = text.split("");
  const next = rng(seed);
  for (let i = 0; i < swaps; i += 1) {
    const a = Math.floor(next() * chars.length);
    const b = Math.floor(next() * chars.length);
    [chars[a], chars[b]] = [chars[b] as string, chars[a] as string];
  }
  return chars.join("");
}

/** A variant of `base` whose similarity to it is 87–89 (found by bisection on the number of swaps). */
function nearThreshold(base: string, seed: number): string {
  let lo = 0;
  let hi = base.length;
  for (let round = 0; round < 40; round += 1) {
    const mid = Math.floor((lo + hi) / 2);
    const candidate = swapped(base, mid, seed);
    const score = similarityScore(base, candidate);
    if (score >= 87 && score <= 89) return candidate;
    if (score > 89) lo = mid + 1;
    else hi = mid - 1;
  }
  throw new Error(`no 87-89 variant found for seed ${seed}`);
}

interface Scenario {
  name: string;
  history: string[];
  current: string;
}

function scenarios(bytes: number): Scenario[] {
  const current = prose(bytes, 1);
  return [
    { name: "unrelated", history: [2, 3, 4, 5, 6].map((s) => prose(bytes, s)), current },
    {
      name: "looping",
      history: [swapped(current, 2, 9), ...[3, 4, 5, 6].map((s) => prose(bytes, s))],
      current,
    },
    { name: "worst case (0.87-0.89)", history: [11, 12, 13, 14, 15].map((s) => nearThreshold(current, s)), current },
    {
      name: "ruled out by the bound",
      history: [2, 3, 4, 5, 6].map((s) => prose(Math.floor(bytes / 2), s)),
      current,
    },
  ];
}

const options = resolveSafetyOptions({ logger: { warn: () => {} } });

function ours(history: string[], current: string): { loop: boolean; similarity?: number } {
  const state: LoopState = { ...emptyLoopState(), recentOutputs: history };
  const check = detectLoopIn(state, current, options);
  return { loop: check.loop, similarity: check.similarity };
}

/** The seed's SafetyGuard.detectLoop, on fuzzball.ratio. */
function reference(history: string[], current: string): { loop: boolean; similarity?: number } {
  for (const previous of history) {
    const similarity = fuzz.ratio(current, previous) / 100;
    if (similarity >= options.loopThreshold) return { loop: true, similarity };
  }
  return { loop: false };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

function time(fn: () => unknown, runs: number): number {
  const samples: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const start = performance.now();
    fn();
    samples.push(performance.now() - start);
  }
  return median(samples);
}

const fmt = (ms: number) => (ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(ms < 10 ? 2 : 1)} ms`);

const rows: string[][] = [];
const failures: string[] = [];
let worst10k = Number.NaN;
const speedups: { bytes: number; ratio: number }[] = [];
let boundMax = 0;
for (const bytes of [1_000, 10_000, 50_000]) {
  for (const scenario of scenarios(bytes)) {
    const a = ours(scenario.history, scenario.current);
    const b = reference(scenario.history, scenario.current);
    if (a.loop !== b.loop || a.similarity !== b.similarity) {
      failures.push(`${bytes} B ${scenario.name}: ours ${JSON.stringify(a)} vs fuzzball ${JSON.stringify(b)}`);
    }
    const sims = scenario.history.map((h) => similarityScore(scenario.current, h));
    const bounds = scenario.history.map((h) => similarityUpperBound(scenario.current, h));
    const oursMs = time(() => ours(scenario.history, scenario.current), bytes >= 50_000 ? 5 : 15);
    const refMs = time(
      () => reference(scenario.history, scenario.current),
      bytes >= 50_000 ? 1 : bytes >= 10_000 ? 3 : 15,
    );
    const speedup = refMs / oursMs;
    if (bytes >= 10_000 && scenario.name !== "looping") speedups.push({ bytes, ratio: speedup });
    if (bytes === 10_000 && scenario.name.startsWith("worst")) worst10k = oursMs;
    if (scenario.name.startsWith("ruled out")) boundMax = Math.max(boundMax, oursMs);
    rows.push([
      `${bytes / 1000} KB`,
      scenario.name,
      a.loop ? `loop (${((a.similarity ?? 0) * 100).toFixed(0)}%)` : "no loop",
      `${Math.min(...sims)}-${Math.max(...sims)}`,
      `${Math.min(...bounds)}-${Math.max(...bounds)}`,
      fmt(oursMs),
      fmt(refMs),
      `${speedup.toFixed(speedup < 10 ? 1 : 0)}x`,
    ]);
  }
}

const header = ["size", "scenario", "decision", "ratios", "bounds", "ours", "fuzzball", "speed-up"];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
const line = (r: string[]) =>
  r.map((c, i) => (i >= 5 ? c.padStart(widths[i] as number) : c.padEnd(widths[i] as number))).join("  ");
console.log("One detectLoop call against a full window of 5 outputs (medians; fuzzball at 50 KB: one run)\n");
console.log(line(header));
console.log("-".repeat(line(header).length));
for (const r of rows) console.log(line(r));
const minSpeedup = Math.min(...speedups.map((s) => s.ratio));
console.log(`\nGoals`);
console.log(`  identical decisions (loop and similarity): ${failures.length === 0 ? "met" : "MISSED"}`);
console.log(`  worst case at 5 x 10 KB <= 80 ms: ${fmt(worst10k)} ${worst10k <= 80 ? "met" : "MISSED"}`);
console.log(
  `  >= 20x faster than fuzzball at 10 KB and above: min ${minSpeedup.toFixed(0)}x ${minSpeedup >= 20 ? "met" : "MISSED"}`,
);
console.log(`  <= 1 ms when the bounds rule pairs out: max ${fmt(boundMax)} ${boundMax <= 1 ? "met" : "MISSED"}`);
if (failures.length) {
  console.error(`\nBENCHMARK FAILED: decisions differ\n${failures.join("\n")}`);
  process.exitCode = 1;
}
