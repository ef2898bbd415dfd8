#!/usr/bin/env node
/**
 * The `langgraph-guards` command: `langgraph-guards replay FILE... [--format F] [--options guards.json] [--json]
 * [--detail] [--lenient]`. Replays recorded agent runs through the guards and prints what they would have blocked and saved.
 */
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { parseArgs } from "node:util";
import { GuardOptionsError } from "../common/options.js";
import { callsWithoutResult, type ReplayFormat, ReplayInputError } from "./formats.js";
import { REPLAY_INPUT_CAPS, type ReadRunsFromFileOptions, readRunsFromFile } from "./input.js";
import { type ReplayOptions, type ReplayRun, replayGuards } from "./replay.js";
import { SUMMARY_LEGEND, summaryTable } from "./report.js";
import { addTotals, emptyTotals, type ReplayTotals, rates } from "./totals.js";

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
  --no-progress      no progress bar
  -h, --help         this text`;

/**
 * Exit codes: 0 all read, 1 some input could not be read or is incomplete (the rest was evaluated; `--lenient`
 * accepts incomplete input), 2 usage.
 */
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

interface RunReport {
  id: string;
  source?: string | undefined;
  file: string;
  totals: ReplayTotals;
  notRun: { index: number; toolName: string; action: string; rule?: string | undefined; waste: boolean }[];
}

/**
 * The totals of the runs replayed, of all and per source (the run's `source`, else its file), added up as they come;
 * and each run's report, kept only when it is printed (`--json`, `--detail`), so that memory does not grow with the
 * runs of a large file.
 */
class Tally {
  all = emptyTotals();
  readonly bySource = new Map<string, ReplayTotals>();
  readonly reports: RunReport[] = [];
  runs = 0;
  constructor(private readonly keepReports: boolean) {}

  add(report: RunReport): void {
    this.runs += 1;
    this.all = addTotals(this.all, report.totals);
    const key = report.source ?? basename(report.file);
    this.bySource.set(key, addTotals(this.bySource.get(key) ?? emptyTotals(), report.totals));
    if (this.keepReports) this.reports.push(report);
  }
}

/**
 * Runs the CLI with `argv` (without `node` and the script). Returns the exit code.
 *
 * @example
 * ```ts
 * process.exitCode = await main(["replay", "runs.jsonl", "--json"]);
 * ```
 */
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
  try {
    for (const file of parsed.files) {
      const onProgress = (read: number, size: number) => bar.tick(file, read, size, tally.runs);
      await replayFile(file, { ...parsed.read, onProgress }, options, tally, problems);
    }
  } catch (e) {
    if (!(e instanceof GuardOptionsError)) throw e;
    bar.end();
    process.stderr.write(`langgraph-guards: ${e.message}\n`);
    return 2;
  }
  bar.end();
  // Incomplete input is an error unless --lenient makes it a warning.
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

/** Something wrong with the input: an error, or (`incomplete`) input that `--lenient` accepts with a warning. */
interface Problem {
  message: string;
  incomplete?: boolean;
}

/**
 * Replays every run of one file as it is read (the file is streamed: one run in memory at a time). Files that cannot
 * be read, bad lines and caps are problems; so are, as incomplete input, a truncated `.gz` file (its complete lines
 * are read) and message runs with tool calls that no result answers. Throws `GuardOptionsError` (bad options).
 */
async function replayFile(
  file: string,
  read: ReadRunsFromFileOptions,
  options: ReplayOptions,
  tally: Tally,
  problems: Problem[],
): Promise<void> {
  // The first problems of a file are kept as they are (with their line numbers); the rest only counted, so that a
  // file of millions of bad lines takes the memory and the time of a few.
  let kept = 0;
  let more = 0;
  let moreErrors = false;
  const note = (problem: Problem) => {
    if (kept < PROBLEMS_SHOWN) {
      kept += 1;
      problems.push(problem);
    } else {
      more += 1;
      moreErrors ||= problem.incomplete !== true;
    }
  };
  for await (const item of readRunsFromFile(file, { ...read, file: basename(file) })) {
    if ("error" in item) {
      note({ message: item.error.message, incomplete: item.incomplete });
      continue;
    }
    const { run } = item;
    const missing = missingResultsProblem(run);
    if (missing !== undefined) note({ message: missing, incomplete: true });
    try {
      tally.add(replayOne(file, run, options));
    } catch (e) {
      if (e instanceof GuardOptionsError) throw e;
      note({ message: e instanceof ReplayInputError ? e.message : `${run.id}: ${(e as Error).message}` });
    }
  }
  // The count is incomplete input (a warning with --lenient) only when every problem it counts is.
  const message = `${basename(file)}: … and ${more} more problems (the first ${kept} are above)`;
  if (more > 0) problems.push({ message, incomplete: !moreErrors });
}

/** The problems of one file listed one by one; beyond them, their count. */
const PROBLEMS_SHOWN = 20;

/** "f.jsonl:3 (run "r"): tool call c7 (search, message 5) has no result", or undefined when every call has one. */
function missingResultsProblem(run: ReplayRun): string | undefined {
  const missing = callsWithoutResult(run);
  if (missing === undefined) return undefined;
  const shown = missing.calls.slice(0, 10).map((c) => `${c.id ?? "(no id)"} (${c.name}, message ${c.message})`);
  const more = missing.calls.length > shown.length ? ` and ${missing.calls.length - shown.length} more` : "";
  const which =
    missing.calls.length === 1
      ? `tool call ${shown[0]} has no result`
      : `${missing.calls.length} tool calls have no result: ${shown.join(", ")}${more}`;
  const where = run.id === missing.where ? missing.where : `${missing.where} (run ${JSON.stringify(run.id)})`;
  return `${where}: ${which}`;
}

function replayOne(file: string, run: ReplayRun, options: ReplayOptions): RunReport {
  const { decisions, totals } = replayGuards(run, options);
  return {
    id: run.id,
    source: run.source,
    file,
    totals,
    notRun: decisions
      .filter((d) => d.action !== "allow" && d.recorded)
      .map((d) => ({ index: d.index, toolName: d.toolName, action: d.action, rule: d.rule, waste: d.waste })),
  };
}

function jsonReport(tally: Tally, errors: string[], warnings: string[], detail: boolean): string {
  const out = {
    totals: tally.all,
    rates: rates(tally.all),
    sources: Object.fromEntries([...tally.bySource].map(([k, t]) => [k, { totals: t, rates: rates(t) }])),
    runs: detail ? tally.reports : tally.reports.map(({ notRun: _n, ...r }) => r),
    errors,
    warnings,
  };
  return `${JSON.stringify(out, null, 2)}\n`;
}

function textReport(tally: Tally, detail: boolean): string {
  const rows = tally.bySource.size > 1 ? [...tally.bySource].map(([label, totals]) => ({ label, totals })) : [];
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
      lenient: { type: "boolean", default: false },
      "max-bytes": { type: "string" },
      "max-line-bytes": { type: "string" },
      "max-document-bytes": { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  const flags = { json: values.json, detail: values.detail, lenient: values.lenient, options: values.options };
  if (values.help) return { help: true, files: [], read: {}, progress: false, ...flags };
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
  return { help: false, files, read, progress: !values["no-progress"], ...flags };
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
