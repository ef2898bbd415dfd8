/**
 * `npm run eval`: replays the recorded runs in data/trajectories/ through our defaults and through
 * the peer policies of the data set's README, side by side, per source and overall: waste caught / harmful block
 * rate (the data set's ground truth). Peers are small functions over the recorded calls, labelled as the README
 * labels them; "seed 000" is our engine with seed 000's options. Also: the result characters not sent to the model
 * per policy, the calls a stop saved in runs with 5 or more identical consecutive calls (and whether each such run
 * is stopped within 4 calls of the loop's start), and how often the text loop detector (`replayLoopDetector`,
 * default options) fires over the recorded turns, in runs whose task succeeded (meta reward 1 or
 * swebench_resolved) or failed.
 *
 *   npm run eval [-- --data PATH] [-- --json] [-- --quick]   (--quick: every 10th run, for CI; not the figures)
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { isReadOnlyCall } from "../src/common/identity/classify.js";
import { type ReplayOptions, type ReplayRun, readRuns, replayGuards } from "../src/replay/index.js";
import { type RecordedCall, recordedCalls, replayLoopDetector } from "../src/replay/replay.js";
import { quick, report } from "./report.js";

/** `cache`: answered from the result cache (not run; its earlier result sent again). */
type Verdict = "allow" | "block" | "stop" | "cache";

/** A peer policy: decides each call before it runs, seeing the results of the calls it allowed. */
interface Policy {
  label: string;
  /** Returns a decider for one run. */
  start(): (call: RecordedCall) => Verdict;
}

/** Decides on attempted calls (blocked ones included): `observe` sees allowed calls with their result. */
function policy(
  label: string,
  make: () => { decide(c: RecordedCall): boolean; allowed?(c: RecordedCall): void; blocked?(c: RecordedCall): void },
): Policy {
  return {
    label,
    start() {
      const p = make();
      return (c) => {
        if (p.decide(c)) {
          p.blocked?.(c);
          return "block";
        }
        p.allowed?.(c);
        return "allow";
      };
    },
  };
}

const outcome = (c: RecordedCall) => `${c.result.ok}\u0000${c.result.text}`;

const PEERS: Policy[] = [
  policy("identical call 4th time within last 5 calls (threshold 3, window 5)", () => {
    const seen: string[] = [];
    return {
      decide: (c) => seen.slice(-5).filter((s) => s === c.signature).length >= 3,
      allowed: (c) => seen.push(c.signature),
      blocked: (c) => seen.push(c.signature),
    };
  }),
  policy("4th identical consecutive call (limit 3)", () => {
    let previous: string | undefined;
    let streak = 0;
    return {
      decide: (c) => {
        streak = c.signature === previous ? streak + 1 : 1;
        previous = c.signature;
        if (streak > 3) {
          streak = 0;
          return true;
        }
        return false;
      },
    };
  }),
  policy("5 identical consecutive calls", () => {
    const seen: string[] = [];
    return {
      decide: (c) => seen.length >= 4 && seen.slice(-4).every((s) => s === c.signature),
      allowed: (c) => seen.push(c.signature),
      blocked: (c) => seen.push(c.signature),
    };
  }),
  policy("4 equal (action, observation) pairs", () => {
    const seen: [string, string][] = [];
    return {
      decide: (c) => {
        const last = seen.slice(-3);
        return last.length === 3 && last.every(([s, o]) => s === c.signature && o === last[0]?.[1]);
      },
      allowed: (c) => seen.push([c.signature, outcome(c)]),
    };
  }),
  policy("any earlier identical call", () => {
    const seen = new Set<string>();
    return {
      decide: (c) => seen.has(c.signature),
      allowed: (c) => seen.add(c.signature),
      blocked: (c) => seen.add(c.signature),
    };
  }),
  policy("identical call after its last 2 results were equal", () => {
    const results = new Map<string, string[]>();
    return {
      decide: (c) => {
        const r = results.get(c.signature) ?? [];
        return r.length >= 2 && r.at(-1) === r.at(-2);
      },
      allowed: (c) => results.set(c.signature, [...(results.get(c.signature) ?? []), outcome(c)]),
    };
  }),
];

