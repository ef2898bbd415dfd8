/**
 * `npm run bench:steps`: the smallest `recursionLimit` each stack needs for a task of N tool turns and an answer,
 * measured (the smallest limit at which the agent ends with the task done, found by running it at every limit from
 * 3 up), beside the arithmetic of src/run-end/budget.ts, and the tool turns a model that never stops gets at
 * LangGraph's default limit (25). Deterministic: steps, not time. The stacks are those of docs/middleware.md's table.
 */
import { randomUUID } from "node:crypto";
import { type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent, modelCallLimitMiddleware, toolCallLimitMiddleware } from "langchain";
import { z } from "zod";
import {
  escalationHook,
  GuardedToolNode,
  GuardMessagesState,
  type StackShape,
  smallestRecursionLimit,
} from "../src/index.js";
import { guardMiddleware, loopDetectMiddleware } from "../src/middleware/index.js";
import { toolTurnsThatFit } from "../src/run-end/budget.js";
import { ScriptedChatModel } from "../src/testing/index.js";

const work = tool(async ({ n }) => `step ${n} done`, {
  name: "work",
  description: "Does one step of the work",
  schema: z.object({ n: z.number() }),
});
const done = (messages: readonly BaseMessage[]) =>
  messages.filter((m) => ToolMessage.isInstance(m) && m.status !== "error").length;
const model = (turns: number) =>
  new ScriptedChatModel((messages: BaseMessage[]) =>
    done(messages) >= turns
      ? { content: "All done." }
      : { content: `Next: ${randomUUID()}`, toolCalls: [{ name: "work", args: { n: done(messages) } }] },
  );
const text = (m: { content: unknown }) => (typeof m.content === "string" ? m.content : "");

type Run = (turns: number, limit: number) => Promise<BaseMessage[]>;
const agent =
  (middleware: () => unknown[]): Run =>
  async (turns, limit) => {
    const built = createAgent({ model: model(turns), tools: [work], middleware: middleware() as never }) as unknown as {
      invoke(input: unknown, config: unknown): Promise<{ messages: BaseMessage[] }>;
    };
    return (await built.invoke({ messages: [{ role: "user", content: "Go." }] }, { recursionLimit: limit })).messages;
  };
const react =
  (preModelHook: boolean): Run =>
  async (turns, limit) => {
    const tools = new GuardedToolNode([work]);
    const graph = createReactAgent({
      llm: model(turns),
      tools,
      stateSchema: GuardMessagesState,
      postModelHook: escalationHook(tools),
      ...(preModelHook ? { preModelHook: () => ({}) } : {}),
    });
    return (await graph.invoke({ messages: [{ role: "user", content: "Go." }] }, { recursionLimit: limit })).messages;
  };

const loop = () => loopDetectMiddleware({ turns: { outputOf: text } });
const STACKS: [string, Run, StackShape][] = [
  ["createAgent, no middleware", agent(() => []), { around: 0, edges: 0 }],
  ["loopDetectMiddleware (or safetyLimits)", agent(() => [loop()]), { around: 0, edges: 0 }],
  ["guardMiddleware (with or without agentTools)", agent(() => [guardMiddleware()]), { around: 1, edges: 0 }],
  ["guardMiddleware + loopDetectMiddleware", agent(() => [guardMiddleware(), loop()]), { around: 1, edges: 0 }],
  [
    "guard + loop + toolCallLimitMiddleware",
    agent(() => [guardMiddleware(), loop(), toolCallLimitMiddleware({ runLimit: 1000 })]),
    { around: 2, edges: 1 },
  ],
  [
    "guard + loop + toolCallLimit + modelCallLimit",
    agent(() => [
      guardMiddleware(),
      loop(),
      toolCallLimitMiddleware({ runLimit: 1000 }),
      modelCallLimitMiddleware({ runLimit: 1000 }),
    ]),
    { around: 4, edges: 2 },
  ],
  ["createReactAgent + escalationHook", react(false), { around: 1, edges: 0 }],
  ["createReactAgent + preModelHook + escalationHook", react(true), { around: 2, edges: 0 }],
];

/** The smallest limit at which the task of `turns` tool turns ends with the task done. */
async function smallestMeasured(run: Run, turns: number): Promise<number> {
  for (let limit = 3; limit < 200; limit += 1) {
    const messages = await run(turns, limit).catch(() => undefined);
    if (messages !== undefined && done(messages) === turns && text(messages.at(-1) as BaseMessage) === "All done.")
      return limit;
  }
  return Number.NaN;
}

const N = [1, 2, 3, 5, 10];
const rows: string[][] = [["stack", ...N.map((n) => `${n} turns`), "turns at 25"]];
let mismatches = 0;
for (const [name, run, shape] of STACKS) {
  const cells = [name];
  for (const n of N) {
    const measured = await smallestMeasured(run, n);
    const computed = smallestRecursionLimit(n, shape);
    if (measured !== computed) mismatches += 1;
    cells.push(measured === computed ? String(measured) : `${measured} (arithmetic: ${computed})`);
  }
  // A model that never stops: without a guard LangGraph throws; with one, the run ends in words.
  const endless = await run(Number.POSITIVE_INFINITY, 25).catch(() => undefined);
  if (endless === undefined) cells.push("GraphRecursionError");
  else {
    const at25 = done(endless);
    if (at25 !== toolTurnsThatFit(25, shape)) mismatches += 1;
    cells.push(String(at25));
  }
  rows.push(cells);
}
const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length))) ?? [];
for (const [i, r] of rows.entries()) {
  console.log(`| ${r.map((c, j) => c.padEnd(widths[j] ?? 0)).join(" | ")} |`);
  if (i === 0) console.log(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`);
}
console.log(
  `\nsmallest recursionLimit for N tool turns and an answer (measured); ${mismatches} differ from the arithmetic`,
);
if (mismatches > 0) process.exitCode = 1;
