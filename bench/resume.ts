/**
 * `npm run bench:resume [-- --quick]`: what re-opening a thread costs with the file cache on vs off (issue 21).
 *
 * A scripted createReactAgent (ScriptedChatModel, GuardedToolNode over the file tools, GuardMessagesState) runs one
 * thread of N turns in one run (one tool call a turn): the first 50 turns read 50 distinct 100 KB files whole (5 MB,
 * in the cache and in the messages), the others make cheap calls (list_files of a folder, reads of 1 KB files, never
 * the same call within 10 turns). The thread is then re-opened as a new process would (a fresh graph compiled on the
 * same checkpointer; SqliteSaver: a new connection to the same file) and measured, for MemorySaver and SqliteSaver
 * (a temp file), at 60 / 200 / 1,000 turns, cache on vs off:
 * - `getState` of the latest checkpoint (median of up to 9, interleaved noise matters at a 1.2x goal; a call over
 *   1 s is timed once);
 * - `getState` at the worst step: the checkpoint that walks back furthest to a snapshot of a `DeltaChannel`, when
 *   the state has one (the cache had one before issue 21: it snapshotted every 100 updates, so a thread N turns long,
 *   N a multiple of 100, read back cheaply at its latest checkpoint and slowly one step before). The cache is now an
 *   ordinary channel: nothing walks back, and the worst step is the latest checkpoint; the column stays so that a
 *   regression shows;
 * - the next invoke: one more turn on the re-opened thread (a person's message, a small read, a final answer), from
 *   the latest checkpoint and from the worst step (a fork);
 * - bytes per checkpoint (checkpoint + metadata, as the checkpoint tests count them): median and max over the
 *   thread's steps, and the largest on/off ratio of one step, so that periodic snapshots show; and the writes stored
 *   for the whole thread (where a DeltaChannel keeps its changes).
 *
 * Goals (issue 21): on/off <= 1.2x for getState and for the next invoke at 200 turns (at the latest checkpoint and
 * at the worst step), bytes of every checkpoint on/off <= 1.2x, and getState at 1,000 turns <= 2x getState at 60
 * turns (the same cached content), cache on.
 *
 * Limits: a thread whose estimated storage exceeds `--max-memory-gb` (MemorySaver, default 4) or `--max-disk-gb`
 * (SqliteSaver, default 16) is not run (MemorySaver at 1,000 turns: ~12 GB, the messages' 5.7 MB stored at every
 * step, cache on or off alike), nor one whose estimated build time exceeds `--budget` seconds (default 900). The
 * default run takes 15 to 20 minutes, most of them building the two 1,000-turn SqliteSaver threads (5 GB each) and
 * reading the cache-on one back; `--turns 60,200` takes about 4. `--quick`: 20 and 60 turns over 15 files of 20 KB,
 * in about 30 s.
 *
 *   npm run bench:resume [-- --quick] [-- --turns 60,200] [-- --savers memory,sqlite] [-- --budget 900] [-- --keep 20]
 */
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { RemoveMessage } from "@langchain/core/messages";
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { MemorySaver, REMOVE_ALL_MESSAGES } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import type { FileCacheState } from "../src/fs/cache.js";
import { createFileTools } from "../src/fs/tools.js";
import { GuardedToolNode, GuardMessagesState } from "../src/index.js";
import { ScriptedChatModel, type ScriptedToolCall } from "../src/testing/index.js";
import { type Figure, fmtMs, fmtRatio, machine, median, quick, report } from "./report.js";

type SaverKind = "memory" | "sqlite";
type Mode = "on" | "off";

