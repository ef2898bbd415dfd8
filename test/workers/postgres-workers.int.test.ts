/**
 * Scale-out on a Postgres checkpointer (issue 18): long-lived worker processes (test/fixtures/worker-process.ts)
 * that share one `PostgresSaver` database serve the turns of threads, as LangGraph workers do.
 *
 * - Two workers alternating the turns of one thread decide exactly as one process does, for every guard
 *   (GuardedToolNode with the escalation hook and the file tools' cache, loopDetectHook, guardMiddleware).
 * - 50 threads driven from 2 workers at once: no thread sees another's guard state; each reads back.
 * - A worker killed with `kill -9` while a tool runs: another worker resumes the thread from its last checkpoint
 *   and the decisions are those of an uninterrupted run. The killed call runs again (at-least-once).
 *
 * One runner per thread at a time: the workers never run the same thread at once here (LangGraph does not
 * serialise two runs of one thread; see test/graph/concurrent.int.test.ts).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { identifyCall, resolveToolGuardOptions } from "../../src/core/index.js";
import { type GuardKind, script } from "../fixtures/worker-agents.js";
import type { Request, ThreadState, TurnRequest } from "../fixtures/worker-process.js";
import { freshDatabase, type PgServer, startPostgres } from "../support/postgres.js";

const repo = join(import.meta.dirname, "..", "..");
const started = await startPostgres();
const skip = "skip" in started ? started.skip : undefined;

/** A worker process: requests in, answers out, one JSON line each. */
class Worker {
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private readonly blockedCalls: string[] = [];
  private onBlocked: () => void = () => {};
  private next = 0;
  private err = "";
  readonly ready: Promise<void>;
  readonly exited: Promise<[number | null, NodeJS.Signals | null]>;

  constructor(readonly child: ChildProcess = spawnWorker()) {
    let onReady: () => void = () => {};
    this.ready = new Promise((resolve) => {
      onReady = resolve;
    });
    child.stderr?.on("data", (d) => {
      this.err += d;
    });
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
      const m = JSON.parse(line) as
        | "ready"
        | { event: "blocked"; call: string }
        | { id: number; ok: boolean; value?: unknown; error?: string };
      if (m === "ready") onReady();
      else if ("event" in m) {
        this.blockedCalls.push(m.call);
        this.onBlocked();
      } else {
        const p = this.pending.get(m.id);
        this.pending.delete(m.id);
        if (m.ok) p?.resolve(m.value);
        else p?.reject(new Error(m.error));
      }
    });
    this.exited = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
    void this.exited.then(([code, signal]) => {
      for (const p of this.pending.values()) p.reject(new Error(`worker exited (${code ?? signal}): ${this.err}`));
      this.pending.clear();
    });
  }

  call<T>(request: Request): Promise<T> {
    this.next += 1;
    const id = this.next;
    const answer = new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
    });
    this.child.stdin?.write(`${JSON.stringify({ id, ...request })}\n`);
    return answer;
  }

  /** Resolves with the call id once a logged tool of this worker blocks. */
  blocked(): Promise<string> {
    return new Promise((resolve) => {
      this.onBlocked = () => resolve(this.blockedCalls[0] as string);
      if (this.blockedCalls.length > 0) this.onBlocked();
    });
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.stdin?.write(`${JSON.stringify({ id: 0, op: "exit" })}\n`);
    await this.exited;
  }
}

function spawnWorker(): ChildProcess {
  return spawn(process.execPath, ["--import", "tsx", "test/fixtures/worker-process.ts"], {
    cwd: repo,
    stdio: ["pipe", "pipe", "pipe"],
  });
}

/** The project folders and tool logs (made in beforeAll). */
let dir = "";

/** A project folder of the file tools, made an hour ago. */
function project(name: string): string {
  const root = join(dir, name);
  mkdirSync(root);
  writeFileSync(join(root, "config.json"), '{ "debug": true }\n');
  const hourAgo = new Date(Date.now() - 3_600_000);
  utimesSync(join(root, "config.json"), hourAgo, hourAgo);
  utimesSync(root, hourAgo, hourAgo);
  return root;
}

