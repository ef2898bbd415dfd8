/**
 * bench/similarity: one `detectLoop` call against a full window of 5 outputs of 1 KB, 10 KB and 50 KB, ours
 * (exact bounds + a bit-parallel LCS restricted to the band a passing pair stays in, with a cut-off) vs the seed's
 * loop over `fuzzball.ratio`, side by side in one run. Scenarios: unrelated outputs, a loop (the new output repeats
 * the oldest), the worst case (five outputs 0.87–0.89 similar to the new one, none a loop: every pair must be
 * decided close to the threshold), and outputs the histogram bound rules out. Decisions (loop or not, and the
 * similarity of a loop) must be identical; the table prints medians and the speed-up.
 *
 * The same scenarios at 1 KB and 10 KB with `turns.scorer` "token_sort_ratio" and "partial_ratio" (ours, without
 * fuzzball, vs the loop over fuzzball's `token_sort_ratio` / `partial_ratio`). fuzzball's partial_ratio scores a
 * window per matching block with its O(n·m) Levenshtein: at 10 KB that is minutes a pair, so it runs at 1 KB only
 * and at 10 KB the decisions are checked against the loop over our exact `partialRatio` (tested equal to fuzzball).
 *
 * Run: npm run bench:similarity   (fuzzball at 50 KB takes ~10 s a pair, so that column runs once: ~4 minutes)
 *      npm run bench:similarity -- --quick   (1 KB and 10 KB, fewer runs, fuzzball at 1 KB only: seconds; at 10 KB
 *      the decisions are checked against the loop over our exact scores, themselves tested equal to fuzzball's)
 */
import { performance } from "node:perf_hooks";
import * as fuzz from "fuzzball";
import { partialRatio, tokenSortRatio } from "../src/common/similarity/scorers.js";
import { similarityScore, similarityUpperBound } from "../src/common/similarity/similarity.js";
import { detectLoopIn, emptyLoopState, resolveSafetyOptions } from "../src/core/index.js";
import type { LoopState } from "../src/index.js";
import { rng } from "../test/support/random.js";
import { type Figure, fmtMs, fmtRatio, median, quick, report } from "./report.js";

const WORDS = (
  "the agent reads the file and then writes a patch for the failing test while checking the logs of the " +
  "service before it retries the request with a new token and reports the result to the user in a short summary"
).split(" ");

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

const UNRELATED = "unrelated";
const WORST = "worst case (0.87-0.89)";

function scenarios(bytes: number): Scenario[] {
  const current = prose(bytes, 1);
  return [
    { name: UNRELATED, history: [2, 3, 4, 5, 6].map((s) => prose(bytes, s)), current },
    {
      name: "looping",
      history: [swapped(current, 2, 9), ...[3, 4, 5, 6].map((s) => prose(bytes, s))],
      current,
    },
    { name: WORST, history: [11, 12, 13, 14, 15].map((s) => nearThreshold(current, s)), current },
    {
      name: "ruled out by the bound",
      history: [2, 3, 4, 5, 6].map((s) => prose(Math.floor(bytes / 2), s)),
      current,
    },
  ];
}

/** A built-in scorer: its name in `turns.scorer`, fuzzball's function, our exact score, and where fuzzball runs. */
interface ScorerCase {
  name: "ratio" | "token_sort_ratio" | "partial_ratio";
  fuzzball: (a: string, b: string) => number;
  exact: (a: string, b: string) => number;
  /** The sizes measured. */
  sizes: number[];
  /** fuzzball runs up to this size (bytes); quick mode: 1 KB at most. */
  fuzzballUpTo: number;
}

const SCORERS: ScorerCase[] = [
  {
    name: "ratio",
    fuzzball: fuzz.ratio,
    exact: similarityScore,
    sizes: quick ? [1_000, 10_000] : [1_000, 10_000, 50_000],
    fuzzballUpTo: 50_000,
  },
  {
    name: "token_sort_ratio",
    fuzzball: fuzz.token_sort_ratio,
    exact: (a, b) => Math.round(tokenSortRatio(a, b) * 100),
    sizes: [1_000, 10_000],
    fuzzballUpTo: 10_000,
  },
  {
    name: "partial_ratio",
    fuzzball: fuzz.partial_ratio,
    exact: (a, b) => Math.round(partialRatio(a, b) * 100),
    sizes: [1_000, 10_000],
    fuzzballUpTo: 1_000,
  },
];