const args = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? args[at + 1] : undefined;
};
const TURNS = (option("turns") ?? (quick ? "20,60" : "60,200,1000")).split(",").map(Number);
const SAVERS = (option("savers") ?? "memory,sqlite").split(",") as SaverKind[];
const BIG_FILES = Number(option("files") ?? (quick ? 15 : 50));
const BIG_BYTES = Number(option("size") ?? (quick ? 20_000 : 100_000));
const SMALL_FILES = 40;
/**
 * `--keep N`: the conversation in state is trimmed to its last N messages before every model call (a pre-model hook
 * removing the older ones, as a chat app trims history), so that threads of 60 and 1,000 turns hold a state of the
 * same size and differ only in their number of steps: what "reading back grows with the state, not the steps" asks.
 */
const KEEP = option("keep") === undefined ? undefined : Number(option("keep"));
const FOLDERS = 10;
/** Seconds a thread may be expected to take to build. */
const BUDGET_S = Number(option("budget") ?? (quick ? 60 : 900));
/** Bytes a thread may be expected to store, by saver. */
const LIMIT_BYTES: Record<SaverKind, number> = {
  memory: Number(option("max-memory-gb") ?? 4) * 1e9,
  sqlite: Number(option("max-disk-gb") ?? 16) * 1e9,
};
for (const kind of SAVERS) if (kind !== "memory" && kind !== "sqlite") throw new Error(`unknown saver ${kind}`);

// --- The project the agent reads ---------------------------------------------------------------------------------
const root = mkdtempSync(join(tmpdir(), "lgg-bench-resume-"));
const dbDir = mkdtempSync(join(tmpdir(), "lgg-bench-resume-db-"));
process.on("exit", () => {
  rmSync(root, { recursive: true, force: true });
  rmSync(dbDir, { recursive: true, force: true });
});
const hourAgo = new Date(Date.now() - 3_600_000);
mkdirSync(join(root, "big"));
for (let i = 0; i < BIG_FILES; i += 1) {
  const line = `export const value${i}_LINE = "${String(i).padStart(3, "0")} ${"x".repeat(60)}";\n`;
  const path = join(root, "big", `b${i}.ts`);
  writeFileSync(path, line.repeat(Math.ceil(BIG_BYTES / line.length)).slice(0, BIG_BYTES));
  utimesSync(path, hourAgo, hourAgo);
}
for (let d = 0; d < FOLDERS; d += 1) {
  const dir = join(root, "src", `d${d}`);
  mkdirSync(dir, { recursive: true });
  for (let i = d; i < SMALL_FILES; i += FOLDERS) {
    const path = join(dir, `s${i}.ts`);
    writeFileSync(path, `// small module ${i}\n${`export const s${i} = ${i};\n`.repeat(45)}`);
    utimesSync(path, hourAgo, hourAgo);
  }
  utimesSync(dir, hourAgo, hourAgo);
}
for (const dir of ["src", "big", ""]) utimesSync(join(root, dir), hourAgo, hourAgo);
// The tree is made just before it is read: a clock ahead of it keeps the cache's racy window from turning every
// cached answer into a re-read (as in bench/fs.ts).
const later = () => Date.now() + 5000;

/** Turn `t` (0-based): a whole read of a big file, then cheap calls that never repeat within 10 turns. */
function call(t: number): ScriptedToolCall {
  if (t < BIG_FILES) return { name: "read_file", args: { path: `big/b${t}.ts` } };
  const k = t - BIG_FILES;
  if (k % 4 === 3) return { name: "list_files", args: { path: `src/d${(k >> 2) % FOLDERS}` } };
  const i = (k - (k >> 2)) % SMALL_FILES;
  return { name: "read_file", args: { path: `src/d${i % FOLDERS}/s${i}.ts` } };
}

// --- Savers ------------------------------------------------------------------------------------------------------
/** One stored checkpoint of the thread. */
interface Step {
  id: string;
  /** Checkpoint and metadata. */
  bytes: number;
  /** The writes stored against it (the next step's, a DeltaChannel's changes among them). */
  writes: number;
  /** `counters_since_delta_snapshot.fileCache[1]`: how many checkpoints a read of this one walks back. */
  chain: number;
}

