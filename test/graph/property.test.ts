import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import type { ToolCall } from "@langchain/core/messages/tool";
import { tool } from "@langchain/core/tools";
import { END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { toolsCondition } from "@langchain/langgraph/prebuilt";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { callIdentity, isShellTool, isStatefulCall } from "../../src/common/identity/classify.js";
import { BLOCK_RULES } from "../../src/core/index.js";
import {
  type GuardArtifact,
  GuardedToolNode,
  type GuardedToolNodeOptions,
  GuardMessagesState,
  type ToolGuardState,
} from "../../src/index.js";

// ---------------------------------------------------------------------------------------------------------------
// Tools: real LangChain tools (a reader, a writer, one that always throws, one with a permissive schema).
// ---------------------------------------------------------------------------------------------------------------

const readFile = tool(({ path }) => `contents of ${path.slice(0, 64)} (${path.length} chars)`, {
  name: "read_file",
  description: "Reads a file.",
  schema: z.object({ path: z.string() }),
});

const writeToFile = tool(({ path, content }) => `wrote ${content?.length ?? 0} chars to ${path.slice(0, 64)}`, {
  name: "write_to_file",
  description: "Writes a file.",
  schema: z.object({ path: z.string(), content: z.string().optional() }),
});

const failAlways = tool(
  (): string => {
    throw new Error("this tool always fails");
  },
  { name: "fail_always", description: "Always throws.", schema: z.looseObject({}) },
);

function sizeOf(value: unknown): number {
  try {
    return JSON.stringify(value)?.length ?? 0;
  } catch {
    return -1;
  }
}

const echoSize = tool((input) => `input size: ${sizeOf(input)}`, {
  name: "echo_size",
  description: "Echoes the size of its input.",
  schema: z.looseObject({}),
});

const TOOLS = [readFile, writeToFile, failAlways, echoSize];
const KNOWN_NAMES = TOOLS.map((t) => t.name);
/** Names no tool has (some of them are `Object.prototype` members, one looks read-only, one is empty). */
const UNKNOWN_NAMES = ["does_not_exist", "read_missing", "bash", "constructor", "__proto__", "toString", ""];

// ---------------------------------------------------------------------------------------------------------------
// Specs: plain data that fast-check generates and prints; turned into AIMessages (with cycles, 10 MB strings,
// fresh ids) by `materialize`, once per run.
// ---------------------------------------------------------------------------------------------------------------

/** The arguments of a generated call. */
type ArgSpec =
  | { kind: "value"; value: unknown }
  | { kind: "cyclic"; base: Record<string, unknown> }
  | { kind: "huge"; key: string }
  | { kind: "hostile"; trap: "getter" | "revoked" | "ownKeys"; key: string };

/**
 * A generated call: a fresh one, or a copy (same name, same or key-reordered arguments, its own id) of the call
 * before it in the same message (`read_file` of `a.txt` when it comes first).
 */
type CallSpec =
  | { kind: "fresh"; name: string; args: ArgSpec; withId: boolean }
  | { kind: "duplicate"; reordered: boolean; withId: boolean };

type MessageSpec = CallSpec[];

interface RunSpec {
  options: GuardedToolNodeOptions & {
    windowSize: number;
    repetitionThreshold: number;
    memory: { operationsHistoryLimit: number; observedLimit: number; runBoundary?: "none" };
    mode: "enforce" | "observe";
  };
  guardsOff: boolean;
  messages: MessageSpec[];
}

const HUGE_LENGTH = 10 * 1024 * 1024;
let hugeString: string | undefined;
/** One shared 10 MB string, built on first use. */
function huge(): string {
  hugeString ??= "x".repeat(HUGE_LENGTH);
  return hugeString;
}

/** Few paths, one of them frequent, so that calls repeat. */
const pathArb = fc.oneof(
  { weight: 3, arbitrary: fc.constant("a.txt") },
  fc.constantFrom("./a.txt", "src/b.ts", "/abs/c.md", "src", ".", "", "nul\0l"),
);

const pathArgsArb = fc.record(
  { path: pathArb, content: fc.option(fc.string({ maxLength: 8 }), { nil: undefined }) },
  { requiredKeys: ["path"] },
);

const nonObjectArb = fc.oneof(
  fc.string({ maxLength: 10 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.bigInt(),
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }),
);

const oddObjectArb = fc.object({
  maxDepth: 3,
  maxKeys: 4,
  withBigInt: true,
  withDate: true,
  withMap: true,
  withSet: true,
  withNullPrototype: true,
  withSparseArray: true,
  withTypedArray: true,
  withBoxedValues: true,
});

/** Arguments of every kind, 10 MB strings excepted (see `withHuge`). */
const oddArgsArb: fc.Arbitrary<ArgSpec> = fc.oneof(
  { weight: 8, arbitrary: pathArgsArb.map((value): ArgSpec => ({ kind: "value", value })) },
  { weight: 1, arbitrary: fc.constant<ArgSpec>({ kind: "value", value: {} }) },
  { weight: 2, arbitrary: oddObjectArb.map((value): ArgSpec => ({ kind: "value", value })) },
  {
    weight: 1,
    arbitrary: pathArb.map((path): ArgSpec => ({ kind: "value", value: { path, extra: undefined } })),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(pathArb, fc.bigInt()).map(([path, n]): ArgSpec => ({ kind: "value", value: { path, n } })),
  },
  { weight: 2, arbitrary: nonObjectArb.map((value): ArgSpec => ({ kind: "value", value })) },
  {
    weight: 1,
    arbitrary: fc.record({ path: pathArb, depth: fc.nat(3) }).map((base): ArgSpec => ({ kind: "cyclic", base })),
  },
);

/**
 * Adds a rare 10 MB string (as `path` or `content`) to an argument arbitrary: about one fresh call in 160, some 12
 * calls over the 400 runs of the first property, as many as one in 400 gave over the 1,000 runs it had before.
 */
function withHuge(args: fc.Arbitrary<ArgSpec>): fc.Arbitrary<ArgSpec> {
  return fc.oneof(
    { weight: 160, arbitrary: args },
    { weight: 1, arbitrary: fc.constantFrom<ArgSpec>({ kind: "huge", key: "path" }, { kind: "huge", key: "content" }) },
  );
}

/**
 * Arguments that fight back: a getter that throws, a revoked Proxy, a Proxy whose `ownKeys` throws. A model never
 * sends these, but `ToolNode` turns them into an error ToolMessage, so a drop-in replacement must not do worse.
 */
const hostileArgsArb: fc.Arbitrary<ArgSpec> = fc.oneof(
  { weight: 3, arbitrary: oddArgsArb },
  fc.record({
    kind: fc.constant("hostile" as const),
    trap: fc.constantFrom("getter" as const, "revoked" as const, "ownKeys" as const),
    key: fc.constantFrom("path", "file_path", "content", "note"),
  }),
);

/** JSON-safe arguments (what a checkpointer must store): no cycles, no BigInt, no 10 MB strings. */
const jsonArgsArb: fc.Arbitrary<ArgSpec> = fc.oneof(
  { weight: 8, arbitrary: pathArgsArb.map((value): ArgSpec => ({ kind: "value", value })) },
  { weight: 1, arbitrary: fc.constant<ArgSpec>({ kind: "value", value: {} }) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value): ArgSpec => ({ kind: "value", value })) },
  {
    weight: 1,
    arbitrary: pathArb.map((path): ArgSpec => ({ kind: "value", value: { path, extra: undefined } })),
  },
);