interface Score {
  waste: number;
  wasteCaught: number;
  notRun: number;
  progressBlocked: number;
  /** Characters of recorded results not sent to the model (calls that did not run). */
  charsNotSent: number;
  /** Calls that ran whose unchanged result was answered with a short note (result dedupe), and the characters saved. */
  deduped: number;
  charsDeduped: number;
  /** Deduped calls the ground truth calls progress (their result differs from the most recent identical call's). */
  dedupedProgress: number;
  /** Waste calls answered from the result cache: not run, but their (earlier) result sent again. */
  servedWaste: number;
}

const empty = (): Score => ({
  waste: 0,
  wasteCaught: 0,
  notRun: 0,
  progressBlocked: 0,
  charsNotSent: 0,
  deduped: 0,
  charsDeduped: 0,
  dedupedProgress: 0,
  servedWaste: 0,
});

/** A policy's decisions for a run's recorded calls, and (ours) the characters result dedupe saved per call. */
interface Decided {
  verdicts: Verdict[];
  dedupedChars?: number[];
  /** Which assistant step each call belongs to (ours: to count the model turns a stop saved). */
  steps?: number[];
}

function add(score: Score, calls: RecordedCall[], { verdicts, dedupedChars }: Decided): void {
  for (const [i, c] of calls.entries()) {
    const notRun = verdicts[i] !== "allow";
    if (c.waste) score.waste += 1;
    const saved = dedupedChars?.[i] ?? 0;
    if (saved > 0) {
      score.deduped += 1;
      score.charsDeduped += saved;
      if (!c.waste) score.dedupedProgress += 1;
    }
    if (!notRun) continue;
    score.notRun += 1;
    // A served call's (earlier) result is sent again.
    if (verdicts[i] !== "cache") score.charsNotSent += c.result.text.length;
    else if (c.waste) score.servedWaste += 1;
    if (c.waste) score.wasteCaught += 1;
    else score.progressBlocked += 1;
  }
}

function cell(s: Score): string {
  const caught = s.waste === 0 ? 0 : s.wasteCaught / s.waste;
  const harm = s.notRun === 0 ? 0 : s.progressBlocked / s.notRun;
  return `${(100 * caught).toFixed(1).padStart(5)}% / ${(100 * harm).toFixed(1).padStart(4)}%`;
}

/** Our guards: the decisions of `replayGuards` for the recorded calls, in order, and what result dedupe saved. */
function ours(run: ReplayRun, options: ReplayOptions): Decided {
  const decisions = replayGuards(run, options).decisions.filter((d) => d.recorded);
  return {
    verdicts: decisions.map((d) =>
      d.action === "allow" || d.action === "stop" || d.action === "cache" ? d.action : "block",
    ),
    dedupedChars: decisions.map((d) => (d.deduped === true ? d.resultChars - d.content.length : 0)),
    steps: decisions.map((d) => d.step),
  };
}

/**
 * The run's tools, those read-only by their name (`get_`, `search_`, `list_`, …; not a shell) with both MCP hints,
 * as a user who marks every such tool gives them: their repeats are served from the result cache.
 */
function hintedReadOnlyTools(run: ReplayRun): ReplayOptions["agentTools"] {
  const names = new Set<string>();
  for (const step of run.steps) {
    if (step.role === "assistant") for (const c of step.tool_calls ?? []) names.add(c.name);
  }
  return [...names].map((name) =>
    isReadOnlyCall(name, {}) ? { name, metadata: { readOnlyHint: true, idempotentHint: true } } : name,
  );
}

/**
 * Where 5 identical consecutive calls start (-1: nowhere); `inOneRun` asks that no person's message comes between
 * them (a call repeated once per user turn is not a loop of one run: see the `runBoundary` option).
 */
function loopStart(calls: RecordedCall[], inOneRun: boolean): number {
  for (let i = 0; i + 4 < calls.length; i += 1) {
    const same = (k: number) =>
      calls[i + k]?.signature === calls[i]?.signature && (!inOneRun || calls[i + k]?.run === calls[i]?.run);
    if ([1, 2, 3, 4].every(same)) return i;
  }
  return -1;
}

