/**
 * The guards as langchain `createAgent` middleware, streamed: `guardMiddleware` (repeats blocked, escalation up to
 * a person), `loopDetectMiddleware` (loops and limits) and langchain's own `toolCallLimitMiddleware` (a count of
 * calls) in one agent, run with `streamMode: ["custom", "updates"]`. Each guard event is printed as it arrives
 * (the custom stream), between the messages of the run (the updates). The scripted model looks the docs up, keeps
 * retrying a page that is down until the guards ask a person (`interrupt()`, answered here and resumed with
 * `Command({ resume })`), then searches on until langchain's call limit stops it.
 *
 *   npx tsx examples/create-agent.ts                             # scripted model (offline, a few seconds)
 *   npx tsx examples/create-agent.ts --model openai:gpt-4.1      # a real model (needs its provider package, e.g.
 *                                                                # @langchain/openai, and its API key)
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { Command, MemorySaver } from "@langchain/langgraph";
import { createAgent, initChatModel, toolCallLimitMiddleware } from "langchain";
import {
  type GuardArtifact,
  type GuardLog,
  type GuardStreamEvent,
  isEscalationInterrupt,
  isGuardStreamEvent,
} from "langgraph-guards";
import { canonicalJson } from "langgraph-guards/core";
import { guardMiddleware, loopDetectMiddleware } from "langgraph-guards/middleware";
import { ScriptedChatModel } from "langgraph-guards/testing";
import { z } from "zod";

const searchDocs = tool(async ({ q }) => `3 results for "${q}": /docs/cache, /docs/config, /faq#cache`, {
  name: "search_docs",
  description: "Search the product documentation; returns page URLs.",
  schema: z.object({ q: z.string() }),
});
const getPage = tool(
  async ({ url }) => {
    throw new Error(`503 Service Unavailable: ${url}`); // the docs site is down today
  },
  { name: "get_page", description: "Fetch a documentation page.", schema: z.object({ url: z.string() }) },
);

const page = { name: "get_page", args: { url: "/docs/cache" } };
const search = (q: string) => ({ name: "search_docs", args: { q } });
/** The script: one step per model call. */
function scriptedModel(): ScriptedChatModel {
  return new ScriptedChatModel([
    { content: "Let me search the docs.", toolCalls: [search("cache ttl")] },
    { content: "Opening the cache page.", toolCalls: [page] },
    { content: "Fetching it again.", toolCalls: [page] }, // strike 1: blocked, "what will you do differently?"
    { content: "Trying the page once more.", toolCalls: [page] }, // strike 2: blocked, with options
    { content: "One last try.", toolCalls: [page] }, // strike 3: held back, a person is asked
    // Calls 6 and 7 of the run (the blocked ones count too): toolCallLimitMiddleware({ runLimit: 6 }) answers the 7th.
    {
      content: "Understood, I'll use the search results instead.",
      toolCalls: [search("cache ttl default"), search("cache ttl environment variable")],
    },
    "The cache keeps entries for `cache.ttl` seconds (default 300); see /docs/config. The page itself is down.",
  ]);
}

const ANSWER = "The docs site is down today. Answer from the search results.";

/** A real model for `--model provider:name`, through langchain's `initChatModel`. */
async function loadModel(spec: string): Promise<BaseChatModel> {
  const [provider, ...rest] = spec.split(":");
  const name = rest.join(":");
  if (!provider || !name) throw new Error(`--model expects provider:name (e.g. openai:gpt-4.1), got "${spec}"`);
  try {
    return (await initChatModel(name, { modelProvider: provider })) as unknown as BaseChatModel;
  } catch (e) {
    throw new Error(
      `Could not load ${spec}: ${(e as Error).message}\nInstall the provider package (e.g. npm install @langchain/${provider}) and set its API key.`,
    );
  }
}