const nameArb = fc.oneof(
  { weight: 4, arbitrary: fc.constant("read_file") },
  { weight: 4, arbitrary: fc.constantFrom(...KNOWN_NAMES) },
  { weight: 2, arbitrary: fc.constantFrom(...UNKNOWN_NAMES) },
);
/** Ids are present most of the time. */
const withIdArb = fc.oneof({ weight: 6, arbitrary: fc.constant(true) }, fc.constant(false));

function callSpecArb(args: fc.Arbitrary<ArgSpec>): fc.Arbitrary<CallSpec> {
  return fc.oneof(
    {
      weight: 3,
      arbitrary: fc.record({ kind: fc.constant("fresh" as const), name: nameArb, args, withId: withIdArb }),
    },
    {
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant("duplicate" as const), reordered: fc.boolean(), withId: withIdArb }),
    },
  );
}

/** Runs of 1–6 AIMessages with 0–4 calls each (`emptyMessages: false`: 1–4). */
function runSpecArb(args: fc.Arbitrary<ArgSpec>, { emptyMessages }: { emptyMessages: boolean }): fc.Arbitrary<RunSpec> {
  const withCalls = fc.array(callSpecArb(args), { minLength: 1, maxLength: 4 });
  // A message without calls ends the run: keep it less frequent than the others.
  const message = emptyMessages
    ? fc.oneof({ weight: 6, arbitrary: withCalls }, fc.constant<MessageSpec>([]))
    : withCalls;
  return fc.record({
    options: fc.record({
      windowSize: fc.integer({ min: 1, max: 12 }),
      repetitionThreshold: fc.integer({ min: 1, max: 4 }),
      memory: fc.record({
        operationsHistoryLimit: fc.integer({ min: 0, max: 5 }),
        observedLimit: fc.integer({ min: 0, max: 5 }),
      }),
      mode: fc.constantFrom("enforce" as const, "observe" as const),
    }),
    guardsOff: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, fc.constant(true)),
    messages: fc.array(message, { minLength: 1, maxLength: 6 }),
  });
}

