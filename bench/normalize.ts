/**
 * bench/normalize: what comparing normalized results costs (issue 34, item 1). Every result a call returns is
 * recorded with a digest; the rules now compare the digest of the text after `normalizeResult` (timestamps, request
 * ids, durations, execution counters, long ids replaced), and keep the exact digest too when the text changed. For
 * 10 KB results of several kinds (prose without digits, a pytest log, JSON statuses, log lines with timestamps and
 * ids, Python source, a dense worst case where every line is volatile), the table prints µs per result:
 *
 * - `digest`: the exact digest alone, what recording a result cost before;
 * - `normalize`: `normalizeResult` alone, and its throughput;
 * - `record`: what recording costs now (the exact digest, the normalizer, and a second digest when the text changed),
 *   and its ratio to `digest`.
 *
 * Medians of interleaved rounds. No timing is asserted: the process fails only if the normalizer misbehaves (a
 * volatile kind left unchanged, a plain text changed, a second pass changing the first's output).
 *
 * Run: npm run bench:normalize   (-- --quick: fewer rounds, seconds)
 */
import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { normalizeResult } from "../src/core/index.js";
import { resultDigest } from "../src/tool-calls/core/repetition.js";
import { type Figure, machine, median, quick, report } from "./report.js";

const SIZE = 10_000;
const ROUNDS = quick ? 5 : 21;
const PER_ROUND = quick ? 100 : 400;

/** `line(i)` repeated until the text is `SIZE` characters (a flat string, as a tool's output would be). */
function text(line: (i: number) => string): string {
  let out = "";
  for (let i = 0; out.length < SIZE; i += 1) out += line(i);
  return Buffer.from(out.slice(0, SIZE)).toString();
}

const at = (i: number) => new Date(Date.UTC(2025, 0, 2, 10, 0, 0) + i * 1371).toISOString();
const WORDS = "the agent reads the file and writes a patch for the failing test while checking its logs".split(" ");

/** The kinds of results, and whether the normalizer must change them. */
const KINDS: { name: string; text: string; volatile: boolean }[] = [
  { name: "prose, no digits", text: text((i) => `${WORDS[i % WORDS.length]} `), volatile: false },
  {
    name: "pytest log",
    text: text((i) => `tests/test_models.py::TestUser::test_case_${i} PASSED [ ${i % 100}%]\n`),
    volatile: false,
  },
  {
    name: "python source",
    text: text((i) => `def f_${i}(x):\n    return x * ${i % 7} + 1  # item ${i}\n`),
    volatile: false,
  },
  {
    name: "JSON statuses",
    text: text(
      (i) =>
        `${JSON.stringify({ job_id: `j-${i}`, status: "running", progress: i % 100, checked_at: at(i), request_id: randomUUID() })}\n`,
    ),
    volatile: true,
  },
  {
    name: "log lines",
    text: text((i) => `${at(i)} INFO worker-${i % 8} request ${randomUUID()} done in ${i % 90}.${i % 10}s\n`),
    volatile: true,
  },
  {
    name: "dense (every token volatile)",
    text: text(
      (i) => `Out[${i}] 0x7f3a${(i * 7919).toString(16).padStart(8, "0")} took ${i % 9}.${i % 7}ms ${randomUUID()}\n`,
    ),
    volatile: true,
  },
];

/** What recording a result costs now: the exact digest, the normalizer, a second digest when the text changed. */
function record(value: string): string {
  const exact = resultDigest(true, value);
  const normalized = normalizeResult(value);
  return normalized === value ? exact : resultDigest(true, normalized);
}

const CANDIDATES = {
  digest: (value: string) => resultDigest(true, value),
  normalize: normalizeResult,
  record,
} as const;
type Candidate = keyof typeof CANDIDATES;

/** µs per call of each candidate on `value`: medians of interleaved rounds. */
function measure(value: string): Record<Candidate, number> {
  const samples: Record<Candidate, number[]> = { digest: [], normalize: [], record: [] };
  let sink = 0;
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const name of Object.keys(CANDIDATES) as Candidate[]) {
      const fn = CANDIDATES[name];
      const start = performance.now();
      for (let i = 0; i < PER_ROUND; i += 1) sink += fn(value).length;
      samples[name].push(((performance.now() - start) * 1000) / PER_ROUND);
    }
  }
  if (sink === 0) throw new Error("nothing measured");
  return { digest: median(samples.digest), normalize: median(samples.normalize), record: median(samples.record) };
}

function check(kind: (typeof KINDS)[number]): void {
  const once = normalizeResult(kind.text);
  if ((once !== kind.text) !== kind.volatile) {
    throw new Error(`${kind.name}: the normalizer ${kind.volatile ? "left it as it was" : "changed it"}`);
  }
  if (normalizeResult(once) !== once) throw new Error(`${kind.name}: a second pass changed the output`);
}

function main(): void {
  for (const kind of KINDS) check(kind);
  // Warm up every path before measuring.
  for (let i = 0; i < (quick ? 200 : 2000); i += 1) for (const kind of KINDS) record(kind.text);
  const rows = KINDS.map((kind) => ({ kind, ...measure(kind.text) }));
  console.log(`normalizeResult on ${SIZE.toLocaleString("en-US")}-character results, ${machine()}`);
  console.log("µs per result, medians of interleaved rounds; record = exact digest + normalizer (+ a second digest)\n");
  const header = ["result", "digest µs", "normalize µs", "MB/s", "record µs", "record / digest"];
  const table = rows.map((r) => [
    r.kind.name,
    r.digest.toFixed(1),
    r.normalize.toFixed(1),
    (SIZE / r.normalize).toFixed(0),
    r.record.toFixed(1),
    `${(r.record / r.digest).toFixed(1)}x`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => (row[i] as string).length)));
  const line = (row: string[]) =>
    row.map((c, i) => (i === 0 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join("  ");
  console.log([line(header), "-".repeat(line(header).length), ...table.map(line)].join("\n"));
  const worst = rows.reduce((a, b) => (b.normalize > a.normalize ? b : a));
  const figures: Figure[] = [
    {
      bench: "normalize",
      figure: `normalizeResult, 10 KB result, slowest kind (${worst.kind.name})`,
      ours: `${worst.normalize.toFixed(0)} µs`,
      anchor: `${worst.digest.toFixed(0)} µs digest`,
      ratio: `${(worst.record / worst.digest).toFixed(1)}x`,
      goal: "",
      met: null,
    },
  ];
  report(figures);
}

main();
