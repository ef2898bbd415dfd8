#!/usr/bin/env node
/** The `langgraph-guards replay FILE...` command (see USAGE). */
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { parseArgs } from "node:util";
import { GuardOptionsError } from "../common/options.js";
import type { ReplayFormat } from "./formats.js";
import { REPLAY_INPUT_CAPS, type ReadRunsFromFileOptions, readItems } from "./input.js";
import type { InputItem } from "./lines.js";
import { guardReplayer, type ReplayOptions, type ReplayResult, type ReplayRun } from "./replay.js";
import { SUMMARY_LEGEND, summaryTable } from "./report.js";
import {
  BATCH_RUNS,
  type BatchOutcome,
  defaultThreads,
  noteProblem,
  type Problem,
  type ProblemList,
  ReplayThreads,
  type RunReport,
  replayBatch,
} from "./threads.js";
import { addInto, emptyTotals, type ReplayTotals, rates } from "./totals.js";

const USAGE = `Usage: langgraph-guards replay FILE... [options]

Replays recorded agent runs through the guards (the same decisions GuardedToolNode and the escalation hook make)
and prints what they would have blocked, the waste they catch and the progress they would have blocked.

FILE: JSON or JSON Lines (.gz too): runs in the normalized format ({ id, steps }), LangChain messages (BaseMessage
JSON, stored messages, or an object with \`messages\`), or OpenAI chat messages with tool_calls. Only regular files
are read (a device such as /dev/zero, a FIFO, a directory, or a symlink to one is refused). JSON Lines is read a
line at a time; a file that is one JSON document is read whole.

Options:
  --format F         auto (default), jsonl, langchain or openai
  --options FILE     guard options as JSON (the GuardedToolNode options, plus "hook": false to leave out the
                     escalation hook); "acknowledgmentPatterns"/"retryPatterns" are regular-expression strings
  --json             print the result as JSON
  --detail           also print each run: its calls the guards would not have run
  --lenient          accept incomplete input as warnings (exit 0): tool calls without a result in LangChain or
                     OpenAI messages, and a truncated or damaged .gz file (its complete lines are read)
  --max-bytes N      the most text read from one file, after gunzip (default 1g); the rest is not read
  --max-line-bytes N the longest line, one run of JSON Lines (default 64m); a longer one is skipped
  --max-document-bytes N
                     the largest file that is one JSON document, not JSON Lines (default 128m)
                     (sizes in bytes, or with k, m, g: powers of 1024; a cap that is hit is an error, exit 1)
  --threads N        worker threads that replay the runs of a large file while this one reads it (default: one
                     per core; 0: all on one thread); the report is the same
  --no-progress      no progress bar
  -h, --help         this text`;

/** Exit codes: 0 all read, 1 some input could not be read or is incomplete (unless `--lenient`), 2 usage. */
class UsageError extends Error {}

function loadOptions(file: string | undefined): ReplayOptions {
  if (file === undefined) return {};
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (e) {
    throw new UsageError(`--options ${file}: ${(e as Error).message}`);
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new UsageError(`--options ${file}: expected a JSON object`);
  }
  const options = raw as Record<string, unknown>;
  const escalation = options.escalation as Record<string, unknown> | undefined;
  if (escalation && typeof escalation === "object") {
    for (const key of ["acknowledgmentPatterns", "retryPatterns"]) {
      const patterns = escalation[key];
      if (Array.isArray(patterns)) escalation[key] = patterns.map((p) => new RegExp(String(p), "i"));
    }
  }
  return options as ReplayOptions;
}

/** A progress bar on stderr, once a file takes more than a moment: the share of the file read, the runs replayed. */
function progressBar(enabled: boolean): {
  tick(file: string, read: number, size: number, runs: number): void;
  end(): void;
} {
  if (!enabled) return { tick() {}, end() {} };
  let last = Date.now();
  let drawn = false;
  return {
    tick(file, read, size, runs) {
      const now = Date.now();
      if (now - last < 100) return;
      last = now;
      drawn = true;
      const share = size > 0 ? Math.min(1, read / size) : 1;
      const filled = Math.round(share * 30);
      const bar = `[${"#".repeat(filled)}${"-".repeat(30 - filled)}] ${Math.round(share * 100)}%`;
      process.stderr.write(`\r${bar} of ${basename(file)}, ${runs} runs\x1b[K`);
    },
    end() {
      if (drawn) process.stderr.write("\n");
    },
  };
}

/** The sources listed one by one; the runs of every later source are added up in one row, "other sources". */
const SOURCES_LISTED = 100;

/** Totals of all runs and per source (the first {@link SOURCES_LISTED}); reports kept only when printed. */
class Tally {
  readonly all = emptyTotals();
  readonly bySource = new Map<string, ReplayTotals>();
  /** The runs of the sources beyond those listed, added up. */
  others: ReplayTotals | undefined;
  readonly reports: RunReport[] = [];
  runs = 0;
  constructor(readonly keepReports: boolean) {}