/** The log of the logged tools of the `kind` thread of the run on `root`. */
const logOf = (root: string, kind: GuardKind) => `${root}.${kind}.log`;

/** How many times each logged call ran. */
function runsOf(logFile: string): Record<string, number> {
  const runs: Record<string, number> = {};
  for (const id of readFileSync(logFile, "utf8").split("\n").filter(Boolean)) runs[id] = (runs[id] ?? 0) + 1;
  return runs;
}

/** What differs between two runs of one script: the project folder, clock times, inodes, checkpoint ids. */
const VARYING = new Set(["at", "mtimeMs", "ctimeMs", "ino", "cachedAt", "scannedAt", "startedAt", "checkpointId"]);
function stable(value: unknown, root: string): unknown {
  if (typeof value === "string") return value.replaceAll(root, "<root>");
  if (Array.isArray(value)) return value.map((v) => stable(v, root));
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => !VARYING.has(k))
      .map(([k, v]) => [stable(k, root), stable(v, root)]),
  );
}

/** One line per tool call: the tool and what the guards made of it. */
const fates = (s: ThreadState) =>
  s.decisions.map(
    (d) =>
      `${d.tool} ${d.rule ? `${d.rule} ${d.level}` : d.status === "success" ? "ran" : "failed"}${d.cached ? " (cache)" : ""}`,
  );

const ANSWER = "Leave it alone and try something else.";
/** The invocations of the full script, by guard. */
const INPUTS: Record<GuardKind, TurnRequest["input"][]> = {
  node: [{ message: 0 }, { message: 1 }, { resume: ANSWER }, { message: 2 }],
  loop: [{ message: 0 }, { message: 1 }, { message: 2 }],
  middleware: [{ message: 0 }, { message: 1 }, { resume: ANSWER }, { message: 2 }],
};
const KINDS = ["node", "loop", "middleware"] as const;