interface Opened {
  saver: BaseCheckpointSaver;
  /** The checkpoints of the thread, oldest first. */
  steps(thread: string): Step[];
  /** The same storage as a new process would open it (MemorySaver: the same object). */
  reopen(): Opened;
  close(): void;
}

const decoder = new TextDecoder();
function chainOf(metadata: Uint8Array): number {
  const parsed = JSON.parse(decoder.decode(metadata)) as { counters_since_delta_snapshot?: Record<string, number[]> };
  return parsed.counters_since_delta_snapshot?.fileCache?.[1] ?? 0;
}

function memorySaver(saver = new MemorySaver()): Opened {
  return {
    saver,
    steps(thread) {
      const checkpoints = saver.storage[thread]?.[""] ?? {};
      return Object.keys(checkpoints)
        .sort()
        .map((id) => {
          const [checkpoint, metadata] = checkpoints[id] as [Uint8Array, Uint8Array, string | undefined];
          const stored = saver.writes[JSON.stringify([thread, "", id])] ?? {};
          const writes = Object.values(stored).reduce((n, w) => n + (w[2] as Uint8Array).length, 0);
          return { id, bytes: checkpoint.length + metadata.length, writes, chain: chainOf(metadata) };
        });
    },
    reopen: () => memorySaver(saver),
    close: () => undefined,
  };
}

function sqliteSaver(file: string): Opened {
  const saver = SqliteSaver.fromConnString(file);
  return {
    saver,
    steps(thread) {
      // Called once the thread is built (its tables exist).
      const rows = saver.db
        .prepare(
          `SELECT c.checkpoint_id AS id, c.metadata AS metadata, length(c.checkpoint) + length(c.metadata) AS bytes,
             coalesce((SELECT sum(length(w.value)) FROM writes w
                       WHERE w.thread_id = c.thread_id AND w.checkpoint_ns = c.checkpoint_ns
                         AND w.checkpoint_id = c.checkpoint_id), 0) AS writes
           FROM checkpoints c WHERE c.thread_id = ? AND c.checkpoint_ns = '' ORDER BY c.checkpoint_id`,
        )
        .all(thread) as { id: string; metadata: Uint8Array; bytes: number; writes: number }[];
      return rows.map((r) => ({ id: r.id, bytes: r.bytes, writes: r.writes, chain: chainOf(r.metadata) }));
    },
    reopen: () => sqliteSaver(file),
    close: () => saver.db.close(),
  };
}

// --- One cell: build a thread, re-open it, measure ----------------------------------------------------------------
type Script = ({ toolCalls: ScriptedToolCall[] } | string)[];
function agent(checkpointer: BaseCheckpointSaver, mode: Mode, script: Script) {
  const keep = KEEP;
  return createReactAgent({
    llm: new ScriptedChatModel(script),
    tools: new GuardedToolNode(createFileTools({ root, cache: mode === "on", clock: later })),
    stateSchema: GuardMessagesState,
    checkpointer,
    ...(keep === undefined
      ? {}
      : {
          preModelHook: (state: typeof GuardMessagesState.State) =>
            state.messages.length <= keep
              ? {}
              : { messages: [new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), ...state.messages.slice(-keep)] },
        }),
  });
}

interface Cell {
  saver: SaverKind;
  turns: number;
  mode: Mode;
  /** Seconds the thread took to build. */
  buildS: number;
  /** getState of the latest checkpoint, re-opened. */
  getStateMs: number;
  /** getState of the checkpoint at `worstIndex`. */
  worstMs: number;
  /** The step with the cache's longest walk back (the on thread's; the off thread reads the same step). */
  worstIndex: number;
  /** One more turn on the re-opened thread, from its latest checkpoint. */
  nextMs: number;
  /** One more turn from the checkpoint at `worstIndex` (a fork). */
  nextWorstMs: number;
  steps: Step[];
}

/** The median of up to `runs` timings; a call over 1 s is timed once. */
async function timed(fn: () => Promise<unknown>, runs: number): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const start = performance.now();
    await fn();
    samples.push(performance.now() - start);
    if ((samples[0] as number) > 1000) break;
  }
  return median(samples);
}

