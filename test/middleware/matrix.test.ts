/**
 * guardMiddleware composed with langchain's own middleware in one createAgent, each in both orders (guard first or
 * last in the list) and all together: toolCallLimitMiddleware, humanInTheLoopMiddleware and
 * summarizationMiddleware. In every cell: every AI tool call is answered by exactly one ToolMessage (in the final
 * messages and in every checkpoint on the way), the guards block a repeated identical call, and the other
 * middleware's own effect happens.
 *
 * How createAgent runs them: `beforeModel` hooks run in list order, `afterModel` hooks in reverse list order (the
 * last middleware's first), and an `afterModel` hook that jumps skips the ones after it. Tool calls are answered
 * in `afterModel` by toolCallLimitMiddleware (over the limit) and humanInTheLoopMiddleware (rejected), and in
 * `wrapToolCall` by the guard (blocked).
 */
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { Command, isInterrupted, MemorySaver, type StateSnapshot } from "@langchain/langgraph";
import {
  type AgentMiddleware,
  createAgent,
  type Decision,
  type HITLRequest,
  humanInTheLoopMiddleware,
  summarizationMiddleware,
  toolCallLimitMiddleware,
} from "langchain";
import { describe, expect, it } from "vitest";
import { type GuardArtifact, isEscalationInterrupt, type ToolGuardState } from "../../src/index.js";
import { type GuardMiddlewareOptions, guardMiddleware } from "../../src/middleware/index.js";
import { ScriptedChatModel, type ScriptStep } from "../../src/testing/index.js";
import { docsTools } from "../support/docs-tools.js";
import { seedPace } from "../support/escalation.js";

// ---------------------------------------------------------------------------------------------------------------
// The one check of a message history.

/**
 * Every AI tool call is answered by exactly one ToolMessage (same id and name) that comes after it, every
 * ToolMessage answers a call made before it, and no call id is used twice. With `pendingLast`, the calls of the
 * last AI message may still be unanswered (a checkpoint taken before its tools ran), but never answered twice.
 * Returns the problems found (empty when valid).
 */
function toolCallProblems(messages: readonly BaseMessage[], opts: { pendingLast?: boolean } = {}): string[] {
  const problems: string[] = [];
  const calls = new Map<string, { name: string; at: number; answers: number }>();
  let lastAI = -1;
  messages.forEach((m, at) => {
    if (AIMessage.isInstance(m)) {
      lastAI = at;
      for (const call of m.tool_calls ?? []) {
        if (call.id == null) problems.push(`message ${at}: a call to ${call.name} without an id`);
        else if (calls.has(call.id)) problems.push(`message ${at}: call id ${call.id} used twice`);
        else calls.set(call.id, { name: call.name, at, answers: 0 });
      }
    } else if (ToolMessage.isInstance(m)) {
      const call = calls.get(m.tool_call_id);
      if (call === undefined) problems.push(`message ${at}: ToolMessage ${m.tool_call_id} answers no earlier call`);
      else {
        call.answers += 1;
        if (m.name !== call.name) problems.push(`message ${at}: call ${m.tool_call_id} answered as ${m.name}`);
      }
    }
  });
  for (const [id, call] of calls) {
    if (call.answers > 1) problems.push(`call ${id} (${call.name}): ${call.answers} ToolMessages`);
    if (call.answers === 0 && !(opts.pendingLast && call.at === lastAI)) problems.push(`call ${id}: unanswered`);
  }
  return problems;
}