function firstLine(text: string, max = 90): string {
  const line = text.split("\n").find((l) => l.trim() !== "") ?? "";
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** One guard event, as it arrives on the custom stream. */
function showEvent(e: GuardStreamEvent): void {
  const parts = [e.kind, e.tool, e.rule && `rule ${e.rule}`, e.level && `level ${e.level}`]
    .concat(e.strikes ? `strike ${e.strikes}` : undefined, e.limit && `${e.limit} ${e.value}/${e.threshold}`)
    .filter(Boolean);
  const message = e.message && e.kind !== "blocked" ? `: ${firstLine(e.message, 70)}` : "";
  console.log(`      ⚑ guard event · ${parts.join(" · ")}${message}`);
}

/** The messages of one `updates` chunk (a node's update, or a list of them). */
function messagesOf(update: unknown): BaseMessage[] {
  const updates = Array.isArray(update) ? update : [update];
  return updates.flatMap((u) => {
    const messages = (u as { messages?: unknown } | null)?.messages;
    return Array.isArray(messages) ? (messages as BaseMessage[]) : [];
  });
}

const isGuardAnswer = (m: ToolMessage) => (m.artifact as { guard?: GuardArtifact } | undefined)?.guard !== undefined;

function showMessage(m: BaseMessage): void {
  if (AIMessage.isInstance(m)) {
    const calls = (m.tool_calls ?? []).map((c) => `${c.name}(${canonicalJson(c.args)})`).join(", ");
    const text = typeof m.content === "string" ? firstLine(m.content) : "";
    if (calls) console.log(`  model: ${text}  → ${calls}`);
    return;
  }
  if (!ToolMessage.isInstance(m)) return;
  const guard = (m.artifact as { guard?: GuardArtifact } | undefined)?.guard;
  const content = String(m.content);
  if (guard?.escalation === 3) {
    console.log(
      `    ${m.name}: not run, the model reads: ${content.slice(content.indexOf("The user answered:")).replace("\n", " ")}`,
    );
  } else if (guard?.blocked)
    console.log(`    ${m.name}: not run (${guard.rule}), the model reads: ${firstLine(content, 60)}`);
  else if (content.startsWith("Tool call limit")) console.log(`    ${m.name}: not run, toolCallLimit: ${content}`);
  else if (guard) console.log(`    ${m.name}: not run, the model reads: ${firstLine(content, 70)}`);
  else console.log(`    ${m.name}: ran, ${m.status === "error" ? "failed" : "ok"}: ${firstLine(content, 70)}`);
}

async function main(spec: string | undefined): Promise<void> {
  const model = spec ? await loadModel(spec) : scriptedModel();
  const agent = createAgent({
    model,
    tools: [searchDocs, getPage],
    middleware: [
      guardMiddleware(),
      toolCallLimitMiddleware({ runLimit: 6 }),
      // Last in the list, so its afterModel sees each response first (createAgent runs them in reverse order). The
      // text alone: a repeated tool call goes through the guards' escalation, not a loop stop at its first repeat.
      loopDetectMiddleware({
        maxIterations: 20,
        turns: { outputOf: (m) => (typeof m.content === "string" ? m.content : "") },
      }),
    ],
    checkpointer: new MemorySaver(),
    systemPrompt: "Answer questions about the product from its documentation, through the tools.",
  });
  console.log("createAgent + guardMiddleware + toolCallLimitMiddleware({ runLimit: 6 }) + loopDetectMiddleware");
  console.log(
    `${spec ? `model ${spec}` : "scripted model (offline)"}, MemorySaver, streamMode ["custom", "updates"]\n`,
  );

  const config = { configurable: { thread_id: "create-agent-example" }, recursionLimit: 60 };
  const shown = new Set<string>();
  let input: Parameters<typeof agent.stream>[0] = {
    messages: [{ role: "user", content: "How long does the cache keep entries?" }],
  };
  for (;;) {
    let question: string | undefined;
    const stream = await agent.stream(input, { ...config, streamMode: ["custom", "updates"] });
    for await (const [mode, chunk] of stream) {
      if (mode === "custom") {
        if (isGuardStreamEvent(chunk)) showEvent(chunk); // other custom chunks (your tools' own) are left alone
        continue;
      }
      for (const [node, update] of Object.entries(chunk as Record<string, unknown>)) {
        if (node === "__interrupt__") {
          question = (update as { value: unknown }[]).map((i) => i.value).find(isEscalationInterrupt)?.question;
          continue;
        }
        for (const m of messagesOf(update)) {
          // A middleware's update may carry messages shown already: each message once.
          const key = m.id ?? (ToolMessage.isInstance(m) ? m.tool_call_id : undefined);
          if (key !== undefined && shown.has(key)) continue;
          if (key !== undefined) shown.add(key);
          showMessage(m);
        }
      }
    }
    if (question === undefined) break;
    console.log(`\n  paused: the run waits for a person (interrupt). The guards ask:\n    "${question}"`);
    console.log(`  a person answers: "${ANSWER}" (resumed with Command({ resume }))\n`);
    input = new Command({ resume: ANSWER });
  }

  const { values } = await agent.graph.getState(config);
  const last = values.messages.at(-1);
  console.log(`\nanswer: ${typeof last?.content === "string" ? last.content : canonicalJson(last?.content)}`);
  const log: GuardLog = values.guardLog;
  console.log(`guardLog: ${log.total} events in the thread, ${canonicalJson(log.counts)}`);
  // toolCallLimitMiddleware counts what the model asked for, calls the guards did not run included.
  const notRun = values.messages.filter((m: BaseMessage) => ToolMessage.isInstance(m) && isGuardAnswer(m)).length;
  const counted = values.threadToolCallCount.__all__ ?? 0;
  console.log(`toolCallLimit: ${counted} calls counted in the thread, ${notRun} of them answered by the guards`);
}

const args = process.argv.slice(2);
const i = args.indexOf("--model");
const spec = i >= 0 ? args[i + 1] : args.find((a) => a.startsWith("--model="))?.slice("--model=".length);
try {
  if (i >= 0 && !spec) throw new Error("--model expects provider:name (e.g. openai:gpt-4.1)");
  await main(spec);
} catch (e) {
  console.error(`create-agent: ${(e as Error).message}`);
  process.exitCode = 1;
}