/** Builds the thread, re-opens it and measures; `worstAt`: the step to read for the worst case (else found). */
async function cell(kind: SaverKind, turns: number, mode: Mode, worstAt?: number): Promise<Cell> {
  const file = join(dbDir, `${kind}-${turns}-${mode}.sqlite`);
  const first = kind === "memory" ? memorySaver() : sqliteSaver(file);
  const thread = `resume-${turns}-${mode}`;
  const config = { configurable: { thread_id: thread }, recursionLimit: (KEEP === undefined ? 2 : 3) * turns + 20 };
  const script: Script = Array.from({ length: turns }, (_, t) => ({ toolCalls: [call(t)] }));
  const t0 = performance.now();
  await agent(first.saver, mode, [...script, `Done after ${turns} turns.`]).invoke(
    { messages: [{ role: "user", content: "Read the project." }] },
    config,
  );
  const buildS = (performance.now() - t0) / 1000;
  const steps = first.steps(thread);
  // The last step of the longest walks back (the first cycle's walk is a step or two longer than the later ones').
  const longest = Math.max(...steps.map((s) => s.chain));
  const worstIndex = worstAt ?? steps.findLastIndex((s) => s.chain >= longest - 2);
  const worstId = (steps[Math.min(worstIndex, steps.length - 1)] as Step).id;

  // Re-open: a fresh graph on the same storage (SqliteSaver: a new connection to the same file).
  const opened = first.reopen();
  if (opened !== first) first.close();
  const fresh = (script: Script = []) => agent(opened.saver, mode, script);
  const state = (await fresh().getState(config)).values as { fileCache: FileCacheState };
  const cached = Object.keys(state.fileCache.files).length;
  const reads = script.flatMap((s) => (typeof s === "string" ? [] : s.toolCalls)).filter((c) => c.name === "read_file");
  const paths = new Set(reads.map((c) => c.args.path));
  if (cached !== (mode === "on" ? paths.size : 0)) {
    throw new Error(`${kind} ${turns} turns, cache ${mode}: ${cached} files cached after re-opening`);
  }
  const getStateMs = await timed(() => fresh().getState(config), 9);
  const worstConfig = { configurable: { thread_id: thread, checkpoint_id: worstId }, recursionLimit: 20 };
  const worstMs = await timed(() => fresh().getState(worstConfig), 9);
  let extra = 0;
  const oneMore = (from: typeof config | typeof worstConfig) => async () => {
    const script: Script = [{ toolCalls: [call(BIG_FILES + extra)] }, "Done."];
    extra += 1;
    await fresh(script).invoke({ messages: [{ role: "user", content: "One more." }] }, from);
  };
  const nextMs = await timed(oneMore(config), 5);
  const nextWorstMs = await timed(oneMore(worstConfig), 5);
  opened.close();
  for (const suffix of ["", "-wal", "-shm"]) rmSync(`${file}${suffix}`, { force: true });
  return { saver: kind, turns, mode, buildS, getStateMs, worstMs, worstIndex, nextMs, nextWorstMs, steps };
}

