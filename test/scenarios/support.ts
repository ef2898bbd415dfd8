/**
 * Scenario support: one script of model responses run through every adapter of the guards — a createReactAgent
 * with `GuardedToolNode` and `escalationHook`, langchain's `createAgent` with `guardMiddleware`, and `replayGuards`
 * over the recording of the same script run without guards — each reduced to one outcome per scripted call. A
 * script can also be several runs of one thread (`runThread`): each started by a person's message, the live
 * adapters invoked once per run on one checkpointer, the recording holding one person's message per run.
 */
import { randomUUID } from "node:crypto";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { type StructuredToolInterface, tool } from "@langchain/core/tools";
import { isInterrupted, MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { z } from "zod";
import {
  type EscalationInterrupt,
  escalationHook,
  type GuardArtifact,
  GuardedToolNode,
  type GuardLog,
  GuardMessagesState,
  isEscalationInterrupt,
  type ToolGuardOptions,
  type ToolGuardState,
} from "../../src/index.js";
import { guardMiddleware } from "../../src/middleware/index.js";
import { type ReplayRun, type ReplayStep, replayGuards } from "../../src/replay/index.js";
import { ScriptedChatModel, type ScriptedToolCall } from "../../src/testing/index.js";

/** A fake tool: `respond(n, args)` answers its n-th run (1-based, counted per tool). */
export interface FakeTool {
  name: string;
  respond: (n: number, args: Record<string, unknown>) => string;
  /** Whether its n-th run fails (the tool throws `respond`'s text; recorded as a failure). */
  fails?: (n: number) => boolean;
  /** The tool's metadata (MCP-style hints: `readOnlyHint`, `idempotentHint`). */
  metadata?: Record<string, unknown>;
  /** The tool's arguments schema (default: an object of any arguments, none declared), live and in replay alike. */
  schema?: z.ZodObject;
}

/** A tool whose n-th run fails with `error` when `fails(n)`, else answers `text`. */
export const failing = (name: string, error: string, fails: (n: number) => boolean, text = "ok"): FakeTool => ({
  name,
  respond: (n) => (fails(n) ? error : text),
  fails,
});

/** A tool that answers the same text every time. */
export const same = (name: string, text: string): FakeTool => ({ name, respond: () => text });

/** A tool whose n-th run answers `text(n)`: something new every time. */
export const changing = (name: string, text: (n: number) => string): FakeTool => ({ name, respond: (n) => text(n) });

/** A tool that answers `texts[n - 1]`, then the last text forever. */
export const sequence = (name: string, texts: string[]): FakeTool => ({
  name,
  respond: (n) => texts[Math.min(n, texts.length) - 1] ?? "",
});

/** One model response with one tool call (the scenarios are sequential). */
export const step = (name: string, args: Record<string, unknown> = {}): ScriptedToolCall => ({ name, args });

/** The same call `n` times, one response each. */
export const times = (n: number, call: ScriptedToolCall): ScriptedToolCall[] => Array.from({ length: n }, () => call);

/**
 * One model response of a script: one tool call, or several parallel ones (an array, in the response's order).
 */
export type ScriptedResponse = ScriptedToolCall | readonly ScriptedToolCall[];

/** The calls of one scripted response. */
const callsOf = (response: ScriptedResponse): readonly ScriptedToolCall[] =>
  Array.isArray(response) ? response : [response as ScriptedToolCall];

/**
 * What happened to one scripted call: `"ran"` (the tool ran), `"served"` (answered from the result cache),
 * `"<rule>@<level>"` (blocked by that rule at that escalation level), or `"stop"` (the run was stopped at this call's response: interrupted or ended). The calls after
 * a stop have no outcome: the model is not called again.
 */
export type Outcome = string;

/** What one adapter did with a script. */
export interface ScenarioResult {
  adapter: Adapter;
  outcomes: Outcome[];
  /** What the model read for each call with an outcome other than "stop" (the answer's text), in order. */
  answers: string[];
  /** How many times each tool actually ran (for the replay: the calls it allowed). */
  ran: Record<string, number>;
  /** The strikes at the end. */
  strikes: number;
  /** The guard state at the end. */
  toolGuard: ToolGuardState;
  /** The escalation interrupt the run stopped at (live adapters). */
  interrupt?: EscalationInterrupt | undefined;
  /** The `artifact.guard` of each answer in `answers`, undefined for a call that ran (live adapters). */
  guards?: (GuardArtifact | undefined)[] | undefined;
  /** The guard log at the end (live adapters). */
  guardLog?: GuardLog | undefined;
}

export type Adapter = "createReactAgent" | "createAgent" | "replayGuards";
export const ADAPTERS: readonly Adapter[] = ["createReactAgent", "createAgent", "replayGuards"];

/** Runs the script (one call per model response) through one adapter, with `tools` and guard `options`. */
export function runScenario(
  adapter: Adapter,
  tools: FakeTool[],
  script: readonly ScriptedResponse[],
  options: ToolGuardOptions = {},
): Promise<ScenarioResult> {
  return runThread(adapter, tools, [script], options);
}

/** How a thread's live adapters are built. */
export interface ThreadSettings {
  /** createReactAgent's `version` (default `"v1"`, as createReactAgent's own default). */
  reactVersion?: "v1" | "v2";
}

/** The person's message that starts the `i`-th run (0-based) of a thread. */
export const askOf = (i: number): string => (i === 0 ? "Go." : `Go on (request ${i + 1}).`);

/**
 * Runs several runs of one thread through one adapter: each run's script (one call per model response) after a
 * person's message, on one checkpointer. The outcomes and answers are the whole thread's, in order; the tools count
 * their runs over the thread. Only the last run may stop: the replay's outcomes end at the first stop.
 */
export async function runThread(
  adapter: Adapter,
  tools: FakeTool[],
  runs: readonly (readonly ScriptedResponse[])[],
  options: ToolGuardOptions = {},
  settings: ThreadSettings = {},
): Promise<ScenarioResult> {
  if (adapter === "replayGuards") return replayScenario(tools, runs, options);
  const ran: Record<string, number> = Object.fromEntries(tools.map((t) => [t.name, 0]));
  const live = tools.map((t) =>
    tool(
      async (args: Record<string, unknown>) => {
        ran[t.name] = (ran[t.name] ?? 0) + 1;
        const n = ran[t.name] as number;
        if (t.fails?.(n) === true) throw new Error(t.respond(n, args));
        return t.respond(n, args);
      },
      { name: t.name, description: `The ${t.name} tool.`, schema: t.schema ?? z.looseObject({}), metadata: t.metadata },
    ),
  );
  const llm = new ScriptedChatModel(
    runs.flatMap((script) => [...script.map((r) => ({ toolCalls: [...callsOf(r)] })), "Finished."]),
  );
  const config = { configurable: { thread_id: randomUUID() }, recursionLimit: 500 };
  const agent = liveAgent(adapter, llm, live, options, settings);
  let result: Record<string, unknown> = {};
  for (let i = 0; i < runs.length; i++) {
    const input = { messages: [{ role: "user", content: askOf(i) }] };
    result = (await agent.invoke(input, config)) as Record<string, unknown>;
  }
  const messages = result.messages as BaseMessage[];
  const interrupt = isInterrupted(result)
    ? result.__interrupt__.map((i) => i.value).find((v) => isEscalationInterrupt(v))
    : undefined;
  const toolGuard = result.toolGuard as ToolGuardState;
  const { outcomes, answers, guards } = outcomesOf(messages);
  const guardLog = result.guardLog as GuardLog | undefined;
  return {
    adapter,
    outcomes,
    answers,
    ran,
    strikes: toolGuard.escalation.strikes,
    toolGuard,
    interrupt,
    guards,
    guardLog,
  };
}

/** The live agent of an adapter: its `invoke` on the thread's checkpointer. */
function liveAgent(
  adapter: Exclude<Adapter, "replayGuards">,
  llm: ScriptedChatModel,
  live: StructuredToolInterface[],
  options: ToolGuardOptions,
  settings: ThreadSettings,
): { invoke: (input: { messages: { role: string; content: string }[] }, config: object) => Promise<unknown> } {
  if (adapter === "createReactAgent") {
    const node = new GuardedToolNode(live, options);
    return createReactAgent({
      llm,
      tools: node,
      stateSchema: GuardMessagesState,
      postModelHook: escalationHook(node),
      checkpointer: new MemorySaver(),
      version: settings.reactVersion ?? "v1",
    });
  }
  return createAgent({
    model: llm,
    tools: live,
    middleware: [guardMiddleware(options)],
    checkpointer: new MemorySaver(),
  });
}

/**
 * One outcome per tool call of the AI messages, in order; a call left unanswered or answered "not run" is "stop".
 * With the answer's text of each call that is not a stop, and its `artifact.guard` (undefined for a call that ran).
 */
export function outcomesOf(messages: BaseMessage[]): {
  outcomes: Outcome[];
  answers: string[];
  guards: (GuardArtifact | undefined)[];
} {
  // A call id the model sent twice answers twice: the n-th answer with an id answers the n-th call with it.
  const replies = new Map<string, ToolMessage[]>();
  for (const m of messages)
    if (ToolMessage.isInstance(m)) replies.set(m.tool_call_id, [...(replies.get(m.tool_call_id) ?? []), m]);
  const outcomes: Outcome[] = [];
  const answers: string[] = [];
  const guards: (GuardArtifact | undefined)[] = [];
  for (const m of messages) {
    if (!AIMessage.isInstance(m)) continue;
    for (const c of m.tool_calls ?? []) {
      const reply = replies.get(c.id ?? "")?.shift();
      const guard = (reply?.artifact as { guard?: GuardArtifact | { stopped: true } | { served: true } } | undefined)
        ?.guard;
      if (reply === undefined || (guard !== undefined && "stopped" in guard)) {
        outcomes.push("stop");
        continue;
      }
      if (guard !== undefined && "blocked" in guard) outcomes.push(`${guard.rule}@${guard.escalation}`);
      else if (guard !== undefined && "served" in guard) outcomes.push("served");
      else outcomes.push(reply.status === "error" ? "failed" : "ran");
      answers.push(String(reply.content));
      guards.push(guard !== undefined && "blocked" in guard ? guard : undefined);
    }
  }
  return { outcomes, answers, guards };
}

/** The script as a recorded run (every call ran, each tool answering as it would have), replayed through the guards. */
export function recordedRun(tools: FakeTool[], script: readonly ScriptedResponse[]): ReplayRun {
  return recordedThread(tools, [script]);
}

/**
 * The runs of a thread as one recording: each run a person's message (`askOf`), its calls (every call ran, each
 * tool answering as it would have, counted over the thread) and a final answer.
 */
export function recordedThread(tools: FakeTool[], runs: readonly (readonly ScriptedResponse[])[]): ReplayRun {
  const counts = new Map<string, number>();
  const steps: ReplayStep[] = [];
  for (const [i, script] of runs.entries()) {
    steps.push({ role: "user", text: askOf(i) });
    for (const response of script) {
      const calls = callsOf(response);
      const ids = (c: ScriptedToolCall) => (c.id === undefined ? {} : { id: c.id });
      steps.push({
        role: "assistant",
        text: "",
        tool_calls: calls.map((c) => ({ name: c.name, args: c.args, ...ids(c) })),
      });
      for (const c of calls) {
        const t = tools.find((x) => x.name === c.name);
        if (t === undefined) throw new Error(`no tool ${c.name}`);
        const n = (counts.get(c.name) ?? 0) + 1;
        counts.set(c.name, n);
        const text = t.respond(n, c.args);
        steps.push({ role: "tool", name: c.name, ok: t.fails?.(n) !== true, text, tool_call_id: c.id });
      }
    }
    steps.push({ role: "assistant", text: "Finished." });
  }
  return { id: "scenario", steps };
}

function replayScenario(
  tools: FakeTool[],
  runs: readonly (readonly ScriptedResponse[])[],
  options: ToolGuardOptions,
): ScenarioResult {
  const { decisions, state } = replayGuards(recordedThread(tools, runs), {
    ...options,
    // As the live adapters see them: their metadata and their schema.
    agentTools: tools.map((t) => ({ name: t.name, metadata: t.metadata, schema: t.schema ?? z.looseObject({}) })),
  });
  const ran: Record<string, number> = Object.fromEntries(tools.map((t) => [t.name, 0]));
  const outcomes: Outcome[] = [];
  const answers: string[] = [];
  for (const d of decisions) {
    if (d.action === "stop") {
      // The live run stops at this response (every call of it answered "not run"): the model is not called again.
      for (const other of decisions) if (other.step === d.step) outcomes.push("stop");
      break;
    }
    if (d.action === "allow") ran[d.toolName] = (ran[d.toolName] ?? 0) + 1;
    const action = d.action === "cache" ? "served" : d.action;
    outcomes.push(action === "allow" ? "ran" : action === "block" ? `${d.rule}@${d.escalation}` : action);
    answers.push(d.content);
  }
  return { adapter: "replayGuards", outcomes, answers, ran, strikes: state.escalation.strikes, toolGuard: state };
}

/** The position (1-based among the scripted calls) of the call the run stopped at, or undefined. */
export const stopAt = (r: ScenarioResult): number | undefined => {
  const i = r.outcomes.indexOf("stop");
  return i < 0 ? undefined : i + 1;
};

/** A tool that does one step of some work: a new answer for each step. */
export const work = tool(async ({ n }: { n: number }) => `step ${n} done`, {
  name: "work",
  description: "Does one step of the work",
  schema: z.object({ n: z.number() }),
});

/** A model that works forever: a new step each turn, with new words. */
export const endless = (): ScriptedChatModel => {
  let n = 0;
  return new ScriptedChatModel(() => ({
    content: `Next: ${randomUUID()}`,
    toolCalls: [{ name: "work", args: { n: n++ } }],
  }));
};