  add({ sources, reports }: BatchOutcome): void {
    for (const [key, totals] of sources) {
      this.runs += totals.runs;
      addInto(this.all, totals);
      let into = this.bySource.get(key);
      if (into === undefined && this.bySource.size < SOURCES_LISTED) {
        into = emptyTotals();
        this.bySource.set(key, into);
      }
      if (into === undefined) {
        this.others ??= emptyTotals();
        into = this.others;
      }
      addInto(into, totals);
    }
    if (this.keepReports) for (const report of reports) this.reports.push(report);
  }
}

/** Runs the CLI with `argv` (without `node` and the script); returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (e) {
    process.stderr.write(`langgraph-guards: ${(e as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  if (parsed.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  let options: ReplayOptions;
  try {
    options = loadOptions(parsed.options);
  } catch (e) {
    process.stderr.write(`langgraph-guards: ${(e as Error).message}\n`);
    return 2;
  }

  const problems: Problem[] = [];
  const tally = new Tally(parsed.json || parsed.detail);
  const bar = progressBar(parsed.progress && process.stderr.isTTY === true && !parsed.json);
  // Worker threads, started when a file has many runs (`--threads`; 0: every run on this thread).
  let pool: ReplayThreads | undefined;
  const threads = () => {
    const format = parsed.read.format ?? "auto";
    if (parsed.threads > 0) pool ??= new ReplayThreads(options, tally.keepReports, format, parsed.threads);
    return pool;
  };
  try {
    const replay = guardReplayer(options);
    for (const file of parsed.files) {
      const onProgress = (read: number, size: number) => bar.tick(file, read, size, tally.runs);
      await replayFile(file, { ...parsed.read, onProgress }, replay, tally, problems, threads);
    }
  } catch (e) {
    if (!(e instanceof GuardOptionsError)) throw e;
    bar.end();
    process.stderr.write(`langgraph-guards: ${e.message}\n`);
    return 2;
  } finally {
    await (pool as ReplayThreads | undefined)?.close();
  }
  bar.end();
  const errors = problems.filter((p) => !(p.incomplete && parsed.lenient)).map((p) => p.message);
  const warnings = problems.filter((p) => p.incomplete && parsed.lenient).map((p) => p.message);
  const out = parsed.json ? jsonReport(tally, errors, warnings, parsed.detail) : textReport(tally, parsed.detail);
  // A table of zeros says nothing when no run could be read: the errors below say why.
  if (parsed.json || tally.runs > 0 || problems.length === 0) process.stdout.write(out);
  for (const p of problems) {
    const warning = p.incomplete && parsed.lenient ? "warning: " : "";
    process.stderr.write(`langgraph-guards: ${warning}${p.message}\n`);
  }
  if (!parsed.lenient && problems.some((p) => p.incomplete)) {
    process.stderr.write(
      "langgraph-guards: incomplete input: the runs were evaluated without what is missing; --lenient accepts it\n",
    );
  }
  if (tally.runs === 0 && problems.length === 0) process.stderr.write("langgraph-guards: no runs found\n");
  return errors.length > 0 ? 1 : 0;
}

/** Replays one file's runs as they are read, on worker threads after {@link THREADS_AFTER} items; bad options throw. */
async function replayFile(
  file: string,
  read: ReadRunsFromFileOptions,
  replay: (run: ReplayRun) => ReplayResult,
  tally: Tally,
  problems: Problem[],
  threads: () => ReplayThreads | undefined,
): Promise<void> {
  // The first problems of a file are kept; the rest only counted (a file may have millions of bad lines).
  const own: ProblemList = { problems: [], more: 0, moreErrors: false };
  const apply = (outcome: BatchOutcome) => {
    for (const problem of outcome.problems) noteProblem(own, problem);
    own.more += outcome.more;
    own.moreErrors ||= outcome.moreErrors;
    if (outcome.fatal !== undefined) throw new GuardOptionsError(outcome.fatal);
    tally.add(outcome);
  };
  // Batches given to the worker threads, answered in order; a few at most, so that memory stays bounded.
  const given: Promise<BatchOutcome>[] = [];
  let batch: InputItem[] = [];
  let items = 0;
  let pool: ReplayThreads | undefined;
  const send = async (limit: number) => {
    if (pool !== undefined && batch.length > 0) {
      const outcome = pool.replay(file, batch);
      outcome.catch(() => {}); // a worker's failure is thrown where its batch is awaited, in order
      given.push(outcome);
    }
    batch = [];
    while (given.length > limit) apply(await (given.shift() as Promise<BatchOutcome>));
  };
  const name = basename(file);
  const format = read.format ?? "auto";
  // Once worker threads replay the runs, the lines of JSON Lines go to them unread (they parse them).
  for await (const item of readItems(file, { ...read, file: name }, () => pool !== undefined)) {
    items += 1;
    if (items > THREADS_AFTER) pool ??= threads();
    if (pool === undefined) apply(replayBatch(file, [item], replay, tally.keepReports, format));
    else if (batch.push(item) >= BATCH_RUNS) await send(2 * pool.size);
  }
  await send(0);
  // The count is incomplete input (a warning with --lenient) only when every problem it counts is.
  problems.push(...own.problems);
  const message = `${name}: … and ${own.more} more problems (the first ${own.problems.length} are above)`;
  if (own.more > 0) problems.push({ message, incomplete: !own.moreErrors });
}

