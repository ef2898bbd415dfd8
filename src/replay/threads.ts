/** The CLI's batch replay, here or on workers: both call {@link replayBatch} in file order: the same report. */
import { availableParallelism } from "node:os";
import { basename } from "node:path";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { GuardOptionsError } from "../common/options.js";
import { callsWithoutResult, type ReplayFormat, ReplayInputError } from "./formats.js";
import { type InputItem, lineItems, type ReplayInputItem } from "./lines.js";
import { guardReplayer, type ReplayOptions, type ReplayResult, type ReplayRun } from "./replay.js";
import { addInto, emptyTotals, type ReplayTotals } from "./totals.js";

/** Something wrong with the input: an error, or (`incomplete`) input that `--lenient` accepts with a warning. */
export interface Problem {
  message: string;
  incomplete?: boolean | undefined;
}

/** One run's report: its totals, and its calls not run only when the report is kept (`--json`, `--detail`). */
export interface RunReport {
  id: string;
  source?: string | undefined;
  file: string;
  totals: ReplayTotals;
  notRun: { index: number; toolName: string; action: string; rule?: string | undefined; waste: boolean }[];
}

/** The first {@link PROBLEMS_SHOWN} problems; the rest counted, and whether any of them is an error. */
export interface ProblemList {
  problems: Problem[];
  more: number;
  moreErrors: boolean;
}

/** Notes `problem` in `list`: kept while fewer than {@link PROBLEMS_SHOWN} are, else counted. */
export function noteProblem(list: ProblemList, problem: Problem): void {
  if (list.problems.length < PROBLEMS_SHOWN) list.problems.push(problem);
  else {
    list.more += 1;
    list.moreErrors ||= problem.incomplete !== true;
  }
}

/** What a batch gives: its problems; its runs' totals by source (`source`, else the file); `fatal`: bad options. */
export interface BatchOutcome extends ProblemList {
  sources: [string, ReplayTotals][];
  reports: RunReport[];
  fatal?: string | undefined;
}

/** The items of one file replayed, as the report takes them (the same on every thread). */
export function replayBatch(
  file: string,
  items: readonly InputItem[],
  replay: (run: ReplayRun) => ReplayResult,
  keep: boolean,
  format: ReplayFormat | "auto",
): BatchOutcome {
  const outcome: BatchOutcome = { problems: [], more: 0, moreErrors: false, sources: [], reports: [] };
  const sources = new Map<string, ReplayTotals>();
  const note = (problem: Problem) => noteProblem(outcome, problem);
  const one = (item: ReplayInputItem) => {
    if ("error" in item) return note({ message: item.error.message, incomplete: item.incomplete });
    const { run } = item;
    const missing = missingResultsProblem(run);
    if (missing !== undefined) note({ message: missing, incomplete: true });
    try {
      const report = replayOne(file, run, replay(run), keep);
      const key = run.source ?? basename(file);
      const totals = sources.get(key);
      if (totals === undefined) sources.set(key, addInto(emptyTotals(), report.totals));
      else addInto(totals, report.totals);
      if (keep) outcome.reports.push(report);
    } catch (e) {
      if (e instanceof GuardOptionsError) outcome.fatal ??= e.message;
      else note({ message: e instanceof ReplayInputError ? e.message : `${run.id}: ${(e as Error).message}` });
    }
  };
  for (const item of items) {
    if ("line" in item) for (const read of lineItems(item.line, item.where, format)) one(read);
    else one(item);
  }
  outcome.sources = [...sources];
  return outcome;
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

function replayOne(file: string, run: ReplayRun, { decisions, totals }: ReplayResult, kept: boolean): RunReport {
  const notRun = kept ? decisions.filter((d) => d.action !== "allow" && d.recorded) : [];
  const calls = notRun.map(({ index, toolName, action, rule, waste }) => ({ index, toolName, action, rule, waste }));
  return { id: run.id, source: run.source, file, totals, notRun: calls };
}

/** The problems of one file listed one by one; beyond them, their count. */
export const PROBLEMS_SHOWN = 20;

interface WorkerSetup {
  kind: "langgraph-guards-replay";
  options: ReplayOptions;
  keep: boolean;
  format: ReplayFormat | "auto";
}

/** The worker threads the CLI starts by default: one per core (the reading thread mostly waits), none on one core. */
export function defaultThreads(): number {
  const cores = availableParallelism();
  return cores > 1 ? cores : 0;
}

/** Items a batch holds: worker threads pay for their messages per batch, not per run. */
export const BATCH_RUNS = 2000;

/** Worker threads that replay batches of items, each outcome handed back in the order the batches were given. */
export class ReplayThreads {
  readonly #workers: Worker[] = [];
  /** Per worker, the batches it was given and not yet answered: answers come back in order. */
  readonly #waiting: ((outcome: BatchOutcome | Error) => void)[][] = [];
  #next = 0;

  constructor(options: ReplayOptions, keep: boolean, format: ReplayFormat | "auto", threads: number) {
    const setup: WorkerSetup = { kind: "langgraph-guards-replay", options, keep, format };
    // From the source, tsx loads the TypeScript in the worker (as it does on this thread, under vitest or tsx).
    const source = import.meta.url.endsWith(".ts");
    const entry = source
      ? `import("tsx/esm/api").then((tsx) => { tsx.register(); return import(${JSON.stringify(import.meta.url)}); });`
      : new URL("./threads.js", import.meta.url);
    for (let i = 0; i < threads; i += 1) {
      const worker = new Worker(entry, { workerData: setup, eval: source });
      const waiting: ((outcome: BatchOutcome | Error) => void)[] = [];
      worker.on("message", (outcome: BatchOutcome) => waiting.shift()?.(outcome));
      worker.on("error", (error) => {
        for (const done of waiting.splice(0)) done(error);
      });
      this.#workers.push(worker);
      this.#waiting.push(waiting);
    }
  }

  get size(): number {
    return this.#workers.length;
  }

  /** The outcome of a batch of one file's items, replayed on the next worker. */
  replay(file: string, items: InputItem[]): Promise<BatchOutcome> {
    const i = this.#next++ % this.#workers.length;
    return new Promise((resolve, reject) => {
      (this.#waiting[i] as ((outcome: BatchOutcome | Error) => void)[]).push((outcome) =>
        outcome instanceof Error ? reject(outcome) : resolve(outcome),
      );
      // What could not be read travels as its message (an error's class does not cross threads).
      const plain = items.map((it) =>
        "error" in it ? { error: { message: it.error.message }, incomplete: it.incomplete } : it,
      );
      (this.#workers[i] as Worker).postMessage({ file, items: plain });
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.#workers.map((w) => w.terminate()));
  }
}

// The worker's side: replays each batch it is given with the options it was started with.
const setup = isMainThread ? undefined : (workerData as WorkerSetup | undefined);
if (setup?.kind === "langgraph-guards-replay" && parentPort !== null) {
  const port = parentPort;
  let replay: ((run: ReplayRun) => ReplayResult) | Error;
  try {
    replay = guardReplayer(setup.options);
  } catch (e) {
    replay = e as Error;
  }
  port.on("message", ({ file, items }: { file: string; items: InputItem[] }) => {
    if (replay instanceof Error) {
      port.postMessage({ problems: [], more: 0, moreErrors: false, sources: [], reports: [], fatal: replay.message });
    } else port.postMessage(replayBatch(file, items, replay, setup.keep, setup.format));
  });
}