const quiet = { warn: () => {} };
const optionsOf = new Map(SCORERS.map((s) => [s.name, resolveSafetyOptions({ logger: quiet, scorer: s.name })]));
const options = optionsOf.get("ratio") ?? resolveSafetyOptions({ logger: quiet });

interface Decision {
  loop: boolean;
  similarity?: number | undefined;
}

function ours(history: string[], current: string, scorer: ScorerCase["name"] = "ratio"): Decision {
  const state: LoopState = { ...emptyLoopState(), recentOutputs: history };
  const check = detectLoopIn(state, current, optionsOf.get(scorer) ?? options);
  return { loop: check.loop, similarity: check.similarity };
}

/** The seed's SafetyGuard.detectLoop over a scorer (fuzzball.ratio / 100 in the seed). */
function loopOver(score: (a: string, b: string) => number, history: string[], current: string): Decision {
  for (const previous of history) {
    const similarity = score(current, previous) / 100;
    if (similarity >= options.loopThreshold) return { loop: true, similarity };
  }
  return { loop: false };
}

/** The median time of `runs` calls of `fn` (ms) and the last call's result. */
function timed<T>(fn: () => T, runs: number): { ms: number; result: T } {
  let start = performance.now();
  let result = fn();
  const samples = [performance.now() - start];
  for (let i = 1; i < runs; i += 1) {
    start = performance.now();
    result = fn();
    samples.push(performance.now() - start);
  }
  return { ms: median(samples), result };
}

/** ours / anchor; "0.0024x" rather than fmtRatio's "0.00x" when ours is hundreds of times faster. */
const ratioOf = (ours: number, anchor: number) =>
  ours / anchor >= 0.01 ? fmtRatio(ours / anchor) : `${(ours / anchor).toPrecision(2)}x`;

interface Measured {
  bytes: number;
  scorer: ScorerCase["name"];
  scenario: string;
  ours: number;
  fuzzball: number | undefined;
}

const sizes = [...new Set(SCORERS.flatMap((s) => s.sizes))];
const bySize = new Map(sizes.map((bytes) => [bytes, scenarios(bytes)]));
// Warm-up: both sides' hot loops are optimized by V8 after a few calls (a guard in a long-running agent process
// runs warm); without it the first scenario measured pays for the compilation.
for (const scenario of bySize.get(1_000) ?? []) {
  for (const scorer of SCORERS) {
    for (let i = 0; i < 10; i += 1) ours(scenario.history, scenario.current, scorer.name);
    for (let i = 0; i < 2; i += 1) loopOver(scorer.fuzzball, scenario.history, scenario.current);
  }
}
const rows: string[][] = [];
const measured: Measured[] = [];
const failures: string[] = [];
for (const scorer of SCORERS) {
  for (const bytes of scorer.sizes) {
    // fuzzball is O(n·m) (partial_ratio: per matching block): in quick mode it runs at 1 KB only.
    const withFuzzball = bytes <= (quick ? Math.min(1_000, scorer.fuzzballUpTo) : scorer.fuzzballUpTo);
    for (const scenario of bySize.get(bytes) ?? []) {
      const oursRuns = quick ? 5 : bytes >= 50_000 ? 5 : 15;
      const a = timed(() => ours(scenario.history, scenario.current, scorer.name), oursRuns);
      const fuzzRuns = bytes >= 10_000 || scorer.name === "partial_ratio" ? (quick ? 1 : 3) : quick ? 5 : 15;
      const reference = withFuzzball
        ? timed(() => loopOver(scorer.fuzzball, scenario.history, scenario.current), bytes >= 50_000 ? 1 : fuzzRuns)
        : undefined;
      const expected = reference?.result ?? loopOver(scorer.exact, scenario.history, scenario.current);
      if (a.result.loop !== expected.loop || a.result.similarity !== expected.similarity) {
        failures.push(
          `${bytes} B ${scorer.name} ${scenario.name}: ours ${JSON.stringify(a.result)} vs ` +
            `${reference ? "fuzzball" : "our exact score"} ${JSON.stringify(expected)}`,
        );
      }
      measured.push({ bytes, scorer: scorer.name, scenario: scenario.name, ours: a.ms, fuzzball: reference?.ms });
      const sims = scenario.history.map((h) => scorer.exact(scenario.current, h));
      const bounds = scenario.history.map((h) => similarityUpperBound(scenario.current, h));
      rows.push([
        `${bytes / 1000} KB`,
        scorer.name,
        scenario.name,
        a.result.loop ? `loop (${((a.result.similarity ?? 0) * 100).toFixed(0)}%)` : "no loop",
        `${Math.min(...sims)}-${Math.max(...sims)}`,
        scorer.name === "ratio" ? `${Math.min(...bounds)}-${Math.max(...bounds)}` : "",
        fmtMs(a.ms),
        reference ? fmtMs(reference.ms) : "skipped",
        reference ? `${(reference.ms / a.ms).toFixed(reference.ms / a.ms < 10 ? 1 : 0)}x` : "",
      ]);
    }
  }
}