/** Items replayed on the reading thread before worker threads take over (they take a moment to start). */
const THREADS_AFTER = 20_000;

function jsonReport(tally: Tally, errors: string[], warnings: string[], detail: boolean): string {
  const out = {
    totals: tally.all,
    rates: rates(tally.all),
    sources: Object.fromEntries([...tally.bySource].map(([k, t]) => [k, { totals: t, rates: rates(t) }])),
    ...(tally.others && { otherSources: { totals: tally.others, rates: rates(tally.others) } }),
    runs: detail ? tally.reports : tally.reports.map(({ notRun: _n, ...r }) => r),
    errors,
    warnings,
  };
  return `${JSON.stringify(out, null, 2)}\n`;
}

function textReport(tally: Tally, detail: boolean): string {
  const rows = tally.bySource.size > 1 ? [...tally.bySource].map(([label, totals]) => ({ label, totals })) : [];
  if (tally.others) rows.push({ label: `other sources (beyond the first ${SOURCES_LISTED})`, totals: tally.others });
  let text = `${summaryTable([...rows, { label: "all", totals: tally.all }])}\n\n${SUMMARY_LEGEND}\n`;
  if (!detail) return text;
  // Runs whose calls all ran have nothing to show; calls are numbered from 1, as a person counts them.
  for (const r of tally.reports.filter((report) => report.notRun.length > 0)) {
    text += `\n${r.id} (${basename(r.file)}): ${r.totals.calls} calls, ${r.notRun.length} not run\n`;
    for (const d of r.notRun) {
      const why = d.action === "block" ? `blocked (${d.rule})` : d.action;
      text += `  call ${d.index + 1} ${d.toolName}: ${why}${d.waste ? "" : "  [progress]"}\n`;
    }
  }
  return text;
}

/** A size flag's value in bytes: digits, optionally with k, m or g (powers of 1024); undefined when not given. */
function parseSize(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const m = /^(\d+)\s*([kmg]?)(i?b)?$/i.exec(value.trim());
  const unit = { "": 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[(m?.[2] ?? "").toLowerCase()] ?? Number.NaN;
  const bytes = Number(m?.[1]) * unit;
  if (!Number.isSafeInteger(bytes) || bytes <= 0) {
    throw new UsageError(`${flag} "${value}": expected a size in bytes, e.g. 512m or 2g`);
  }
  return bytes;
}

/** The command line: the command, its files and flags; throws `UsageError`. */
function parse(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      format: { type: "string", default: "auto" },
      options: { type: "string" },
      json: { type: "boolean", default: false },
      detail: { type: "boolean", default: false },
      "no-progress": { type: "boolean", default: false },
      threads: { type: "string" },
      lenient: { type: "boolean", default: false },
      "max-bytes": { type: "string" },
      "max-line-bytes": { type: "string" },
      "max-document-bytes": { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  const flags = { json: values.json, detail: values.detail, lenient: values.lenient, options: values.options };
  if (values.help) return { help: true, files: [], read: {}, progress: false, threads: 0, ...flags };
  const [command, ...files] = positionals;
  if (command !== "replay") throw new UsageError(command ? `unknown command "${command}"` : "missing command");
  if (files.length === 0) throw new UsageError("replay needs at least one FILE");
  const format = values.format;
  if (!["auto", "jsonl", "langchain", "openai"].includes(format)) {
    throw new UsageError(`unknown --format "${format}" (auto, jsonl, langchain, openai)`);
  }
  const read: ReadRunsFromFileOptions = {
    format: format as ReplayFormat | "auto",
    maxBytes: parseSize("--max-bytes", values["max-bytes"]) ?? REPLAY_INPUT_CAPS.maxBytes,
    maxLineBytes: parseSize("--max-line-bytes", values["max-line-bytes"]) ?? REPLAY_INPUT_CAPS.maxLineBytes,
    maxDocumentBytes:
      parseSize("--max-document-bytes", values["max-document-bytes"]) ?? REPLAY_INPUT_CAPS.maxDocumentBytes,
  };
  const threads = values.threads === undefined ? defaultThreads() : Number(values.threads);
  if (!Number.isSafeInteger(threads) || threads < 0 || threads > 64) {
    throw new UsageError(`--threads "${values.threads}": expected a number of threads from 0 to 64`);
  }
  return { help: false, files, read, progress: !values["no-progress"], threads, ...flags };
}

const invokedDirectly = process.argv[1] !== undefined && /cli\.(js|ts)$/.test(process.argv[1]);
if (invokedDirectly || process.argv[1]?.endsWith("langgraph-guards")) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      process.stderr.write(`langgraph-guards: ${(e as Error).stack ?? String(e)}\n`);
      process.exitCode = 1;
    },
  );
}