describe.skipIf(skip !== undefined)(
  `guards on workers sharing a PostgresSaver${skip ? ` (skipped: ${skip})` : ""}`,
  () => {
    const server = started as PgServer;
    let workers: [Worker, Worker];
    /** Workers started ahead, to be killed. */
    let doomed: Worker[];

    beforeAll(async () => {
      dir = realpathSync(mkdtempSync(join(tmpdir(), "langgraph-guards-workers-")));
      workers = [new Worker(), new Worker()];
      doomed = [new Worker(), new Worker()];
      await Promise.all([...workers, ...doomed].map((w) => w.ready));
    });
    afterAll(async () => {
      for (const w of doomed ?? []) w.child.kill("SIGKILL");
      await Promise.all((workers ?? []).map((w) => w.close()));
      await server.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    /**
     * A new database, its tables made by one worker before the others open it: `setup()` on an empty database from
     * two processes at once fails in one of them (duplicate key in pg_type or checkpoint_migrations), so a real
     * deployment runs it once, before the workers start.
     */
    async function database(...users: Worker[]): Promise<string> {
      const db = await freshDatabase(server);
      for (const w of users) await w.call({ op: "open", db });
      return db;
    }

    /** Runs the full script of `kind` on thread `kind` of `db`, turn `i` on `pick(i)`; the state after each turn. */
    async function runScript(kind: GuardKind, db: string, root: string, pick: (turn: number) => Worker, from = 0) {
      const states: ThreadState[] = [];
      for (const [i, input] of INPUTS[kind].entries()) {
        if (i < from) continue;
        const request = { op: "turn", db, thread: kind, kind, script: "full", arg: "a1", root } as const;
        states.push(await pick(i).call<ThreadState>({ ...request, logFile: logOf(root, kind), input }));
      }
      return states;
    }

    /** The single-process run, on its own database: the reference. */
    let single: Promise<{ root: string; states: Record<GuardKind, ThreadState[]> }> | undefined;
    function singleRun() {
      single ??= (async () => {
        const root = project("single");
        const db = await database(workers[0]);
        const states = await Promise.all(KINDS.map((kind) => runScript(kind, db, root, () => workers[0])));
        return {
          root,
          states: { node: states[0], loop: states[1], middleware: states[2] } as Record<GuardKind, ThreadState[]>,
        };
      })();
      return single;
    }

    it("two workers alternating the turns of a thread decide exactly as one process, for every guard", async () => {
      const root = project("alternating");
      const db = await database(...workers);
      const [one, alternating] = await Promise.all([
        singleRun(),
        Promise.all(KINDS.map((kind) => runScript(kind, db, root, (turn) => workers[turn % 2] as Worker))),
      ]);

      // The reference exercises each guard: cache answers, blocks, levels 1-3 with the person's answer, new runs.
      expect(one.states.node.at(-1)?.decisions.map((d) => d.call)).toHaveLength(15);
      expect(fates(one.states.node.at(-1) as ThreadState)).toEqual([
        "read_file ran",
        "read_file ran (cache)",
        "search_docs ran",
        "list_files ran",
        "search_docs redundant 1",
        "write_to_file ran",
        "read_file ran (cache)",
        "update_record failed",
        "update_record redundant 1",
        "update_record redundant 2",
        "update_record redundant 3", // the person's answer to the level-3 question
        "search_docs ran",
        "read_file ran (cache)", // a new run
        "read_file ran (cache)",
        "search_docs ran",
      ]);
      expect(one.states.node[1]?.asked?.attempts).toBe(3);
      expect(fates(one.states.loop.at(-1) as ThreadState)).toEqual([
        "search_docs ran",
        "search_docs consecutive 1",
        "search_docs failed", // not run: the loop stopped the run
        "update_record failed",
        "update_record redundant 1",
        "search_docs ran",
        "search_docs ran",
        "search_docs ran",
        // maxIterations: 3 runs 3 full turns (issue 43, class 9: openai-agents' max_turns, pydantic-ai's
        // request_limit): the 3rd search of the run ran, the 4th is not run.
        "search_docs ran",
        "search_docs failed", // not run: the iteration limit
      ]);
      expect(one.states.loop.map((s) => s.last.slice(0, 30))).toEqual([
        "Stopped: loop detected, the ou",
        "Done.",
        "Stopped: the iteration limit w",
      ]);
      expect(fates(one.states.middleware.at(-1) as ThreadState)).toEqual([
        "search_docs ran",
        "search_docs ran",
        "search_docs redundant 1",
        "write_note ran",
        "write_note consecutive 1",
        "write_note consecutive 2",
        "write_note consecutive 3",
        "search_docs ran",
        "update_record failed",
        "update_record redundant 1",
        "search_docs ran",
      ]);
      expect(one.states.middleware[1]?.asked?.attempts).toBe(3);

      for (const [k, kind] of KINDS.entries()) {
        const ours = alternating[k] as ThreadState[];
        const theirs = one.states[kind];
        expect(ours).toHaveLength(theirs.length);
        for (const [i, state] of ours.entries()) {
          const label = `${kind}, invocation ${i} (worker ${i % 2})`;
          // Every decision (rule, level, content), the question asked, the last message...
          expect(stable(state.decisions, root), label).toEqual(stable(theirs[i]?.decisions, one.root));
          expect(stable(state.asked, root), label).toEqual(stable(theirs[i]?.asked, one.root));
          expect([state.last, state.messages, state.interrupted], label).toEqual([
            theirs[i]?.last,
            theirs[i]?.messages,
            theirs[i]?.interrupted,
          ]);
          // ...strikes and counters, and the whole guard state (windows, operations, runs, loop and cache state).
          expect(state.toolGuard?.escalation.strikes, label).toBe(theirs[i]?.toolGuard?.escalation.strikes);
          expect(state.toolGuard?.stats, label).toEqual(theirs[i]?.toolGuard?.stats);
          expect(stable(state.toolGuard, root), label).toEqual(stable(theirs[i]?.toolGuard, one.root));
          expect(stable(state.loopGuard, root), label).toEqual(stable(theirs[i]?.loopGuard, one.root));
          expect(stable(state.fileCache, root), label).toEqual(stable(theirs[i]?.fileCache, one.root));
        }
        // Every call a logged tool ran, ran once, in both.
        const runs = runsOf(logOf(root, kind));
        expect(runs).toEqual(runsOf(logOf(one.root, kind)));
        expect(Object.values(runs).every((n) => n === 1)).toBe(true);
      }
    });

    it("50 threads driven from 2 workers at once: no thread sees another's guard state", async () => {
      const db = await database(...workers);
      const root = project("concurrent");
      const threads = Array.from({ length: 50 }, (_, i) => ({
        thread: `thread-${i}`,
        kind: KINDS[i % 3] as GuardKind,
        arg: `q${String(i).padStart(2, "0")}z`,
        worker: i % 2,
      }));
      const turn = (t: (typeof threads)[number], message: number, worker: Worker) =>
        worker.call<ThreadState>({
          op: "turn",
          db,
          thread: t.thread,
          kind: t.kind,
          script: "short",
          arg: t.arg,
          root,
          logFile: join(dir, `concurrent-${t.thread}.log`),
          input: { message },
        });
      // Each worker takes 25 threads, all in flight at once; then the other worker takes each thread's next turn.
      await Promise.all(threads.map((t) => turn(t, 0, workers[t.worker] as Worker)));
      const after = await Promise.all(threads.map((t) => turn(t, 1, workers[1 - t.worker] as Worker)));
      // Read back by the worker that did not write the last checkpoint.
      const read = await Promise.all(
        threads.map((t) =>
          (workers[t.worker] as Worker).call<ThreadState>({ op: "state", db, thread: t.thread, kind: t.kind }),
        ),
      );

      const expected: Record<GuardKind, { fates: string[]; allowed: number; blocked: number }> = {
        node: {
          fates: ["search_docs ran", "search_docs consecutive 1", "search_docs ran", "search_docs ran"],
          allowed: 3,
          blocked: 1,
        },
        middleware: {
          fates: ["search_docs ran", "search_docs consecutive 1", "search_docs ran", "search_docs ran"],
          allowed: 3,
          blocked: 1,
        },
        // The third identical response, after the same (the guard's) answer, is a loop: the run stops before its
        // call runs (issue 63: the second is the first to see the search's answer).
        loop: {
          fates: ["search_docs ran", "search_docs consecutive 1", "search_docs failed", "search_docs ran"],
          allowed: 2,
          blocked: 1,
        },
      };
      for (const [i, t] of threads.entries()) {
        const state = after[i] as ThreadState;
        const back = read[i] as ThreadState;
        const label = `${t.thread} (${t.kind})`;
        expect(fates(state), label).toEqual(expected[t.kind].fates);
        const stats = state.toolGuard?.stats;
        expect(stats?.allowed, label).toBe(expected[t.kind].allowed);
        expect(
          Object.values(stats?.blocked ?? {}).reduce((a, b) => a + b, 0),
          label,
        ).toBe(expected[t.kind].blocked);
        // Only this thread's calls: its own argument in every text, its own call keys in the window and operations.
        const own = new Set(
          script(t.kind, "short", t.arg)
            .flat()
            // The guards' identity of each call (a search's question as its words: issue 63).
            .flatMap(([, calls]) => calls.map((c) => identifyCall(c, resolveToolGuardOptions()).key)),
        );
        const guard = state.toolGuard;
        expect(guard?.repetition.window.length, label).toBeGreaterThan(0);
        for (const r of guard?.repetition.window ?? []) expect(own.has(r.key), label).toBe(true);
        for (const key of Object.keys(guard?.operations.ops ?? {})) expect(own.has(key), label).toBe(true);
        const args = new Set(JSON.stringify([state.decisions, guard, state.loopGuard]).match(/q\d\dz/g));
        expect([...args], label).toEqual([t.arg]);
        expect(runsOf(join(dir, `concurrent-${t.thread}.log`)), label).toEqual(
          Object.fromEntries(
            state.decisions.filter((d) => d.rule === null && d.status === "success").map((d) => [d.call, 1]),
          ),
        );
        // The latest checkpoint reads back, in the other worker, as the writer saw it.
        expect(back.checkpointId, label).not.toBeNull();
        expect({ ...back, checkpointId: null }, label).toEqual({
          ...state,
          checkpointId: null,
          interrupted: undefined,
        });
      }
    });

    it.each([
      ["node", "c0_2_0"], // search_docs, run in parallel with list_files (one tool-node task)
      ["middleware", "c1_0_0"], // the first write_note
    ] as const)(
      "kill -9 while a tool of a %s turn runs (%s): another worker resumes, same decisions, the killed call runs again",
      async (kind, killedCall) => {
        const [doomedWorker, other] = [doomed[kind === "node" ? 0 : 1] as Worker, workers[1]];
        const root = project(`kill-${kind}`);
        const logFile = logOf(root, kind);
        const db = await database(doomedWorker, other);
        const request = { op: "turn", db, thread: kind, kind, script: "full", arg: "a1", root, logFile } as const;
        const turnOfKill = Number(killedCall[1]);

        // The turns before, then the turn of the kill, on the doomed worker; it blocks in the tool after its effect.
        for (const input of INPUTS[kind].slice(0, turnOfKill)) await doomedWorker.call({ ...request, input });
        const prior = await other.call<ThreadState>({ op: "state", db, thread: kind, kind });
        const dying = doomedWorker
          .call({ ...request, input: INPUTS[kind][turnOfKill] ?? null, blockAt: killedCall })
          .catch((e: Error) => e);
        expect(await doomedWorker.blocked()).toBe(killedCall);
        // The last checkpoint has the killed call's AI message, unanswered. LangGraph stores a step's checkpoint while
        // the next step already runs (durability "async"), so the tool can block before the checkpoint with its AI
        // message is written: wait for it (the turn's person's message and that AI message), as a kill in production
        // would only lose that step, not more.
        let before = await other.call<ThreadState>({ op: "state", db, thread: kind, kind });
        for (let i = 0; i < 1200 && before.messages < prior.messages + 2; i += 1) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          before = await other.call<ThreadState>({ op: "state", db, thread: kind, kind });
        }
        expect(before.messages).toBeGreaterThanOrEqual(prior.messages + 2);
        expect(before.decisions.map((d) => d.call)).not.toContain(killedCall);
        doomedWorker.child.kill("SIGKILL");
        expect((await doomedWorker.exited)[1]).toBe("SIGKILL");
        expect(String(await dying)).toMatch(/worker exited \(SIGKILL\)/);

        // Another worker goes on from the last checkpoint (input null), then takes the remaining turns.
        const resumed = await other.call<ThreadState>({ ...request, input: null });
        const rest = await runScript(kind, db, root, () => other, turnOfKill + 1);
        const one = await singleRun();
        const reference = one.states[kind];
        expect(stable(resumed, root)).toEqual(stable(reference[turnOfKill], one.root));
        for (const [i, state] of rest.entries())
          expect(stable(state, root)).toEqual(stable(reference[turnOfKill + 1 + i], one.root));

        // At-least-once: the killed call ran in the killed worker (its side effect happened before the kill) and
        // again in the resuming one, which re-ran the step from the last checkpoint. Every other call ran once. (In
        // createReactAgent v1 the whole tool node is one task: a call of the same AI message that had finished, here
        // list_files, runs again too; it has no side effect to count.)
        const runs = runsOf(logFile);
        expect(runs[killedCall]).toBe(2);
        expect({ ...runs, [killedCall]: 1 }).toEqual(runsOf(logOf(one.root, kind)));
      },
    );
  },
);