// --- Run ---------------------------------------------------------------------------------------------------------
const gb = (n: number) => `${(n / 1e9).toFixed(1)} GB`;
const cells: Cell[] = [];
/** Why the cells of a saver at a size were not run, by `saver/turns`. */
const notRun = new Map<string, string>();
for (const kind of SAVERS) {
  for (const turns of TURNS) {
    // Expected from the last size run: checkpoints of about the same weight (the messages), 2 a turn.
    const previous = cells.filter((c) => c.saver === kind).at(-1);
    const bytes = previous ? median(previous.steps.map((s) => s.bytes + s.writes)) * (2 * turns + 3) : 0;
    const seconds = previous ? 2 * previous.buildS * (turns / previous.turns) : 0;
    let why: string | undefined;
    if (bytes > LIMIT_BYTES[kind]) {
      why = `~${gb(bytes)} ${kind === "memory" ? "in memory (--max-memory-gb)" : "on disk (--max-disk-gb)"}`;
    } else if (seconds > BUDGET_S) why = `~${seconds.toFixed(0)} s to build (--budget ${BUDGET_S})`;
    if (why !== undefined) {
      notRun.set(`${kind}/${turns}`, why);
      process.stderr.write(`... ${kind} ${turns} turns: not run, ${why}\n`);
      continue;
    }
    let worstAt: number | undefined;
    for (const mode of ["on", "off"] as const) {
      process.stderr.write(`... ${kind} ${turns} turns, cache ${mode}\n`);
      const c = await cell(kind, turns, mode, worstAt);
      worstAt = c.worstIndex;
      cells.push(c);
      process.stderr.write(
        `    built in ${c.buildS.toFixed(1)} s; getState ${fmtMs(c.getStateMs)} (worst step ${fmtMs(c.worstMs)}), ` +
          `next invoke ${fmtMs(c.nextMs)} (from the worst step ${fmtMs(c.nextWorstMs)})\n`,
      );
    }
  }
}

// --- Table -------------------------------------------------------------------------------------------------------
const time = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : fmtMs(ms));
const size = (n: number) => (n >= 1e6 ? `${(n / 1e6).toFixed(2)} MB` : `${(n / 1e3).toFixed(1)} KB`);
const find = (kind: SaverKind, turns: number, mode: Mode) =>
  cells.find((c) => c.saver === kind && c.turns === turns && c.mode === mode);
/** The largest on/off ratio of one step (the two threads have the same steps), and that step (1-based). */
function stepRatio(on: Cell, off: Cell, of: (s: Step) => number): { ratio: number; step: number } {
  let worst = { ratio: 0, step: 0 };
  for (const [i, s] of on.steps.entries()) {
    const other = off.steps[i];
    const ratio = other === undefined ? 0 : of(s) / Math.max(1, of(other));
    if (ratio > worst.ratio) worst = { ratio, step: i + 1 };
  }
  return worst;
}
const ckptBytes = (s: Step) => s.bytes;
const header = [
  "saver",
  "turns",
  "cache",
  "build",
  "getState",
  "worst step",
  "next invoke",
  "from worst step",
  "ckpt median",
  "ckpt max",
  "ckpt max step",
  "writes total",
];
const rows: string[][] = [];
const notes: string[] = [];
for (const kind of SAVERS) {
  for (const turns of TURNS) {
    const on = find(kind, turns, "on");
    const off = find(kind, turns, "off");
    const why = notRun.get(`${kind}/${turns}`);
    if (on === undefined || off === undefined) {
      rows.push([kind, String(turns), "", "not run", ...Array(header.length - 4).fill("")]);
      notes.push(`${kind} at ${turns} turns not run: ${why ?? "?"}.`);
      continue;
    }
    for (const c of [off, on]) {
      rows.push([
        kind,
        String(turns),
        c.mode,
        `${c.buildS.toFixed(1)} s`,
        time(c.getStateMs),
        `${time(c.worstMs)}`,
        time(c.nextMs),
        time(c.nextWorstMs),
        size(median(c.steps.map(ckptBytes))),
        size(Math.max(...c.steps.map(ckptBytes))),
        "",
        size(c.steps.reduce((n, s) => n + s.writes, 0)),
      ]);
    }
    const ck = stepRatio(on, off, ckptBytes);
    const total = (c: Cell) => c.steps.reduce((n, s) => n + s.writes, 0);
    rows.push([
      "",
      "",
      "on/off",
      "",
      fmtRatio(on.getStateMs / off.getStateMs),
      fmtRatio(on.worstMs / off.worstMs),
      fmtRatio(on.nextMs / off.nextMs),
      fmtRatio(on.nextWorstMs / off.nextWorstMs),
      fmtRatio(median(on.steps.map(ckptBytes)) / median(off.steps.map(ckptBytes))),
      fmtRatio(Math.max(...on.steps.map(ckptBytes)) / Math.max(...off.steps.map(ckptBytes))),
      `${fmtRatio(ck.ratio)} (#${ck.step})`,
      fmtRatio(total(on) / total(off)),
    ]);
    const w = on.steps[on.worstIndex] as Step;
    notes.push(
      `${kind} ${turns} turns: ${on.steps.length} checkpoints; worst step #${on.worstIndex + 1} walks ${w.chain} back.`,
    );
  }
}
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
const line = (r: string[]) =>
  r
    .map((c, i) => (i >= 4 ? c.padStart(widths[i] as number) : c.padEnd(widths[i] as number)))
    .join("  ")
    .trimEnd();