const header = ["size", "scorer", "scenario", "decision", "scores", "bounds", "ours", "fuzzball", "speed-up"];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
const line = (r: string[]) =>
  r.map((c, i) => (i >= 6 ? c.padStart(widths[i] as number) : c.padEnd(widths[i] as number))).join("  ");
console.log(
  `One detectLoop call against a full window of 5 outputs, threshold ${options.loopThreshold} ` +
    `(medians; fuzzball at 50 KB: one run; partial_ratio: fuzzball at 1 KB only` +
    `${quick ? "; quick: fuzzball at 1 KB only" : ""}; bounds: ratio's histogram bound)\n`,
);
console.log(line(header));
console.log("-".repeat(line(header).length));
for (const r of rows) console.log(line(r));

function figure(
  bytes: number,
  scenario: string,
  name: string,
  goalMs: number,
  scorer: ScorerCase["name"] = "ratio",
): Figure | undefined {
  const m = measured.find((x) => x.bytes === bytes && x.scenario === scenario && x.scorer === scorer);
  if (m === undefined) return undefined;
  return {
    bench: "similarity",
    figure: name,
    ours: fmtMs(m.ours),
    anchor: m.fuzzball === undefined ? "" : `${fmtMs(m.fuzzball)} fuzzball`,
    ratio: m.fuzzball === undefined ? "" : ratioOf(m.ours, m.fuzzball),
    goal: `<= ${goalMs} ms`,
    met: m.ours <= goalMs,
  };
}

report(
  [
    figure(10_000, WORST, "detectLoop 5 x 10 KB worst case", 20),
    figure(10_000, UNRELATED, "detectLoop 5 x 10 KB unrelated", 10),
    figure(50_000, WORST, "detectLoop 5 x 50 KB worst case", 400),
    figure(10_000, WORST, "token_sort_ratio: detectLoop 5 x 10 KB worst case", 60, "token_sort_ratio"),
    figure(1_000, WORST, "partial_ratio: detectLoop 5 x 1 KB worst case", 20, "partial_ratio"),
    figure(10_000, WORST, "partial_ratio: detectLoop 5 x 10 KB worst case", 1_000, "partial_ratio"),
    {
      bench: "similarity",
      figure: `decisions (loop, similarity), ${measured.length} detectLoop calls`,
      ours: failures.length === 0 ? "identical" : `${failures.length} differ`,
      anchor: quick ? "fuzzball 1 KB, exact scores 10 KB" : "fuzzball (partial_ratio 10 KB: exact score)",
      ratio: "",
      goal: "identical",
      met: failures.length === 0,
    },
  ].filter((f): f is Figure => f !== undefined),
);
if (failures.length) {
  console.error(`\nBENCHMARK FAILED: decisions differ\n${failures.join("\n")}`);
  process.exitCode = 1;
}