describe("toolCallProblems (the check itself)", () => {
  const ai = (id: string, ...calls: string[]) =>
    new AIMessage({
      id,
      content: "",
      tool_calls: calls.map((c) => ({ id: c, name: "t", args: {}, type: "tool_call" })),
    });
  const answer = (id: string, name = "t") => new ToolMessage({ tool_call_id: id, name, content: "ok" });
  it("accepts a valid history and finds a duplicate, a missing, an orphan and a misnamed answer", () => {
    expect(toolCallProblems([new HumanMessage("hi"), ai("m1", "a", "b"), answer("a"), answer("b")])).toEqual([]);
    expect(toolCallProblems([ai("m1", "a"), answer("a"), answer("a")])).toEqual(["call a (t): 2 ToolMessages"]);
    expect(toolCallProblems([ai("m1", "a", "b"), answer("a")])).toEqual(["call b: unanswered"]);
    expect(toolCallProblems([answer("x"), ai("m1", "x"), answer("x")])).toEqual([
      "message 0: ToolMessage x answers no earlier call",
    ]);
    expect(toolCallProblems([ai("m1", "a"), answer("a", "u")])).toEqual(["message 1: call a answered as u"]);
    expect(toolCallProblems([ai("m1", "a"), answer("a"), ai("m2", "a"), answer("a")])).toContain(
      "message 2: call id a used twice",
    );
    expect(toolCallProblems([ai("m1", "a"), answer("a"), ai("m2", "b")], { pendingLast: true })).toEqual([]);
    expect(toolCallProblems([ai("m1", "a"), ai("m2", "b")], { pendingLast: true })).toEqual(["call a: unanswered"]);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// One agent: two tools, a scripted model, the guard and the middleware of the cell.

type Other = "limit" | "limit-end" | "hitl" | "summarization";

/** A scripted step with one call of a fixed id (so a test can find its answer after summarization). */
const call = (id: string, name: "search_docs" | "write_note", args: Record<string, string>): ScriptStep => ({
  toolCalls: [{ id, name, args }],
});
const search = (id: string, q: string) => call(id, "search_docs", { q });
/** One AI message with several calls. */
const parallel = (...steps: ScriptStep[]): ScriptStep => ({
  toolCalls: steps.flatMap((s) => (typeof s === "object" && "toolCalls" in s ? (s.toolCalls ?? []) : [])),
});
const write = (id: string, text: string) => call(id, "write_note", { text });

const RUN_LIMIT = 3;
const SUMMARY_PREFIX = "Here is a summary of the conversation to date:";

function otherMiddleware(other: Other, summarizer: FakeListChatModel, runLimit: number): AgentMiddleware {
  switch (other) {
    case "limit":
      return toolCallLimitMiddleware({ runLimit });
    case "limit-end":
      return toolCallLimitMiddleware({ runLimit, exitBehavior: "end" });
    case "hitl":
      return humanInTheLoopMiddleware({ interruptOn: { write_note: true } });
    case "summarization":
      // Before each model call: from 10 messages on, all but the last 2 become one summary message.
      return summarizationMiddleware({ model: summarizer, trigger: { messages: 10 }, keep: { messages: 2 } });
  }
}

interface Run {
  messages: BaseMessage[];
  /** The tools that really ran, in order ("search a", "note x"). */
  ran: string[];
  /** The HITL requests, in order. */
  asked: HITLRequest[];
  /** Who interrupted the run, in order. */
  interrupts: ("hitl" | "guard")[];
  toolGuard: ToolGuardState;
  /** The summarization model's calls. */
  summaries: number;
  /** toolCallProblems of every checkpoint of the thread (with its step). */
  checkpointProblems: string[];
  checkpoints: number;
}

/** The answer to the guard's own question at escalation level 3 (its interrupt), in a cell's list of decisions. */
interface GuardReply {
  guard: string;
}

/**
 * Runs the script with the middleware named (the guard where the list says), resuming every interrupt with the next
 * decision: a HITL decision for a HITL request, a {@link GuardReply} for the guard's escalation question. Fails on
 * an interrupt of another kind, on the wrong kind of reply, and on replies left over.
 */
async function runAgent(
  names: ("guard" | Other)[],
  script: ScriptStep[],
  decisions: (Decision | GuardReply)[] = [],
  runLimit = RUN_LIMIT,
  guardOptions: GuardMiddlewareOptions = {},
): Promise<Run> {
  const ran: string[] = [];
  const tools = docsTools(ran);
  const summarizer = new FakeListChatModel({ responses: ["SUMMARY"] });
  let summaries = 0;
  summarizer.callbacks = [
    {
      handleChatModelStart: () => {
        summaries += 1;
      },
    },
  ];
  // write_note writes the same note again when called again: declared so (an unknown tool is judged by its results).
  const noteTraits = { tools: { write_note: { stateful: false }, ...guardOptions.tools } };
  const middleware = names.map((n) =>
    // The escalation's mechanics at seed 003's pace (level 3 at the third duplicate), as test/support/escalation.ts says.
    n === "guard"
      ? guardMiddleware(seedPace({ ...guardOptions, ...noteTraits }))
      : otherMiddleware(n, summarizer, runLimit),
  );
  const checkpointer = new MemorySaver();
  const agent = createAgent({
    model: new ScriptedChatModel(script, { whenExhausted: "throw" }),
    tools,
    middleware,
    checkpointer,
  });
  const config = { configurable: { thread_id: "matrix" }, recursionLimit: 100 };
  const asked: HITLRequest[] = [];
  const interrupts: ("hitl" | "guard")[] = [];
  let out = await agent.invoke({ messages: [{ role: "user", content: "Take notes on the docs." }] }, config);
  const pending = [...decisions];
  while (isInterrupted(out)) {
    expect(out.__interrupt__).toHaveLength(1);
    const value = out.__interrupt__[0]?.value;
    const reply = pending.shift();
    if (isEscalationInterrupt(value)) {
      interrupts.push("guard");
      expect(reply, `guard question ${interrupts.length}: the test has no guard reply`).toHaveProperty("guard");
      out = await agent.invoke(new Command({ resume: (reply as GuardReply).guard }), config);
    } else {
      const request = value as HITLRequest;
      expect(request?.actionRequests, "an interrupt neither HITL's nor the guard's").toBeDefined();
      interrupts.push("hitl");
      asked.push(request);
      expect(reply, `HITL request ${asked.length}: the test has no HITL decision`).toHaveProperty("type");
      out = await agent.invoke(new Command({ resume: { decisions: [reply] } }), config);
    }
  }
  expect(pending, "decisions the run never asked for").toEqual([]);

  const checkpointProblems: string[] = [];
  let checkpoints = 0;
  for await (const snapshot of agent.graph.getStateHistory(config) as AsyncIterable<StateSnapshot>) {
    checkpoints += 1;
    const messages = ((snapshot.values as { messages?: BaseMessage[] }).messages ?? []) as BaseMessage[];
    for (const p of toolCallProblems(messages, { pendingLast: true }))
      checkpointProblems.push(`step ${String(snapshot.metadata?.step)}: ${p}`);
  }
  return {
    messages: out.messages as BaseMessage[],
    ran,
    asked,
    interrupts,
    toolGuard: (out as { toolGuard?: ToolGuardState }).toolGuard as ToolGuardState,
    summaries,
    checkpointProblems,
    checkpoints,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Reading a run.

const answerTo = (run: Run, id: string) =>
  run.messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m) && m.tool_call_id === id);
const guardOf = (m: ToolMessage | undefined) => (m?.artifact as { guard?: GuardArtifact } | undefined)?.guard;

/** The one answer to call `id`. */
function theAnswer(run: Run, id: string): ToolMessage {
  const answers = answerTo(run, id);
  expect(answers, `answers to ${id}`).toHaveLength(1);
  return answers[0] as ToolMessage;
}

/** Call `id` was blocked by the guards (error status, the guard artifact with `blocked`), by `rule` if given. */
function expectBlocked(run: Run, id: string, rule?: GuardArtifact["rule"]) {
  const answer = theAnswer(run, id);
  expect(answer.status).toBe("error");
  expect(guardOf(answer)?.blocked).toBe(true);
  if (rule !== undefined) expect(guardOf(answer)?.rule).toBe(rule);
}

/** Call `id` ran: its tool's own result, no guard artifact. */
function expectRan(run: Run, id: string, content: string) {
  const answer = theAnswer(run, id);
  expect(guardOf(answer)).toBeUndefined();
  expect(answer.status).not.toBe("error");
  expect(String(answer.content)).toBe(content);
}

function expectValid(run: Run) {
  expect(toolCallProblems(run.messages)).toEqual([]);
  expect(run.checkpoints).toBeGreaterThan(3);
  expect(run.checkpointProblems).toEqual([]);
}

const LIMIT_MESSAGE = "Tool call limit exceeded. Do not make additional tool calls.";
const summaryMessage = (run: Run) =>
  run.messages.find(
    (m) => HumanMessage.isInstance(m) && (m.additional_kwargs as { lc_source?: string }).lc_source === "summarization",
  );

// ---------------------------------------------------------------------------------------------------------------
// The cells.

interface Cell {
  /** What the cell shows, after the order in the test name. */
  title: string;
  others: Other[];
  script: ScriptStep[];
  /** The HITL decisions, in the order asked (a function when the number of questions depends on the order). */
  decisions?: (Decision | GuardReply)[] | ((guardFirst: boolean) => (Decision | GuardReply)[]);
  runLimit?: number;
  guard?: GuardMiddlewareOptions;
  /** `guardFirst`: the guard is first in the list (so its afterModel runs last). */
  check: (run: Run, guardFirst: boolean) => void | Promise<void>;
}

const approve: Decision = { type: "approve" };
const editTo = (text: string): Decision => ({ type: "edit", editedAction: { name: "write_note", args: { text } } });

/** Five searches, the first repeated at once and again at the end, after a summary replaced the first four. */
const summarizationScript = [
  search("s1", "a"),
  search("s2", "a"),
  search("s3", "b"),
  search("s4", "c"),
  search("s5", "d"),
  search("s6", "a"),
  "Done.",
];

const cells: Cell[] = [
  {
    title: `run limit ${RUN_LIMIT} (continue): the repeat is blocked; the call over the limit, itself a repeat, is answered once, by the limit`,
    others: ["limit"],
    script: [search("s1", "a"), search("s2", "a"), search("s3", "b"), search("s4", "b"), "Done."],
    check: (run) => {
      expectRan(run, "s1", "results for a");
      expectBlocked(run, "s2", "consecutive");
      expectRan(run, "s3", "results for b");
      const over = theAnswer(run, "s4");
      expect(String(over.content)).toBe(LIMIT_MESSAGE);
      expect(over.status).toBe("error");
      expect(guardOf(over)).toBeUndefined();
      expect(run.ran).toEqual(["search a", "search b"]);
      // The guard records what ran and what it blocked; the call the limit answered never reached it.
      expect(run.toolGuard.stats.allowed).toBe(2);
      expect(run.toolGuard.stats.blocked.consecutive).toBe(1);
    },
  },
  {
    title: `run limit ${RUN_LIMIT} (end): the repeat is blocked, the limit ends the run with its message`,
    others: ["limit-end"],
    script: [search("s1", "a"), search("s2", "a"), search("s3", "b"), search("s4", "c"), "Done."],
    check: (run) => {
      expectBlocked(run, "s2", "consecutive");
      expect(String(theAnswer(run, "s4").content)).toBe(LIMIT_MESSAGE);
      const last = run.messages.at(-1);
      expect(AIMessage.isInstance(last)).toBe(true);
      expect(String(last?.content)).toBe("Tool call limit reached: run limit exceeded (4/3 calls).");
      expect(run.ran).toEqual(["search a", "search b"]);
    },
  },
  {
    title: "HITL approve: both calls are asked about; the approved call runs, its approved repeat is blocked",
    others: ["hitl"],
    script: [write("w1", "x"), write("w2", "x"), "Done."],
    decisions: [approve, approve],
    check: (run) => {
      expect(run.asked.map((r) => r.actionRequests.map((a) => [a.name, a.args]))).toEqual([
        [["write_note", { text: "x" }]],
        [["write_note", { text: "x" }]],
      ]);
      expectRan(run, "w1", "saved: x");
      expectBlocked(run, "w2", "consecutive");
      expect(run.ran).toEqual(["note x"]);
    },
  },
  {
    title: "HITL reject: the rejected call does not run and is no repeat to block; the next repeat is",
    others: ["hitl"],
    script: [write("w1", "x"), write("w2", "x"), write("w3", "x"), "Done."],
    decisions: [{ type: "reject", message: "Not now." }, approve, approve],
    check: (run) => {
      const rejected = theAnswer(run, "w1");
      expect(String(rejected.content)).toBe("Not now.");
      expect(rejected.status).toBe("error");
      expect(guardOf(rejected)).toBeUndefined();
      expectRan(run, "w2", "saved: x");
      expectBlocked(run, "w3", "consecutive");
      expect(run.ran).toEqual(["note x"]);
    },
  },
  {
    title: "HITL edit: the edited call runs and is what the guard records (its repeat is blocked)",
    others: ["hitl"],
    script: [write("w1", "x"), write("w2", "y"), write("w3", "x"), "Done."],
    decisions: [editTo("y"), approve, approve],
    check: (run) => {
      expectRan(run, "w1", "saved: y");
      // w2 repeats what ran (y): blocked. w3 is x, which never ran: allowed.
      expectBlocked(run, "w2", "consecutive");
      expectRan(run, "w3", "saved: x");
      expect(run.ran).toEqual(["note y", "note x"]);
    },
  },
  {
    title: "HITL edit of a repeat the guard would block: the person's edited call runs",
    others: ["hitl"],
    script: [write("w1", "x"), write("w2", "x"), "Done."],
    decisions: [approve, editTo("y")],
    check: (run) => {
      expectRan(run, "w1", "saved: x");
      expectRan(run, "w2", "saved: y");
      expect(run.ran).toEqual(["note x", "note y"]);
    },
  },
  {
    title:
      "HITL with an auto-approved sibling: the person is asked about the write only, the sibling repeat is blocked",
    others: ["hitl"],
    script: [search("s1", "a"), parallel(search("s2", "a"), write("w3", "x")), "Done."],
    decisions: [approve],
    check: (run) => {
      expect(run.asked.map((r) => r.actionRequests.map((a) => a.name))).toEqual([["write_note"]]);
      expectBlocked(run, "s2", "consecutive");
      expectRan(run, "w3", "saved: x");
      expect(run.ran).toEqual(["search a", "note x"]);
    },
  },
  {
    title:
      "HITL approving every repeat, guard escalation without interrupt: the guard ends the run at strike 3; guard last spares the person the last question",
    others: ["hitl"],
    guard: { interrupt: false },
    script: [write("w1", "x"), write("w2", "x"), write("w3", "x"), write("w4", "x"), "Done."],
    // Guard first: HITL's afterModel runs before the guard's and asks about w4 too. Guard last: the guard's runs
    // first, ends the run and HITL is skipped.
    decisions: (guardFirst) => (guardFirst ? [approve, approve, approve, approve] : [approve, approve, approve]),
    check: (run, guardFirst) => {
      expect(run.asked).toHaveLength(guardFirst ? 4 : 3);
      expectRan(run, "w1", "saved: x");
      expectBlocked(run, "w2", "consecutive");
      expectBlocked(run, "w3", "consecutive");
      expect(guardOf(theAnswer(run, "w4"))).toMatchObject({ blocked: true, escalation: 4 });
      const last = run.messages.at(-1) as AIMessage;
      expect(last.response_metadata.guard).toMatchObject({ kind: "escalation", level: 4, strikes: 3 });
      expect(run.ran).toEqual(["note x"]);
    },
  },
  {
    title:
      "HITL approving every repeat, guard escalation with its own interrupt at strike 3: each asks in turn; guard last asks first and HITL is not asked about the held-back call",
    others: ["hitl"],
    script: [write("w1", "x"), write("w2", "x"), write("w3", "x"), write("w4", "x"), "I will stop here."],
    // Guard first: HITL asks about w4, then the guard asks. Guard last: the guard asks, answers w4 and goes back to
    // the model (its jump skips HITL's afterModel).
    decisions: (guardFirst) => [
      approve,
      approve,
      approve,
      ...(guardFirst ? [approve] : []),
      { guard: "Stop writing that note." },
    ],
    check: (run, guardFirst) => {
      expect(run.interrupts).toEqual(
        guardFirst ? ["hitl", "hitl", "hitl", "hitl", "guard"] : ["hitl", "hitl", "hitl", "guard"],
      );
      expectRan(run, "w1", "saved: x");
      expectBlocked(run, "w2", "consecutive");
      expectBlocked(run, "w3", "consecutive");
      const held = theAnswer(run, "w4");
      expect(guardOf(held)).toMatchObject({ blocked: true, escalation: 3, answer: "Stop writing that note." });
      expect(String(held.content)).toContain("The user answered:\nStop writing that note.");
      expect(String(run.messages.at(-1)?.content)).toBe("I will stop here.");
      expect(run.ran).toEqual(["note x"]);
    },
  },
  {
    title:
      "summarization: a call repeated after its messages were summarized away is still blocked, as without summarization",
    others: ["summarization"],
    script: summarizationScript,
    check: async (run) => {
      expect(run.summaries).toBe(1);
      const summary = summaryMessage(run);
      expect(String(summary?.content)).toBe(`${SUMMARY_PREFIX}\n\nSUMMARY`);
      // The first two calls and their answers are gone from the messages ...
      for (const id of ["s1", "s2", "s3", "s4"]) expect(answerTo(run, id)).toEqual([]);
      expect(run.messages.some((m) => AIMessage.isInstance(m) && m.tool_calls?.some((c) => c.id === "s1"))).toBe(false);
      // ... but the guard still knows that search(a) succeeded and nothing changed since.
      expectBlocked(run, "s6", "redundant");
      expect(run.ran).toEqual(["search a", "search b", "search c", "search d"]);
      expect(run.toolGuard.stats.blocked).toMatchObject({ consecutive: 1, redundant: 1 });
      // The same script without summarization: the same decision for the repeat.
      const plain = await runAgent(["guard"], summarizationScript);
      expect(guardOf(theAnswer(plain, "s6"))).toEqual(guardOf(theAnswer(run, "s6")));
      expect(summaryMessage(plain)).toBeUndefined();
    },
  },
  {
    title:
      "all: blocked repeat, HITL approve, summary, a repeat after the summary blocked, then the run limit, each call answered once",
    others: ["limit", "hitl", "summarization"],
    runLimit: 7,
    // Calls 1-7 fit the run limit (the limit counts blocked calls too), call 8 is over it.
    script: [
      search("s1", "a"),
      search("s2", "a"),
      write("w3", "x"),
      search("s4", "b"),
      search("s5", "c"),
      search("s6", "d"),
      search("s7", "b"),
      search("s8", "e"),
      "Done.",
    ],
    decisions: [approve],
    check: (run) => {
      expect(run.asked).toHaveLength(1);
      expect(run.summaries).toBe(1);
      expect(summaryMessage(run)).toBeDefined();
      expect(answerTo(run, "s4")).toEqual([]); // summarized away
      expectBlocked(run, "s7", "redundant");
      expect(String(theAnswer(run, "s8").content)).toBe(LIMIT_MESSAGE);
      expect(run.ran).toEqual(["search a", "note x", "search b", "search c", "search d"]);
      expect(run.toolGuard.stats.blocked).toMatchObject({ consecutive: 1, redundant: 1 });
    },
  },
];

const label = (o: Other) => (o === "limit-end" ? "limit" : o);

describe("guardMiddleware with langchain's middleware: the composition matrix", () => {
  const rows = cells.flatMap((cell) =>
    [true, false].map((guardFirst) => {
      const order: ("guard" | Other)[] = guardFirst ? ["guard", ...cell.others] : [...cell.others, "guard"];
      const name = `[${order.map((o) => (o === "guard" ? o : label(o))).join(", ")}] ${cell.title}`;
      return { name, order, guardFirst, cell };
    }),
  );
  for (const { name, order, guardFirst, cell } of rows) {
    it(name, async () => {
      const decisions = typeof cell.decisions === "function" ? cell.decisions(guardFirst) : cell.decisions;
      const run = await runAgent(order, cell.script, decisions, cell.runLimit, cell.guard);
      expectValid(run);
      await cell.check(run, guardFirst);
    });
  }
});
