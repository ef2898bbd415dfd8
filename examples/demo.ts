/**
 * The langgraph-guards demo: a createReactAgent with a GuardedToolNode walks through four scenarios of redundant
 * calls (re-reads, retries of a failed call, repeated writes, repeated searches) on a scripted model — no network,
 * MemorySaver — and prints a transcript that marks each block and the rule that blocked it, then shows what a
 * blocked call looks like to the model. In scenario 5 an agent that keeps repeating a failing call escalates from a
 * question to explicit options, to a person (`interrupt()`, answered from the script), to the end of the run. Every
 * scenario uses the same project tools (examples/workspace.ts).
 *
 *   npm run demo                               # scripted model (offline)
 *   npm run demo -- --model openai:gpt-4.1     # the same agent on a real model (needs langchain's provider
 *                                              # package, e.g. @langchain/openai, and its API key)
 */

import { createInterface } from "node:readline/promises";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseMessage, ToolMessage } from "@langchain/core/messages";
import { Command, MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import {
  escalationHook,
  type GuardArtifact,
  GuardedToolNode,
  GuardMessagesState,
  guardMetrics,
  isEscalationInterrupt,
} from "langgraph-guards";
import { canonicalJson } from "langgraph-guards/core";
import { ScriptedChatModel, type ScriptedToolCall } from "langgraph-guards/testing";
import { runEscalationExample } from "./escalation.js";
import { createWorkspaceTools, sampleProject } from "./workspace.js";

const RULES: Record<GuardArtifact["rule"], string> = {
  consecutive: "rule consecutive · identical to the previous call",
  threshold: "rule threshold · too many identical calls in the window",
  redundant: "rule redundant · the result is still valid",
  near_duplicate: "rule near_duplicate · a repeat of a blocked call",
  repeat_failure: "rule repeat_failure · the same error again",
  cycle: "rule cycle · a cycle of calls gone round with the same results",
  file_edits: "rule file_edits · one file written too often in the run",
  repeat_ceiling: "rule repeat_ceiling · one call repeated too often in the run",
};

const color = process.stdout.isTTY && !process.env.NO_COLOR;
const paint = (code: number, text: string) => (color ? `\u001b[${code}m${text}\u001b[0m` : text);
const green = (t: string) => paint(32, t);
const red = (t: string) => paint(31, t);
const dim = (t: string) => paint(2, t);
const bold = (t: string) => paint(1, t);

interface Scenario {
  title: string;
  turns: ScriptedToolCall[][];
  note: string;
}

const c = (name: string, args: Record<string, unknown>): ScriptedToolCall => ({ name, args });
const SCENARIOS: Scenario[] = [
  {
    title: "Scenario 1 — reading the same file multiple times",
    turns: [
      [c("read_file", { path: "config.py" })],
      [c("read_file", { path: "config.py" })],
      [c("list_files", { path: "./" })],
      [c("read_file", { path: "config.py" })],
    ],
    note: "The immediate re-read is a consecutive duplicate; after other work it is a redundant read.",
  },
  {
    title: "Scenario 2 — retrying failed operations",
    turns: [
      [c("read_file", { path: "missing.py" })],
      [c("read_file", { path: "missing.py" })],
      [c("write_to_file", { path: "other.py", content: "x = 1\n" })],
      [c("read_file", { path: "missing.py" })],
    ],
    note: "A failed read is never 'redundant': after other work the retry is allowed (the file may exist now).",
  },
  {
    title: "Scenario 3 — write operations",
    turns: [
      [c("write_to_file", { path: "app.py", content: "content1" })],
      [c("write_to_file", { path: "app.py", content: "content1" })],
      [c("write_to_file", { path: "app.py", content: "content2" })],
      [c("list_files", { path: "src" })],
      [c("write_to_file", { path: "app.py", content: "content1" })],
      [c("list_files", { path: "tests" })],
      [c("write_to_file", { path: "app.py", content: "content1" })],
      [c("list_files", { path: "docs" })],
      [c("write_to_file", { path: "app.py", content: "content1" })],
    ],
    note: "Writes are never redundant, but the same write a 4th time in the window hits the threshold.",
  },
  {
    title: "Scenario 4 — search operations",
    turns: [
      [c("search_in_file", { pattern: "TODO", path: "app.py" })],
      [c("search_in_file", { pattern: "FIXME", path: "app.py" })],
      [c("search_in_file", { pattern: "TODO", path: "app.py" })],
      [c("search_in_file", { pattern: "TODO", path: "main.py" })],
    ],
    note: "The same search in the same file is redundant; the same pattern in another file is new work.",
  },
  {
    title: "Bonus — two identical calls in one AI message",
    turns: [[c("read_file", { path: "models.py" }), c("read_file", { path: "models.py" })]],
    note: "Parallel calls are decided in order: the second is a consecutive duplicate and never runs.",
  },
];

function firstLine(text: string, max = 60): string {
  const line = text.split("\n").find((l) => l.trim() !== "") ?? "";
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** Prints each tool call of `messages` with its fate; returns the first blocked ToolMessage content. */
function printTranscript(messages: BaseMessage[]): string | undefined {
  const calls = new Map<string, { name: string; args: unknown }>();
  let firstBlock: string | undefined;
  let n = 0;
  for (const m of messages) {
    if (m.getType() === "ai") {
      for (const tc of (m as { tool_calls?: { id?: string; name: string; args: unknown }[] }).tool_calls ?? []) {
        calls.set(tc.id ?? "", { name: tc.name, args: tc.args });
      }
      const text = typeof m.content === "string" ? m.content.trim() : "";
      if (text) console.log(`     ${dim("model:")} ${firstLine(text, 100)}`);
      continue;
    }
    if (m.getType() !== "tool") continue;
    const tm = m as ToolMessage;
    const info = calls.get(tm.tool_call_id);
    const callText = `${tm.name}(${canonicalJson(info?.args ?? {})})`;
    const guard = (tm.artifact as { guard?: GuardArtifact } | undefined)?.guard;
    n += 1;
    const head = `  ${String(n).padStart(2)}. ${callText.padEnd(58)}`;
    if (guard) {
      firstBlock ??= String(tm.content);
      console.log(`${head} ${red("✗ BLOCKED")}  ${RULES[guard.rule]}`);
    } else if (tm.status === "error") {
      console.log(`${head} ${green("✓ ran")}      ${dim(`failed: ${firstLine(String(tm.content), 40)}`)}`);
    } else {
      console.log(`${head} ${green("✓ ran")}      ${dim(firstLine(String(tm.content), 40))}`);
    }
  }
  return firstBlock;
}

async function loadModel(spec: string): Promise<BaseChatModel> {
  const [provider, ...rest] = spec.split(":");
  const model = rest.join(":");
  if (!provider || !model) throw new Error(`--model expects provider:name (e.g. openai:gpt-4.1), got "${spec}"`);
  let init: (model: string, fields: { modelProvider: string }) => Promise<BaseChatModel>;
  try {
    ({ initChatModel: init } = (await import("langchain/chat_models/universal")) as unknown as {
      initChatModel: typeof init;
    });
  } catch {
    throw new Error("--model needs the `langchain` package: npm install langchain");
  }
  try {
    return await init(model, { modelProvider: provider });
  } catch (e) {
    throw new Error(
      `Could not load ${spec}: ${(e as Error).message}\nInstall the provider package (e.g. npm install @langchain/${provider}) and set its API key.`,
    );
  }
}

async function runScripted(): Promise<void> {
  console.log(bold("langgraph-guards demo"));
  console.log(
    dim("createReactAgent + GuardedToolNode, scripted model (no network), MemorySaver; one thread per scenario.\n"),
  );
  const checkpointer = new MemorySaver();
  // Counts across the threads, as a dashboard would get them (also OpenTelemetry counters, when it is installed).
  const blockedBy: Record<string, number> = {};
  const metrics = guardMetrics({
    onCount: (name, value, { rule }) => {
      if (name === "calls.blocked" && rule) blockedBy[rule] = (blockedBy[rule] ?? 0) + value;
    },
  });
  let example: string | undefined;
  for (const [i, scenario] of SCENARIOS.entries()) {
    const llm = new ScriptedChatModel([...scenario.turns.map((toolCalls) => ({ toolCalls })), "Done."]);
    const agent = createReactAgent({
      llm,
      tools: new GuardedToolNode(createWorkspaceTools(sampleProject())),
      stateSchema: GuardMessagesState,
      checkpointer,
    });
    const out = await agent.invoke(
      { messages: [{ role: "user", content: "Work on the project." }] },
      { configurable: { thread_id: `scenario-${i + 1}` }, callbacks: [metrics] },
    );
    console.log(bold(scenario.title));
    const block = printTranscript(out.messages);
    example ??= block;
    console.log(`     ${dim(scenario.note)}\n`);
  }
  const t = metrics.counts();
  const rules = Object.entries(blockedBy).map(([rule, n]) => `${rule}: ${n}`);
  console.log(
    bold("Totals (guardMetrics): ") +
      `${t.callsRun} calls ran, ${t.blocked} blocked (${rules.join(", ")}) in ${t.runsEnded} runs; every block ` +
      "answered its tool_call_id with one error ToolMessage, and the guard state is in the checkpoint of each thread.\n",
  );
  if (example) {
    console.log(bold("What a blocked call looks like to the model (the ToolMessage content):"));
    console.log(dim("─".repeat(80)));
    console.log(example);
    console.log(dim("─".repeat(80)));
  }
  console.log(bold("\nScenario 5 — an agent that keeps repeating a failing call (escalation)"));
  console.log(dim("The same agent with escalationHook: each further repeat escalates, up to asking a person.\n"));
  await runEscalationExample((line) => console.log(line));
}

async function prompt(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return await rl.question(question);
  } finally {
    rl.close();
  }
}

async function runWithModel(spec: string): Promise<void> {
  const llm = await loadModel(spec);
  const tools = new GuardedToolNode(createWorkspaceTools(sampleProject()));
  const agent = createReactAgent({
    llm,
    tools,
    stateSchema: GuardMessagesState,
    postModelHook: escalationHook(tools),
    checkpointer: new MemorySaver(),
    prompt: "You work on a small Python project through the given tools. Be efficient.",
  });
  const task =
    "Find every TODO in app.py and main.py, check config.py for DEBUG, then write a short TODO.md listing them.";
  console.log(bold(`langgraph-guards demo on ${spec}`));
  console.log(dim(`Task: ${task}\n`));
  const config = { configurable: { thread_id: "real-model" }, recursionLimit: 60 };
  let out = await agent.invoke({ messages: [{ role: "user", content: task }] }, config);
  // Level 3 of the escalation asks a person: answer from the terminal (or end the run when there is none).
  for (;;) {
    const ask = (await agent.getState(config)).tasks
      .flatMap((t) => t.interrupts.map((i) => i.value))
      .find(isEscalationInterrupt);
    if (ask === undefined) break;
    console.log(`\n${bold("The agent asks:")} ${ask.question}`);
    const answer = process.stdin.isTTY ? await prompt("your answer (empty ends the run): ") : "";
    out = await agent.invoke(
      new Command({ resume: answer.trim() ? answer : { answer: "no answer", action: "end" } }),
      config,
    );
  }
  printTranscript(out.messages);
  const last = out.messages[out.messages.length - 1];
  console.log(
    `\n${bold("Answer:")} ${typeof last?.content === "string" ? last.content : canonicalJson(last?.content)}`,
  );
  console.log(dim(`guard stats: ${canonicalJson(out.toolGuard.stats)}`));
}

const args = process.argv.slice(2);
try {
  if (args.includes("--help") || args.includes("-h")) {
    console.log("Usage: npm run demo [-- --model provider:name]");
  } else {
    const i = args.indexOf("--model");
    const spec = i >= 0 ? args[i + 1] : args.find((a) => a.startsWith("--model="))?.slice("--model=".length);
    if (i >= 0 && !spec) throw new Error("--model expects provider:name (e.g. openai:gpt-4.1)");
    await (spec ? runWithModel(spec) : runScripted());
  }
} catch (e) {
  console.error(`demo: ${(e as Error).message}`);
  process.exitCode = 1;
}
