#!/usr/bin/env node
/**
 * The `langgraph-guards` command: `langgraph-guards replay FILE... [--format F] [--options guards.json] [--json]
 * [--detail] [--lenient]`. Replays recorded agent runs through the guards and prints what they would have blocked and saved.
 */
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { parseArgs } from "node:util";
import { constants, gunzipSync } from "node:zlib";
import { GuardOptionsError } from "../core/options.js";
import { callsWithoutResult, type ReplayFormat, ReplayInputError, readRuns } from "./formats.js";
import { type ReplayOptions, type ReplayRun, replayGuards } from "./replay.js";
import { SUMMARY_LEGEND, summaryTable } from "./report.js";
import { addTotals, emptyTotals, type ReplayTotals, rates } from "./totals.js";

const USAGE = `Usage: langgraph-guards replay FILE... [options]

Replays recorded agent runs through the guards (the same decisions GuardedToolNode and the escalation hook make)
and prints what they would have blocked, the waste they catch and the progress they would have blocked.

FILE: JSON or JSON Lines (.gz too): runs in the normalized format ({ id, steps }), LangChain messages (BaseMessage
JSON, stored messages, or an object with \`messages\`), or OpenAI chat messages with tool_calls.

Options:
  --format F         auto (default), jsonl, langchain or openai
  --options FILE     guard options as JSON (the GuardedToolNode options, plus "hook": false to leave out the
                     escalation hook); "acknowledgmentPatterns"/"retryPatterns" are regular-expression strings
  --json             print the result as JSON
  --detail           also print each run: its calls the guards would not have run
  --lenient          accept incomplete input as warnings (exit 0): tool calls without a result in LangChain or
                     OpenAI messages, and a truncated or damaged .gz file (its complete lines are read)
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

/** Where a `.gz` input broke: its complete lines were kept. */
interface Truncation {
  /** Complete lines kept. */
  lines: number;
  /** Bytes of decompressed text they make. */
  bytes: number;
  /** zlib's error. */
  reason: string;
  /** The file ends early (else it is damaged inside). */
  early: boolean;
}

/** A file's text; a `.gz` file that ends early or is damaged gives its complete lines and where it broke. */
function readInput(file: string): { text: string; truncated?: Truncation } {
  const bytes = readFileSync(file);
  if (!file.endsWith(".gz")) return { text: bytes.toString("utf8") };
  try {
    return { text: gunzipSync(bytes).toString("utf8") };
  } catch (e) {
    const prefix = decompressiblePrefix(bytes);
    const end = prefix.lastIndexOf(0x0a) + 1; // the last complete line ends here
    const early = (e as { code?: unknown }).code === "Z_BUF_ERROR";
    if (end === 0 && !early) throw e; // not gzip, or damaged before its first line
    const text = prefix.subarray(0, end).toString("utf8");
    const lines = text.split("\n").length - 1;
    return { text, truncated: { lines, bytes: end, reason: (e as Error).message, early } };
  }
}

/**
 * What a gzip stream that ends early or is damaged decompresses to up to the break: `Z_SYNC_FLUSH` as the final
 * flush gives everything before a truncation; for damage inside, the longest prefix of the compressed bytes that
 * decompresses (a binary search, only on this error path).
 */
function decompressiblePrefix(bytes: Buffer): Buffer {
  const upTo = (n: number) => {
    try {
      return gunzipSync(bytes.subarray(0, n), { finishFlush: constants.Z_SYNC_FLUSH });
    } catch {
      return undefined;
    }
  };
  const whole = upTo(bytes.length);
  if (whole !== undefined) return whole;
  let best = Buffer.alloc(0);
  let lo = 0;
  let hi = bytes.length - 1;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    const out = upTo(mid);
    if (out === undefined) hi = mid - 1;
    else {
      lo = mid;
      best = out;
    }
  }
  return best;
}

function progressBar(total: number, enabled: boolean): { tick(done: number): void; end(): void } {
  if (!enabled || total < 20) return { tick() {}, end() {} };
  let last = 0;
  const draw = (done: number) => {
    const width = 30;
    const filled = Math.round((done / total) * width);
    process.stderr.write(`\r[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${done}/${total} runs`);
  };
  return {
    tick(done) {
      const now = Date.now();
      if (now - last < 100 && done < total) return;
      last = now;
      draw(done);
    },
    end() {
      draw(total);
      process.stderr.write("\n");
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
  const inputs = readInputs(parsed.files, parsed.format, problems);
  const bar = progressBar(inputs.length, parsed.progress && process.stderr.isTTY === true && !parsed.json);
  const reports: RunReport[] = [];
  for (const [i, { file, run }] of inputs.entries()) {
    try {
      reports.push(replayOne(file, run, options));
    } catch (e) {
      if (e instanceof GuardOptionsError) {
        bar.end();
        process.stderr.write(`langgraph-guards: ${e.message}\n`);
        return 2;
      }
      problems.push({ message: e instanceof ReplayInputError ? e.message : `${run.id}: ${(e as Error).message}` });
    }
    bar.tick(i + 1);
  }
  bar.end();
  // Incomplete input is an error unless --lenient makes it a warning.
  const errors = problems.filter((p) => !(p.incomplete && parsed.lenient)).map((p) => p.message);
  const warnings = problems.filter((p) => p.incomplete && parsed.lenient).map((p) => p.message);
  const out = parsed.json ? jsonReport(reports, errors, warnings, parsed.detail) : textReport(reports, parsed.detail);
  process.stdout.write(out);
  for (const p of problems) {
    const warning = p.incomplete && parsed.lenient ? "warning: " : "";
    process.stderr.write(`langgraph-guards: ${warning}${p.message}\n`);
  }
  if (!parsed.lenient && problems.some((p) => p.incomplete)) {
    process.stderr.write(
      "langgraph-guards: incomplete input: the runs were evaluated without what is missing; --lenient accepts it\n",
    );
  }
  if (reports.length === 0 && problems.length === 0) process.stderr.write("langgraph-guards: no runs found\n");
  return errors.length > 0 ? 1 : 0;
}

/** Something wrong with the input: an error, or (`incomplete`) input that `--lenient` accepts with a warning. */
interface Problem {
  message: string;
  incomplete?: boolean;
}

/**
 * Every run of every input file. Unreadable files and bad lines are problems; so are, as incomplete input, a
 * truncated `.gz` file (its complete lines are read) and message runs with tool calls that no result answers.
 */
function readInputs(files: string[], format: ReplayFormat | "auto", problems: Problem[]) {
  const inputs: { file: string; run: ReplayRun }[] = [];
  for (const file of files) {
    let input: ReturnType<typeof readInput>;
    try {
      input = readInput(file);
    } catch (e) {
      problems.push({ message: `${file}: ${(e as Error).message}` });
      continue;
    }
    const name = basename(file);
    const { runs, errors: bad } =
      input.truncated !== undefined && input.text.trim() === ""
        ? { runs: [], errors: [] }
        : readRuns(input.text, { file: name, format });
    problems.push(...bad.map((e) => ({ message: e.message })));
    for (const run of runs) {
      const missing = missingResultsProblem(run);
      if (missing !== undefined) problems.push({ message: missing, incomplete: true });
    }
    if (input.truncated !== undefined) {
      const { lines, bytes, reason, early } = input.truncated;
      const complete = `${runs.length} complete run${runs.length === 1 ? "" : "s"} read`;
      const broken = early ? "truncated" : "damaged";
      const message = `${name}: ${broken} after line ${lines} (byte ${bytes}): ${complete} (gzip: ${reason})`;
      problems.push({ message, incomplete: true });
    }
    inputs.push(...runs.map((run) => ({ file, run })));
  }
  return inputs;
}

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

/** The totals of all runs, and per source (the run's `source`, else its file). */
function totalsOf(reports: RunReport[]) {
  const bySource = new Map<string, ReplayTotals>();
  let all = emptyTotals();
  for (const r of reports) {
    all = addTotals(all, r.totals);
    const key = r.source ?? basename(r.file);
    bySource.set(key, addTotals(bySource.get(key) ?? emptyTotals(), r.totals));
  }
  return { all, bySource };
}

function jsonReport(reports: RunReport[], errors: string[], warnings: string[], detail: boolean): string {
  const { all, bySource } = totalsOf(reports);
  const out = {
    totals: all,
    rates: rates(all),
    sources: Object.fromEntries([...bySource].map(([k, t]) => [k, { totals: t, rates: rates(t) }])),
    runs: detail ? reports : reports.map(({ notRun: _n, ...r }) => r),
    errors,
    warnings,
  };
  return `${JSON.stringify(out, null, 2)}\n`;
}

function textReport(reports: RunReport[], detail: boolean): string {
  const { all, bySource } = totalsOf(reports);
  const rows = bySource.size > 1 ? [...bySource].map(([label, totals]) => ({ label, totals })) : [];
  let text = `${summaryTable([...rows, { label: "all", totals: all }])}\n\n${SUMMARY_LEGEND}\n`;
  if (!detail) return text;
  for (const r of reports) {
    text += `\n${r.id} (${basename(r.file)}): ${r.totals.calls} calls, ${r.notRun.length} not run\n`;
    for (const d of r.notRun) {
      const why = d.action === "block" ? `blocked (${d.rule})` : d.action;
      text += `  #${d.index} ${d.toolName}: ${why}${d.waste ? "" : "  [progress]"}\n`;
    }
  }
  return text;
}

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
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help)
    return {
      help: true,
      files: [],
      format: "auto" as const,
      json: false,
      detail: false,
      progress: false,
      lenient: false,
    };
  const [command, ...files] = positionals;
  if (command !== "replay") throw new UsageError(command ? `unknown command "${command}"` : "missing command");
  if (files.length === 0) throw new UsageError("replay needs at least one FILE");
  const format = values.format;
  if (!["auto", "jsonl", "langchain", "openai"].includes(format)) {
    throw new UsageError(`unknown --format "${format}" (auto, jsonl, langchain, openai)`);
  }
  return {
    help: false,
    files,
    format: format as ReplayFormat | "auto",
    options: values.options,
    json: values.json,
    detail: values.detail,
    progress: !values["no-progress"],
    lenient: values.lenient,
  };
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