console.log(
  `Re-opening a thread, file cache on vs off: ${BIG_FILES} files of ${size(BIG_BYTES)} read whole in the first turns, then cheap calls\n${machine()}\n`,
);
console.log(line(header));
console.log("-".repeat(line(header).length));
for (const r of rows) console.log(line(r));
console.log(
  [
    "",
    "getState: the latest checkpoint, on a fresh graph (SqliteSaver: a new connection). Worst step: getState of the checkpoint",
    "whose cache walks back furthest to its last snapshot (the off thread: the same step). Next invoke: one more turn, from the",
    "latest checkpoint and from the worst step (a fork). ckpt: checkpoint + metadata bytes per step, median and max; max step:",
    "the largest on/off ratio of one step (#: which). Writes total: the writes stored for the whole thread.",
    ...notes,
  ].join("\n"),
);

// --- Headline figures ----------------------------------------------------------------------------------------------
const mid = TURNS.includes(200) ? 200 : (TURNS.at(-1) as number);
const short = TURNS[0] as number;
const long = TURNS.at(-1) as number;
const figures: Figure[] = [];
for (const kind of SAVERS) {
  const on = find(kind, mid, "on");
  const off = find(kind, mid, "off");
  if (on && off) {
    const ratio = (figure: string, of: (c: Cell) => number) =>
      figures.push({
        bench: "resume",
        figure: `${figure}, ${mid} turns, ${kind}, cache on vs off`,
        ours: time(of(on)),
        anchor: `${time(of(off))} off`,
        ratio: fmtRatio(of(on) / of(off)),
        goal: "<= 1.2x",
        met: of(on) / of(off) <= 1.2,
      });
    ratio("getState", (c) => c.getStateMs);
    ratio("getState at the worst step", (c) => c.worstMs);
    ratio("next invoke", (c) => c.nextMs);
    ratio("next invoke from the worst step", (c) => c.nextWorstMs);
    const ck = stepRatio(on, off, ckptBytes);
    figures.push({
      bench: "resume",
      figure: `checkpoint bytes, largest on/off of one step, ${mid} turns, ${kind}`,
      ours: size(on.steps[ck.step - 1]?.bytes ?? 0),
      anchor: `${size(off.steps[ck.step - 1]?.bytes ?? 0)} off`,
      ratio: fmtRatio(ck.ratio),
      goal: "<= 1.2x",
      met: ck.ratio <= 1.2,
    });
  }
  // At the worst step: a thread whose length is a multiple of 100 turns has just snapshotted, and its latest
  // checkpoint reads back cheaply whatever the thread's length (see the table).
  const a = find(kind, short, "on");
  const b = find(kind, long, "on");
  if (a && long !== short) {
    figures.push({
      bench: "resume",
      figure: `getState at the worst step, cache on, ${long} vs ${short} turns, ${kind}`,
      ours: b ? time(b.worstMs) : "not run",
      anchor: `${time(a.worstMs)} at ${short}`,
      ratio: b ? fmtRatio(b.worstMs / a.worstMs) : "",
      goal: "<= 2x",
      met: b ? b.worstMs / a.worstMs <= 2 : null,
    });
  }
}
report(figures);
