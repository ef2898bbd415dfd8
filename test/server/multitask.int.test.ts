/**
 * One thread, two runs at once, on a real LangGraph server: `npx langgraphjs dev` serves
 * examples/server/multitask/langgraph.json (graph `slow_react`: createReactAgent + GuardedToolNode; graph
 * `slow_agent`: createAgent + guardMiddleware), whose `update_ticket` tool takes 1.5 s and logs its side effect to a
 * file. Each person's message makes the model call it, repeat the call once (the guards block the repeat as
 * redundant) and answer. Run A is started; while its tool runs, run B (a new person's message) is sent on the same
 * thread with a `multitaskStrategy`, and the test reads what the server did (run statuses, errors), the side-effect
 * log, and the thread's guard state (`toolGuard`).
 *
 * LangGraph itself does not serialise two runs of one thread; the server does, by this strategy. `reject` refuses B
 * (HTTP 422) and `enqueue` runs it after A: the side effects happen once per accepted run and the guard state holds
 * every run's calls. `interrupt` and `rollback` abort A mid-tool on this server (the in-memory one of
 * `langgraphjs dev`): A's side effect has happened, but its tool result and its guard record never reach the
 * checkpoint, and `rollback` keeps A's checkpoints (A's messages stay in the thread).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, type Run } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SideEffect } from "../../examples/server/multitask/slow.js";
import { type DevServer, START_TIMEOUT_MS, startDevServer } from "./dev-server.js";

const CONFIG = "examples/server/multitask/langgraph.json";

interface WireMessage {
  id?: string;
  type: string;
  content: unknown;
  status?: string;
  artifact?: { guard?: { blocked?: boolean; rule?: string } };
}

interface ToolGuardWire {
  stats: { allowed: number; blocked: Record<string, number> };
  /** The id of the person's message that started the current run. */
  run?: string | null;
}

interface ThreadValues {
  messages: WireMessage[];
  toolGuard?: ToolGuardWire;
}

let server: DevServer | undefined;
let client: Client;
let scratch: string;
let effectsLog: string;
const threads: string[] = [];

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "langgraph-guards-multitask-"));
  effectsLog = join(scratch, "side-effects.jsonl");
  server = await startDevServer(CONFIG, { SIDE_EFFECTS_LOG: effectsLog, SLOW_TOOL_MS: "1500" });
  client = new Client({ apiUrl: server.url });
}, START_TIMEOUT_MS + 10_000);