function main(): void {
  const args = process.argv.slice(2);
  const dataArg = args.indexOf("--data");
  const path =
    dataArg >= 0
      ? (args[dataArg + 1] as string)
      : join(import.meta.dirname, "..", "data", "trajectories", "trajectories.jsonl.gz");
  if (!existsSync(path)) {
    console.error(`eval: no data at ${path} (pass --data PATH)`);
    process.exitCode = 1;
    return;
  }
  const text = gunzipSync(readFileSync(path)).toString("utf8");
  const read = readRuns(text, { file: "trajectories.jsonl" });
  const { errors } = read;
  const runs = quick ? read.runs.filter((_, i) => i % 10 === 0) : read.runs;
  if (errors.length > 0) console.error(errors.map((e) => e.message).join("\n"));
  const sources = [...new Set(runs.map((r) => r.source ?? "?"))];

  // Each run's recorded calls and ground truth, read once for every policy.
  const recorded = new Map(runs.map((run) => [run, recordedCalls(run)]));
  const rows: {
    label: string;
    scores: Map<string, Score>;
    verdicts: Map<ReplayRun, Verdict[]>;
    steps: Map<ReplayRun, number[]>;
  }[] = [];
  const evaluate = (label: string, decide: (run: ReplayRun, calls: RecordedCall[]) => Decided) => {
    const scores = new Map<string, Score>([["all", empty()]]);
    const verdictsOf = new Map<ReplayRun, Verdict[]>();
    const stepsOf = new Map<ReplayRun, number[]>();
    for (const run of runs) {
      const calls = recorded.get(run) as RecordedCall[];
      const decided = decide(run, calls);
      verdictsOf.set(run, decided.verdicts);
      if (decided.steps !== undefined) stepsOf.set(run, decided.steps);
      for (const key of ["all", run.source ?? "?"]) {
        if (!scores.has(key)) scores.set(key, empty());
        add(scores.get(key) as Score, calls, decided);
      }
    }
    rows.push({ label, scores, verdicts: verdictsOf, steps: stepsOf });
    return verdictsOf;
  };

  const started = performance.now();
  const defaults = evaluate("langgraph-guards defaults (GuardedToolNode + escalationHook)", (run) => ours(run, {}));
  evaluate("langgraph-guards defaults, root /testbed for mini-swe", (run) =>
    ours(run, run.source?.startsWith("mini-swe") ? { rules: { root: "/testbed" } } : {}),
  );
  const ms = performance.now() - started;
  evaluate("langgraph-guards, blocks only (escalation levels 3-4 never reached)", (run) =>
    ours(run, { escalation: { levelStrikes: [1, 2, Number.MAX_SAFE_INTEGER - 1, Number.MAX_SAFE_INTEGER] } }),
  );
  evaluate('langgraph-guards defaults with acrossRuns: "keep"', (run) => ours(run, { memory: { acrossRuns: "keep" } }));
  // The result cache as a user who marks every read-only tool with MCP's readOnlyHint and idempotentHint gets it.
  evaluate("defaults, every read-only tool hinted readOnly + idempotent (cache)", (run) =>
    ours(run, { agentTools: hintedReadOnlyTools(run) }),
  );
  evaluate('langgraph-guards defaults with runBoundary: "none" (one run)', (run) =>
    ours(run, { memory: { runBoundary: "none" } }),
  );
  evaluate("langgraph-guards defaults with countChangedResults: true", (run) =>
    ours(run, { rules: { countChangedResults: true } }),
  );
  evaluate("langgraph-guards defaults with countAcrossMutations: true", (run) =>
    ours(run, { rules: { countAcrossMutations: true } }),
  );
  // The frontier: identical calls counted across a whole run (window 100) and across changes, blocked at the 3rd
  // or 4th whose earlier results were equal — more waste caught, at a harm the defaults do not accept.
  evaluate("defaults with windowSize 100, countAcrossMutations: true, threshold 2", (run) =>
    ours(run, { windowSize: 100, rules: { countAcrossMutations: true }, repetitionThreshold: 2 }),
  );
  evaluate("defaults with windowSize 100, countAcrossMutations: true, threshold 3", (run) =>
    ours(run, { windowSize: 100, rules: { countAcrossMutations: true }, repetitionThreshold: 3 }),
  );
  evaluate('... threshold 2, with acrossRuns: "keep", runBoundary: "none"', (run) =>
    ours(run, {
      windowSize: 100,
      rules: { countAcrossMutations: true },
      repetitionThreshold: 2,
      memory: { acrossRuns: "keep", runBoundary: "none" },
    }),
  );
  evaluate("seed 000 options on our engine (counting as written, no escalation)", (run) =>
    ours(run, {
      rules: { countChangedResults: true, countAcrossMutations: true },
      escalation: { enabled: false },
      hook: false,
    }),
  );
  for (const peer of PEERS) {
    evaluate(`peer: ${peer.label}`, (_run, calls) => {
      const decide = peer.start();
      return { verdicts: calls.map(decide) };
    });
  }

  // Runs with 5+ identical consecutive calls in one run: stopped (level 3 interrupt or level 4 end) within 4 calls?
  // Calls repeated once per person's message are counted apart: each run holds one of them, so no run loops.
  let loops = 0;
  let stoppedInTime = 0;
  let acrossRuns = 0;
  const late: string[] = [];
  for (const run of runs) {
    const calls = recorded.get(run) as RecordedCall[];
    const start = loopStart(calls, true);
    if (start < 0) {
      if (loopStart(calls, false) >= 0) acrossRuns += 1;
      continue;
    }
    loops += 1;
    const verdicts = defaults.get(run) as Verdict[];
    const stop = verdicts.findIndex((v, i) => v === "stop" && i >= start);
    if (stop >= 0 && stop <= start + 4) stoppedInTime += 1;
    else late.push(`${run.id} (loop at call ${start}, stop at ${stop})`);
  }

  // Saved in stuck runs: the calls of those runs a stop kept from running, and the model turns they were made in
  // (null: the policy never stops).
  const stuck = runs.filter((run) => loopStart(recorded.get(run) as RecordedCall[], true) >= 0);
  const stuckSaved = new Map(
    rows.map((r) => {
      const stops = [...r.verdicts.values()].some((v) => v.includes("stop"));
      let calls = 0;
      let turns = 0;
      for (const run of stuck) {
        const verdicts = r.verdicts.get(run) ?? [];
        const steps = r.steps.get(run) ?? [];
        calls += verdicts.filter((v) => v === "stop").length;
        turns += new Set(steps.filter((_, i) => verdicts[i] === "stop")).size;
      }
      return [r.label, stops ? { calls, turns } : null];
    }),
  );

  // The text loop detector (and safety limits, default options) over the recorded assistant turns: observe only.
  const quiet = { warn: () => undefined };
  const success = (run: ReplayRun): boolean | undefined => {
    const m = run.meta ?? {};
    if (typeof m.reward === "number") return m.reward >= 1;
    if (typeof m.swebench_resolved === "boolean") return m.swebench_resolved;
    return undefined;
  };
  const detector = {
    fired: 0,
    byKind: {} as Record<string, number>,
    bySource: {} as Record<string, number>,
    turns: [] as number[],
    succeeded: 0,
    failed: 0,
    unknown: 0,
    runsSucceeded: runs.filter((r) => success(r) === true).length,
    runsFailed: runs.filter((r) => success(r) === false).length,
    stuckRuns: stuck.length,
    stuckFired: 0,
    callsAfter: 0,
  };
  for (const run of runs) {
    const r = replayLoopDetector(run, { logger: quiet });
    if (r.stop === null) continue;
    detector.fired += 1;
    detector.byKind[r.stop.kind] = (detector.byKind[r.stop.kind] ?? 0) + 1;
    const source = run.source ?? "?";
    detector.bySource[source] = (detector.bySource[source] ?? 0) + 1;
    detector.turns.push(r.turn ?? 0);
    detector.callsAfter += r.callsAfter;
    const ok = success(run);
    if (ok === true) detector.succeeded += 1;
    else if (ok === false) detector.failed += 1;
    else detector.unknown += 1;
    if (stuck.includes(run)) detector.stuckFired += 1;
  }
  detector.turns.sort((a, b) => a - b);

  if (args.includes("--json")) {
    const json = Object.fromEntries(rows.map((r) => [r.label, Object.fromEntries(r.scores)]));
    const stuckCallsSaved = Object.fromEntries(stuckSaved);
    console.log(
      JSON.stringify(
        {
          runs: runs.length,
          rows: json,
          loops,
          stoppedInTime,
          acrossRuns,
          late,
          stuckCallsSaved,
          loopDetector: detector,
        },
        null,
        2,
      ),
    );
    return;
  }
  const total = rows[0]?.scores.get("all") as Score;
  console.log(
    `langgraph-guards eval: ${runs.length} runs, ${total.waste} waste calls (ground truth: data/trajectories/README.md)`,
  );
  console.log("cells: waste caught / harmful block rate (calls not run = blocked, cached or stopped)\n");
  const columns = ["all", ...sources];
  const width = Math.max(...rows.map((r) => r.label.length));
  console.log(["policy".padEnd(width), ...columns.map((c) => c.slice(0, 16).padStart(16))].join("  "));
  console.log(["-".repeat(width), ...columns.map(() => "-".repeat(16))].join("  "));
  for (const row of rows) {
    console.log(
      [row.label.padEnd(width), ...columns.map((c) => cell(row.scores.get(c) ?? empty()).padStart(16))].join("  "),
    );
  }
  console.log(
    `\nresult characters not sent to the model (thousands): of calls not run (their recorded result), by result dedupe (result minus note), in all; per source: both | in the ${stuck.length} stuck runs, the calls / model turns a stop kept from running (n/a: never stops) | waste calls whose result was not sent again (not run or deduped) / all waste calls\n`,
  );
  const heads = [
    "not run",
    "deduped",
    "all",
    ...sources.map((c) => c.slice(0, 12)),
    "stuck calls/turns",
    "waste not re-sent",
  ];
  console.log(["policy".padEnd(width), ...heads.map((h) => h.padStart(12))].join("  "));
  console.log(["-".repeat(width), ...heads.map(() => "-".repeat(12))].join("  "));
  const k = (n: number) => `${(n / 1e3).toFixed(1)}k`;
  for (const row of rows) {
    const all = row.scores.get("all") ?? empty();
    const perSource = sources.map((c) => {
      const sc = row.scores.get(c) ?? empty();
      return k(sc.charsNotSent + sc.charsDeduped);
    });
    const saved = stuckSaved.get(row.label);
    const cells = [
      k(all.charsNotSent),
      k(all.charsDeduped),
      k(all.charsNotSent + all.charsDeduped),
      ...perSource,
      saved ? `${saved.calls}/${saved.turns}` : "n/a",
      // Waste calls whose result the model was not sent again: not run (and not served), or answered with a note.
      `${((100 * (all.wasteCaught - all.servedWaste + all.deduped - all.dedupedProgress)) / Math.max(1, all.waste)).toFixed(1)}%`,
    ];
    console.log([row.label.padEnd(width), ...cells.map((c) => c.padStart(12))].join("  "));
  }
  const median = detector.turns[Math.floor(detector.turns.length / 2)] ?? 0;
  const kinds = Object.entries(detector.byKind)
    .map(([k, n]) => `${k} ${n}`)
    .join(", ");
  const bySource = Object.entries(detector.bySource)
    .map(([k, n]) => `${k} ${n}`)
    .join(", ");
  console.log(
    `\nloop detector (stepLoopGuard, default options, a session per person's message) over the recorded turns: fires in ${detector.fired} of ${runs.length} runs (${kinds}; ${bySource})`,
  );
  console.log(
    `  at assistant turn: min ${detector.turns[0] ?? 0}, median ${median}, max ${detector.turns.at(-1) ?? 0}; recorded calls from the stop to the next person's message: ${detector.callsAfter}`,
  );
  console.log(
    `  in runs whose task succeeded (false alarms): ${detector.succeeded} of ${detector.runsSucceeded}; failed: ${detector.failed} of ${detector.runsFailed}; outcome unknown: ${detector.unknown}; stuck runs caught: ${detector.stuckFired} of ${detector.stuckRuns}`,
  );
  console.log(
    `\nruns with 5+ identical consecutive calls in one run: ${loops}; stopped within 4 calls of the loop's start: ${stoppedInTime}`,
  );
  console.log(
    `runs whose 5+ identical consecutive calls span person's messages (one per run: not a loop of a run): ${acrossRuns}`,
  );
  for (const l of late) console.log(`  not in time: ${l}`);
  console.log(`replaying our defaults over all runs took ${ms.toFixed(0)} ms`);
  const all = rows[0]?.scores.get("all") as Score;
  const calls = [...recorded.values()].reduce((n, c) => n + c.length, 0);
  const rate = (n: number, d: number) => (d === 0 ? 0 : (100 * n) / d);
  report([
    {
      bench: "eval",
      figure: `defaults: waste caught / harmful blocks, ${runs.length} recorded runs${quick ? " (every 10th)" : ""}`,
      ours: `${rate(all.wasteCaught, all.waste).toFixed(1)}% / ${rate(all.progressBlocked, all.notRun).toFixed(1)}%`,
      anchor: "",
      ratio: "",
      goal: "",
      met: null,
    },
    {
      bench: "eval",
      figure: `replay of the defaults, ${calls.toLocaleString("en-US")} recorded calls`,
      ours: `${ms.toFixed(0)} ms`,
      anchor: "",
      ratio: "",
      goal: "",
      met: null,
    },
  ]);
}

main();