/** A deep copy with every plain object's keys in reverse order; cycles and shared references are kept. */
function reorderKeys(value: unknown, copies = new Map<object, unknown>()): unknown {
  if (value === null || typeof value !== "object") return value;
  const known = copies.get(value);
  if (known !== undefined) return known;
  if (Array.isArray(value)) {
    const copy: unknown[] = [];
    copies.set(value, copy);
    for (const member of value) copy.push(reorderKeys(member, copies));
    return copy;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  const copy: Record<string, unknown> = Object.create(proto);
  copies.set(value, copy);
  for (const [key, member] of Object.entries(value).reverse()) {
    // defineProperty: a generated "__proto__" key stays an own key.
    Object.defineProperty(copy, key, {
      value: reorderKeys(member, copies),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return copy;
}

function materializeArgs(spec: ArgSpec): unknown {
  switch (spec.kind) {
    case "value":
      return spec.value;
    case "huge":
      return spec.key === "path" ? { path: huge() } : { path: "big.txt", content: huge() };
    case "cyclic": {
      const root: Record<string, unknown> = { ...spec.base };
      let node = root;
      for (let i = 0; i < (spec.base.depth as number); i += 1) {
        const child: Record<string, unknown> = { parent: node };
        node.child = child;
        node = child;
      }
      node.self = root;
      return root;
    }
    case "hostile": {
      const target: Record<string, unknown> = { path: "a.txt" };
      if (spec.trap === "getter") {
        Object.defineProperty(target, spec.key, {
          enumerable: true,
          get: () => {
            throw new Error(`getter ${spec.key} throws`);
          },
        });
        return target;
      }
      if (spec.trap === "ownKeys") {
        return new Proxy(target, {
          ownKeys: () => {
            throw new Error("ownKeys throws");
          },
        });
      }
      const { proxy, revoke } = Proxy.revocable(target, {});
      revoke();
      return proxy;
    }
  }
}

/** {@link reorderKeys}, or the value itself when it cannot be read (a hostile argument). */
function reorderedOrSame(value: unknown): unknown {
  try {
    return reorderKeys(value);
  } catch {
    return value;
  }
}

interface Materialized {
  messages: AIMessage[];
  /** Per message, the index of each call that is an exact or key-reordered copy of the call just before it. */
  duplicates: number[][];
}

/** Builds fresh AIMessages (the messages reducer mutates them) with ids unique across the run. */
/**
 * Whether a repeat of the call is judged before it runs (a read, or a write of known files): the second of two
 * adjacent identical such calls is always blocked. Any other call may answer differently each time and is blocked
 * only once its identical calls returned the same result twice.
 */
function judgedBeforeItRuns(name: string, args: unknown): boolean {
  const { effect } = callIdentity(name, args);
  return (effect.kind === "read" || effect.kind === "write") && !isShellTool(name) && !isStatefulCall(name, args);
}

function materialize(specs: MessageSpec[], prefix: string): Materialized {
  let counter = 0;
  const messages: AIMessage[] = [];
  const duplicates: number[][] = [];
  for (const spec of specs) {
    const calls: ToolCall[] = [];
    const dups: number[] = [];
    for (const call of spec) {
      const id = call.withId ? `${prefix}_${counter++}` : undefined;
      let name: string;
      let args: unknown;
      const previous = calls[calls.length - 1];
      if (call.kind === "fresh") {
        name = call.name;
        args = materializeArgs(call.args);
      } else if (previous !== undefined) {
        name = previous.name;
        args = call.reordered ? reorderedOrSame(previous.args) : previous.args;
        if (judgedBeforeItRuns(name, args)) dups.push(calls.length);
      } else {
        name = "read_file";
        args = { path: "a.txt" };
      }
      calls.push({ type: "tool_call", name, args: args as ToolCall["args"], ...(id === undefined ? {} : { id }) });
    }
    messages.push(new AIMessage({ content: "", tool_calls: calls }));
    duplicates.push(dups);
  }
  return { messages, duplicates };
}

// ---------------------------------------------------------------------------------------------------------------
// The graph: a scripted agent, the GuardedToolNode, toolsCondition.
// ---------------------------------------------------------------------------------------------------------------

/**
 * These properties are about the node's blocks over long scripts, so escalation levels 3 and 4 (the hook's: a node
 * alone throws GuardEscalationError there, see escalation.test.ts) start beyond any script's reach.
 */
const NODE_LEVELS_ONLY = { levelStrikes: [1, 2, 1_000_000, 1_000_001] as [number, number, number, number] };

function buildGraph(options: GuardedToolNodeOptions, queue: AIMessage[], checkpointer?: MemorySaver) {
  const agent = () => ({ messages: [queue.shift() ?? new AIMessage("done")] });
  return new StateGraph(GuardMessagesState)
    .addNode("agent", agent)
    .addNode(
      "tools",
      new GuardedToolNode(TOOLS, { ...options, escalation: { ...NODE_LEVELS_ONLY, ...options.escalation } }),
    )
    .addEdge(START, "agent")
    .addConditionalEdges("agent", toolsCondition, ["tools", END])
    .addEdge("tools", "agent")
    .compile(checkpointer ? { checkpointer } : {});
}

function runConfig(spec: RunSpec, messageCount: number, threadId?: string) {
  return {
    recursionLimit: 2 * messageCount + 5,
    configurable: { ...(spec.guardsOff ? { guards: false } : {}), ...(threadId ? { thread_id: threadId } : {}) },
  };
}

function guardOf(message: ToolMessage): GuardArtifact | undefined {
  return (message.artifact as { guard?: GuardArtifact } | undefined)?.guard;
}

function sum(record: Record<string, number>): number {
  return Object.values(record).reduce((a, b) => a + b, 0);
}

/** A missing id is answered with an empty (or absent) `tool_call_id`. */
const idKey = (id: string | undefined): string => id ?? "";

/**
 * Checks the message protocol of a finished run and returns the ToolMessages per played AIMessage (the AIMessages
 * with tool calls, in order).
 */
function checkAnswers(messages: BaseMessage[]): ToolMessage[][] {
  const answers: ToolMessage[][] = [];
  let i = 0;
  while (i < messages.length) {
    const message = messages[i] as BaseMessage;
    i += 1;
    if (!AIMessage.isInstance(message)) {
      // Only the input (and nothing else) may stand outside an AI turn.
      expect(ToolMessage.isInstance(message), "a ToolMessage that answers no call").toBe(false);
      continue;
    }
    const calls = message.tool_calls ?? [];
    const replies: ToolMessage[] = [];
    while (i < messages.length && ToolMessage.isInstance(messages[i])) {
      replies.push(messages[i] as ToolMessage);
      i += 1;
    }
    // Exactly one reply per call: the multisets of ids agree (missing ids count as "").
    expect(replies.map((r) => idKey(r.tool_call_id)).sort()).toEqual(calls.map((c) => idKey(c.id)).sort());
    // Each call with an id has one reply, of its tool's name (one assertion for the message: vitest's cost is per
    // assertion, and a failure shows the whole message).
    const withIds = calls.filter((c) => c.id !== undefined);
    expect(withIds.map((c) => replies.filter((r) => r.tool_call_id === c.id).map((r) => r.name))).toEqual(
      withIds.map((c) => [c.name]),
    );
    if (calls.length > 0) {
      // Replies come in call order.
      expect(replies.map((r) => idKey(r.tool_call_id))).toEqual(calls.map((c) => idKey(c.id)));
      answers.push(replies);
    }
  }
  return answers;
}

/** The calls the graph plays: every message up to and including the first one without tool calls. */
function playedPrefix(specs: MessageSpec[]): number {
  const firstEmpty = specs.findIndex((calls) => calls.length === 0);
  return firstEmpty < 0 ? specs.length : firstEmpty;
}

/** The ids of the person's messages, in order (the graph gives each message one). */
function personIds(messages: BaseMessage[]): (string | undefined)[] {
  return messages.filter((m) => HumanMessage.isInstance(m)).map((m) => m.id);
}

/** A guard state without blocked-call timestamps, response ids and run marker (they differ from run to run). */
function comparable(state: ToolGuardState): ToolGuardState {
  const escalation = state.escalation;
  return {
    ...state,
    run: state.run == null ? state.run : "run",
    escalation: {
      ...escalation,
      lastTurn: escalation.lastTurn === null ? null : "turn",
      // The response a strike's calls belong to is known by its id, which the graph assigns.
      blocked: escalation.blocked.map((b) => ({ ...b, at: 0, ...(b.turn === undefined ? {} : { turn: "turn" }) })),
    },
  };
}

function checkGuardState(state: ToolGuardState, spec: RunSpec, answers: ToolMessage[][]): void {
  // Plain JSON, bounded by the options.
  let json = "";
  expect(() => {
    json = JSON.stringify(state);
  }).not.toThrow();
  expect(JSON.parse(json)).toEqual(state);
  expect(state.repetition.window.length).toBeLessThanOrEqual(spec.options.windowSize);
  expect(Object.keys(state.operations.ops).length).toBeLessThanOrEqual(spec.options.memory.operationsHistoryLimit);
  expect(state.observed.length).toBeLessThanOrEqual(spec.options.memory.observedLimit);
  const seqs = state.repetition.window.map((r) => r.seq);
  expect(seqs.every((seq, i) => i === 0 || seq > (seqs[i - 1] as number))).toBe(true);

  // Every decided call is counted once: allowed, or blocked (enforce), never both.
  const replies = answers.flat();
  const blocked = replies.filter((r) => guardOf(r) !== undefined).length;
  expect(state.stats.allowed + sum(state.stats.blocked)).toBe(replies.length);
  expect(sum(state.stats.blocked)).toBe(blocked);
  if (spec.guardsOff || spec.options.mode === "observe") expect(sum(state.stats.blocked)).toBe(0);
  if (spec.guardsOff || spec.options.mode === "enforce") expect(sum(state.stats.observed)).toBe(0);
}

function checkReplies(spec: RunSpec, answers: ToolMessage[][], duplicates: number[][]): void {
  const enforcing = !spec.guardsOff && spec.options.mode === "enforce";
  answers.forEach((replies, m) => {
    for (const reply of replies) {
      const guard = guardOf(reply);
      if (guard === undefined) continue;
      // Only enforce mode blocks, and a block is an error ToolMessage that says so.
      expect({
        enforcing,
        status: reply.status,
        blocked: guard.blocked,
        rule: BLOCK_RULES.includes(guard.rule) ? "a block rule" : guard.rule,
        says: typeof reply.content === "string" && reply.content.length > 0,
      }).toEqual({ enforcing: true, status: "error", blocked: true, rule: "a block rule", says: true });
    }
    // The second of two adjacent identical calls of one message is always blocked.
    if (enforcing) {
      for (const index of duplicates[m] ?? []) expect(guardOf(replies[index] as ToolMessage)?.blocked).toBe(true);
    }
  });
}

async function runOnce(spec: RunSpec) {
  const { messages, duplicates } = materialize(spec.messages, "call");
  const graph = buildGraph(spec.options, [...messages]);
  const result = await graph.invoke({ messages: [new HumanMessage("go")] }, runConfig(spec, messages.length));
  return { result, duplicates };
}

/** Properties (1)–(5) of one run, plus the adjacent-duplicate rule. */
async function checkRun(spec: RunSpec): Promise<void> {
  const { result, duplicates } = await runOnce(spec);
  const answers = checkAnswers(result.messages);
  const played = playedPrefix(spec.messages);
  expect(answers).toHaveLength(played);
  // The agent played every scripted message up to the first one without calls, then stopped.
  expect(result.messages.filter((m) => AIMessage.isInstance(m))).toHaveLength(played + 1);
  checkReplies(spec, answers, duplicates.slice(0, played));
  checkGuardState(result.toolGuard, spec, answers);
}

describe("GuardedToolNode in a graph, property-based", () => {
  it("never crashes and answers every tool call exactly once, whatever the calls hold", async () => {
    // 400 runs play some 2,300 calls (2.3 messages of 2.5 calls a run), every run a fresh draw of the options:
    // each unknown name some 45 times, non-object arguments 200 times, cyclic ones 100, copies of the call before
    // 580, 10 MB strings about 12 (`fc.sample` over five seeds; 1,000 runs had 2.5 times as many of each, and as
    // many 10 MB strings).
    await fc.assert(fc.asyncProperty(runSpecArb(withHuge(oddArgsArb), { emptyMessages: true }), checkRun), {
      numRuns: 400,
    });
  }, 120_000);

  it("never crashes on arguments that throw when read (getters, revoked or throwing Proxies)", async () => {
    await fc.assert(fc.asyncProperty(runSpecArb(hostileArgsArb, { emptyMessages: true }), checkRun), {
      numRuns: 200,
    });
  }, 60_000);

  it("keeps a guard state that a checkpointer stores and restores, across invocations of one thread", async () => {
    let thread = 0;
    await fc.assert(
      fc.asyncProperty(runSpecArb(jsonArgsArb, { emptyMessages: false }), fc.nat(), async (spec, cut) => {
        const { messages } = materialize(spec.messages, "call");
        const split = cut % (messages.length + 1);
        const checkpointer = new MemorySaver();
        const queue: AIMessage[] = messages.slice(0, split);
        const graph = buildGraph(spec.options, queue, checkpointer);
        const config = runConfig(spec, messages.length, `thread-${thread++}`);

        // Two invocations of one thread: the second starts from the checkpoint the first left. It brings no
        // person's message, so it goes on with the run the first one started.
        await graph.invoke({ messages: [new HumanMessage("first")] }, config);
        queue.push(...messages.slice(split));
        const result = await graph.invoke({ messages: [] }, config);

        const answers = checkAnswers(result.messages);
        expect(answers).toHaveLength(messages.length);
        checkGuardState(result.toolGuard, spec, answers);
        const saved = await graph.getState(config);
        expect(saved.values.toolGuard).toEqual(result.toolGuard);
        // The run is marked by the person's message its first tool turn answered; when the first invocation made
        // none (the model answered at once), the second one's turns do not answer the person: no marker, one run.
        expect(result.toolGuard.run).toBe(split === 0 ? undefined : personIds(result.messages)[0]);

        // The same calls in one invocation without a checkpointer leave the same guard state (but for the clock
        // and the ids the graph assigned).
        const reference = await runOnce(spec);
        const marked = (state: ToolGuardState) => ({
          ...comparable(state),
          run: split === 0 ? undefined : comparable(state).run,
        });
        expect(marked(result.toolGuard)).toEqual(marked(reference.result.toolGuard));
      }),
      // What is particular to this property is where the cut falls (before the first message, inside, after the
      // last) against the options that trim the state; the checks of one run it shares are the first property's.
      // 120 runs put some 30 cuts before the first message, 30 after the last and 55 inside; some 50 runs enforce,
      // 50 observe, 20 have the guards off (`fc.sample` over three seeds).
      { numRuns: 120 },
    );
  }, 120_000);

  it("with runBoundary none, a new person's message goes on from the stored state as one invocation would", async () => {
    let thread = 0;
    await fc.assert(
      fc.asyncProperty(runSpecArb(jsonArgsArb, { emptyMessages: false }), fc.nat(), async (base, cut) => {
        const spec: RunSpec = {
          ...base,
          options: { ...base.options, memory: { ...base.options.memory, runBoundary: "none" } },
        };
        const { messages } = materialize(spec.messages, "call");
        const split = cut % (messages.length + 1);
        const queue: AIMessage[] = messages.slice(0, split);
        const graph = buildGraph(spec.options, queue, new MemorySaver());
        const config = runConfig(spec, messages.length, `none-${thread++}`);

        await graph.invoke({ messages: [new HumanMessage("first")] }, config);
        queue.push(...messages.slice(split));
        const result = await graph.invoke({ messages: [new HumanMessage("second")] }, config);

        const answers = checkAnswers(result.messages);
        expect(answers).toHaveLength(messages.length);
        checkGuardState(result.toolGuard, spec, answers);
        expect((await graph.getState(config)).values.toolGuard).toEqual(result.toolGuard);
        expect(result.toolGuard.run ?? null).toBeNull(); // the whole thread is one run: no marker is kept
        const reference = await runOnce(spec);
        expect(comparable(result.toolGuard)).toEqual(comparable(reference.result.toolGuard));
      }),
      // The cut as in the property above, with runBoundary none: half its runs, some 15 cuts at each end.
      { numRuns: 60 },
    );
  }, 120_000);

  it("a new person's message starts a new run from the stored state: its counters go on, its windows start afresh", async () => {
    let thread = 0;
    await fc.assert(
      fc.asyncProperty(runSpecArb(jsonArgsArb, { emptyMessages: false }), fc.nat(), async (spec, cut) => {
        const { messages } = materialize(spec.messages, "call");
        const split = cut % (messages.length + 1);
        const queue: AIMessage[] = messages.slice(0, split);
        const graph = buildGraph(spec.options, queue, new MemorySaver());
        const config = runConfig(spec, messages.length, `runs-${thread++}`);

        const before = await graph.invoke({ messages: [new HumanMessage("first")] }, config);
        queue.push(...messages.slice(split));
        const result = await graph.invoke({ messages: [new HumanMessage("second")] }, config);

        // The counters cover the calls of both runs.
        const answers = checkAnswers(result.messages);
        expect(answers).toHaveLength(messages.length);
        checkGuardState(result.toolGuard, spec, answers);
        expect((await graph.getState(config)).values.toolGuard).toEqual(result.toolGuard);
        const persons = personIds(result.messages);
        expect(persons).toHaveLength(2);
        if (split < messages.length) {
          expect(result.toolGuard.run).toBe(persons[1]);
          // The window holds only the second run's calls: their sequence numbers go on from the first run's.
          const firstSeq = before.toolGuard.repetition.nextSeq;
          expect(result.toolGuard.repetition.window.every((r) => r.seq >= firstSeq)).toBe(true);
        }

        // Within the second run, the guards decide as on a fresh thread with only that run's calls.
        const alone = await runOnce({ ...spec, messages: spec.messages.slice(split) });
        const second = answers.slice(split).map((replies) => replies.map((r) => guardOf(r)?.rule ?? null));
        const fresh = checkAnswers(alone.result.messages).map((replies) =>
          replies.map((r) => guardOf(r)?.rule ?? null),
        );
        expect(second).toEqual(fresh);
      }),
      // The cut as in the first persistence property, with a new person's message at the cut: half its runs.
      { numRuns: 60 },
    );
  }, 120_000);
});