afterAll(async () => {
  // Leave the server's storage (examples/server/multitask/.langgraph_api) as it was: the test's threads go.
  if (client) await Promise.allSettled(threads.map((id) => client.threads.delete(id)));
  if (server) await server.stop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

const person = (content: string) => ({ messages: [{ role: "user", content }] });

/** The side effects `update_ticket` logged on one thread, in order. */
function effects(threadId: string): SideEffect[] {
  let text = "";
  try {
    text = readFileSync(effectsLog, "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as SideEffect)
    .filter((e) => e.thread_id === threadId);
}

/** The phases the log holds for one run, e.g. `["start", "end"]`. */
const phasesOf = (threadId: string, runId: string) =>
  effects(threadId)
    .filter((e) => e.run_id === runId)
    .map((e) => e.phase);

/** Waits until the run's tool has started (its side effect is logged): the run is mid-tool. */
async function toolStarted(threadId: string, runId: string): Promise<void> {
  const deadline = Date.now() + 60_000; // a hang guard: a loaded machine can take long
  while (Date.now() < deadline) {
    const started = effects(threadId).find((e) => e.run_id === runId && e.phase === "start");
    if (started) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`run ${runId}'s tool did not start:\n${server?.log() ?? ""}`);
}

/** Starts run A on a new thread and waits until its slow tool is running. */
async function runAMidTool(graph: string) {
  const { thread_id: threadId } = await client.threads.create();
  threads.push(threadId);
  const a = await client.runs.create(threadId, graph, { input: person("Close ticket 7.") });
  await toolStarted(threadId, a.run_id);
  return { threadId, a };
}

async function guardState(threadId: string) {
  const { values } = await client.threads.getState<ThreadValues>(threadId);
  const guard = values.toolGuard;
  if (!guard) throw new Error(`no toolGuard in the thread's state: ${JSON.stringify(values)}`);
  const humans = values.messages.filter((m) => m.type === "human");
  /** The tool replies after each person's message: "ok" for a call that ran, the rule for a blocked one. */
  const repliesPerPerson = humans.map((h) => {
    const after = values.messages.slice(values.messages.indexOf(h) + 1);
    const next = after.findIndex((m) => m.type === "human");
    return (next === -1 ? after : after.slice(0, next))
      .filter((m) => m.type === "tool")
      .map((m) => m.artifact?.guard?.rule ?? (m.status === "error" ? "error" : "ok"));
  });
  return { guard, humans, repliesPerPerson };
}

const statuses = async (threadId: string, ids: Record<string, string>) => {
  const runs = await client.runs.list(threadId);
  const name = (r: Run) => Object.entries(ids).find(([, id]) => id === r.run_id)?.[0] ?? r.run_id;
  return Object.fromEntries(runs.map((r) => [name(r), r.status]));
};

describe.each(["slow_react", "slow_agent"])("graph %s: two runs on one thread at once", (graph) => {
  it('"reject" refuses the second run with HTTP 422; the first runs its side effect once and is all the guard state holds', async () => {
    const { threadId, a } = await runAMidTool(graph);

    const refused = client.runs.create(threadId, graph, {
      input: person("Close ticket 7 again."),
      multitaskStrategy: "reject",
    });
    await expect(refused).rejects.toMatchObject({
      status: 422,
      message:
        "HTTP 422: Thread is already running a task. Wait for it to finish or choose a different multitask strategy.",
    });

    await client.runs.join(threadId, a.run_id);
    // B was never stored: the thread has run A only, and B's message never reached the thread.
    expect(await statuses(threadId, { A: a.run_id })).toEqual({ A: "success" });
    expect(phasesOf(threadId, a.run_id)).toEqual(["start", "end"]);
    expect(effects(threadId)).toHaveLength(2); // one side effect, of run A

    const { guard, humans, repliesPerPerson } = await guardState(threadId);
    expect(humans.map((h) => h.content)).toEqual(["Close ticket 7."]);
    expect(repliesPerPerson).toEqual([["ok", "redundant"]]);
    expect(guard.stats.allowed).toBe(1);
    expect(guard.stats.blocked.redundant).toBe(1);
    expect(guard.run).toBe(humans[0]?.id);
  });

  it('"enqueue" holds the second run pending and runs it after the first; the guard state holds both runs', async () => {
    const { threadId, a } = await runAMidTool(graph);

    const b = await client.runs.create(threadId, graph, {
      input: person("Close ticket 7 again."),
      multitaskStrategy: "enqueue",
    });
    expect(b.status).toBe("pending");
    expect((await client.runs.get(threadId, b.run_id)).status).toBe("pending"); // A's tool is still running
    expect(phasesOf(threadId, a.run_id)).toEqual(["start"]);

    await client.runs.join(threadId, b.run_id);
    expect(await statuses(threadId, { A: a.run_id, B: b.run_id })).toEqual({ A: "success", B: "success" });
    // One side effect per run, B's strictly after A's had finished.
    const log = effects(threadId).map((e) => [
      e.run_id === a.run_id ? "A" : e.run_id === b.run_id ? "B" : e.run_id,
      e.phase,
    ]);
    expect(log).toEqual([
      ["A", "start"],
      ["A", "end"],
      ["B", "start"],
      ["B", "end"],
    ]);
    const [aRun, bRun] = [await client.runs.get(threadId, a.run_id), await client.runs.get(threadId, b.run_id)];
    expect(Date.parse(bRun.created_at)).toBeLessThan(Date.parse(aRun.updated_at)); // B was queued while A ran

    // B's message started a new run of the guards (docs/guards.md#runs): B's first call, identical to A's, ran
    // (a change made again after a person's new message is not judged redundant); B's repeat within its own run was
    // blocked, as A's was. The counters hold both runs.
    const { guard, humans, repliesPerPerson } = await guardState(threadId);
    expect(humans.map((h) => h.content)).toEqual(["Close ticket 7.", "Close ticket 7 again."]);
    expect(repliesPerPerson).toEqual([
      ["ok", "redundant"],
      ["ok", "redundant"],
    ]);
    expect(guard.stats.allowed).toBe(2);
    expect(guard.stats.blocked.redundant).toBe(2);
    expect(guard.run).toBe(humans[1]?.id);
  });

  it.each(["interrupt", "rollback"] as const)(
    '"%s" aborts the first run mid-tool: its side effect happened, and the guard state has no record of it',
    async (strategy) => {
      const { threadId, a } = await runAMidTool(graph);

      const b = await client.runs.create(threadId, graph, {
        input: person("Close ticket 7 again."),
        multitaskStrategy: strategy,
      });
      expect(b.status).toBe("pending");
      await client.runs.join(threadId, b.run_id);

      // On the in-memory server, A (running) is aborted and ends as "error", not "interrupted", and is not deleted.
      expect(await statuses(threadId, { A: a.run_id, B: b.run_id })).toEqual({ A: "error", B: "success" });
      // A's tool started (its side effect) and never finished; B's ran in full.
      expect(phasesOf(threadId, a.run_id)).toEqual(["start"]);
      expect(phasesOf(threadId, b.run_id)).toEqual(["start", "end"]);

      // A's message and its tool call stay in the thread (even with "rollback"), with no tool result; the guards
      // recorded B's calls only: the side effect of A's call is invisible to them (at-least-once).
      const { guard, humans, repliesPerPerson } = await guardState(threadId);
      expect(humans.map((h) => h.content)).toEqual(["Close ticket 7.", "Close ticket 7 again."]);
      expect(repliesPerPerson).toEqual([[], ["ok", "redundant"]]);
      expect(guard.stats.allowed).toBe(1);
      expect(guard.stats.blocked.redundant).toBe(1);
      expect(guard.run).toBe(humans[1]?.id);
    },
  );
});
