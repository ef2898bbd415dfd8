import { capText } from "../common/texts/format.js";
import type { ReplayRun, ReplayStep, ReplayToolCall } from "./replay.js";

/**
 * The input formats a replay reads: the shared data set's normalized JSONL (`jsonl`: one run with `steps` a line),
 * LangChain messages (`langchain`: `BaseMessage` objects, their `toJSON()` form, stored `{ type, data }` messages,
 * or plain `{ type, content, tool_calls }` objects, e.g. `messages` from a checkpoint), and OpenAI-style chat
 * messages with `tool_calls` (`openai`).
 *
 * @example
 * ```ts
 * const format: ReplayFormat = "openai";
 * ```
 */
export type ReplayFormat = "jsonl" | "langchain" | "openai";

/**
 * A replay input that cannot be read: says which file and line (or message), and why.
 *
 * @example
 * ```ts
 * for (const error of readRuns(text, { file }).errors) console.error(error.message); // "run.jsonl:3: not JSON …"
 * ```
 */
export class ReplayInputError extends Error {
  /** Always `"ReplayInputError"`. */
  override readonly name = "ReplayInputError";
  constructor(
    /** Where: the file and line (`runs.jsonl:3`), or the message. */
    readonly where: string,
    /** Why it cannot be read. */
    readonly reason: string,
  ) {
    super(`${where}: ${reason}`);
  }
}

/**
 * What {@link readRuns} found in one input: the runs it could read and an error for each part it could not.
 *
 * @example
 * ```ts
 * const { runs, errors }: ReadRunsResult = readRuns(text, { file: "runs.jsonl" });
 * ```
 */
export interface ReadRunsResult {
  /** The runs that could be read, in input order. */
  runs: ReplayRun[];
  /** One error for each part that could not be read. */
  errors: ReplayInputError[];
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((b) => (typeof b === "string" ? b : isObject(b) && typeof b.text === "string" ? b.text : ""))
      .join("");
  }
  return content === undefined || content === null ? "" : JSON.stringify(content);
}

/** A LangChain message of any form, as `{ type, fields }`; undefined when it is not one. */
function langchainMessage(m: unknown): { type: string; fields: Json } | undefined {
  if (!isObject(m)) return undefined;
  const getType = (m as { getType?: unknown }).getType;
  if (typeof getType === "function") return { type: String(getType.call(m)), fields: m };
  // toJSON(): { lc: 1, type: "constructor", id: [..., "AIMessage"], kwargs: {...} }
  if (m.lc === 1 && Array.isArray(m.id) && isObject(m.kwargs)) {
    const cls = String(m.id[m.id.length - 1] ?? "");
    const type = /^(AI|Human|Tool|System)Message/.exec(cls)?.[1]?.toLowerCase() ?? cls;
    return { type, fields: m.kwargs };
  }
  if (typeof m.type === "string" && isObject(m.data)) return { type: m.type, fields: m.data };
  if (typeof m.type === "string" && "content" in m) return { type: m.type, fields: m };
  return undefined;
}

function isOpenAIMessage(m: unknown): boolean {
  return (
    isObject(m) &&
    typeof m.role === "string" &&
    ["system", "developer", "user", "assistant", "tool", "function"].includes(m.role)
  );
}

/** Which message format a list is in (judged by its first message), or undefined. */
function messageFormat(messages: unknown[]): "langchain" | "openai" | undefined {
  const first = messages[0];
  if (first === undefined) return undefined;
  if (langchainMessage(first) !== undefined) return "langchain";
  if (isOpenAIMessage(first)) return "openai";
  return undefined;
}

function parseArgs(raw: unknown, where: string): unknown {
  if (typeof raw !== "string") return raw ?? {};
  try {
    return JSON.parse(raw);
  } catch {
    throw new ReplayInputError(where, `tool call arguments are not JSON: ${capText(raw, 80)}`);
  }
}

/** A tool call of a message list that no tool result answers (`message`: its AI message's position, from 1). */
interface MissingResult {
  id: string | undefined;
  name: string;
  message: number;
}

/** The calls without a result of each run read from messages (where every call is answered by id). */
const missingResults = new WeakMap<ReplayRun, { where: string; calls: MissingResult[] }>();

/** A run's calls no tool result answers (replayed without one, they count in no total) and where it was read. */
export function callsWithoutResult(run: ReplayRun): { where: string; calls: MissingResult[] } | undefined {
  return missingResults.get(run);
}

/**
 * Reads a list of LangChain messages (instances or their JSON) or OpenAI chat messages into a run. Throws
 * {@link ReplayInputError} naming the message that cannot be read (e.g. a tool result without its call).
 *
 * @example
 * ```ts
 * const run = runFromMessages((await graph.getState(config)).values.messages, "thread-1");
 * ```
 */
export function runFromMessages(messages: readonly unknown[], id: string, where = id): ReplayRun {
  const format = messageFormat([...messages]);
  if (format === undefined) {
    throw new ReplayInputError(where, "unknown format: expected LangChain messages or OpenAI chat messages");
  }
  const steps: ReplayStep[] = [];
  const callIds = new Set<string>();
  const calledAt: MissingResult[] = [];
  const answered = new Set<string>();
  for (const [i, m] of messages.entries()) {
    const at = `${where}: message ${i + 1}`;
    let role: string;
    let fields: Json;
    if (format === "langchain") {
      const lc = langchainMessage(m);
      if (lc === undefined) throw new ReplayInputError(at, "not a LangChain message");
      role = { human: "user", ai: "assistant", tool: "tool", system: "system" }[lc.type] ?? lc.type;
      if (lc.type === "AIMessageChunk") role = "assistant";
      fields = lc.fields;
    } else {
      if (!isOpenAIMessage(m)) throw new ReplayInputError(at, "not an OpenAI chat message");
      fields = m as Json;
      role = String(fields.role);
    }
    if (role === "system" || role === "developer") continue;
    if (role === "user") {
      steps.push({ role: "user", text: textOf(fields.content) });
    } else if (role === "assistant") {
      const calls: ReplayToolCall[] = [];
      const raw = Array.isArray(fields.tool_calls)
        ? fields.tool_calls
        : isObject(fields.additional_kwargs) && Array.isArray(fields.additional_kwargs.tool_calls)
          ? fields.additional_kwargs.tool_calls
          : [];
      for (const c of raw) {
        if (!isObject(c)) throw new ReplayInputError(at, "a tool call that is not an object");
        const fn = isObject(c.function) ? c.function : undefined;
        const name = fn ? fn.name : c.name;
        if (typeof name !== "string") throw new ReplayInputError(at, "a tool call without a name");
        const callId = typeof c.id === "string" ? c.id : undefined;
        if (callId !== undefined) callIds.add(callId);
        calledAt.push({ id: callId, name, message: i + 1 });
        calls.push({ name, args: parseArgs(fn ? fn.arguments : c.args, at), id: callId });
      }
      steps.push({ role: "assistant", text: textOf(fields.content), tool_calls: calls });
    } else if (role === "tool" || role === "function") {
      const callId = typeof fields.tool_call_id === "string" ? fields.tool_call_id : undefined;
      if (callId === undefined || !callIds.has(callId)) {
        throw new ReplayInputError(
          at,
          `a tool result without its call (tool_call_id ${JSON.stringify(callId ?? null)})`,
        );
      }
      answered.add(callId);
      const text = textOf(fields.content);
      // An OpenAI chat log keeps no status: a failure reads as the tool node wrote it (`Error: …`, `toolErrorText`).
      const failed = fields.status === undefined && format === "openai" ? /^\s*Error:/.test(text) : false;
      steps.push({
        role: "tool",
        name: typeof fields.name === "string" ? fields.name : undefined,
        ok: fields.status !== "error" && !failed,
        text,
        tool_call_id: callId,
      });
    } else {
      throw new ReplayInputError(at, `unknown message type "${role}"`);
    }
  }
  const run: ReplayRun = { id, steps };
  const missing = calledAt.filter((c) => c.id === undefined || !answered.has(c.id));
  if (missing.length > 0) missingResults.set(run, { where, calls: missing });
  return run;
}

/** A run of the normalized format, checked. */
function runFromRecord(record: Json, where: string, fallbackId: string): ReplayRun {
  if (!Array.isArray(record.steps)) throw new ReplayInputError(where, "a run needs `steps`");
  const steps: ReplayStep[] = [];
  let open = 0; // calls of the latest assistant or user step still waiting for a result
  let openUser = 0;
  for (const [i, s] of record.steps.entries()) {
    const at = `${where}: step ${i + 1}`;
    if (!isObject(s) || typeof s.role !== "string") throw new ReplayInputError(at, "a step needs a `role`");
    const calls = Array.isArray(s.tool_calls)
      ? s.tool_calls.map((c) => {
          if (!isObject(c) || typeof c.name !== "string") throw new ReplayInputError(at, "a tool call needs a `name`");
          return { name: c.name, args: c.args ?? {}, id: typeof c.id === "string" ? c.id : undefined };
        })
      : [];
    if (s.role === "assistant") {
      steps.push({ role: "assistant", text: textOf(s.text), tool_calls: calls });
      open = calls.length;
    } else if (s.role === "user") {
      steps.push({ role: "user", text: textOf(s.text), tool_calls: calls.length > 0 ? calls : undefined });
      openUser = calls.length;
    } else if (s.role === "tool") {
      const requestor = typeof s.requestor === "string" ? s.requestor : undefined;
      if (requestor === "user") {
        if (openUser === 0) throw new ReplayInputError(at, "a tool result without its call (the user made none)");
        openUser -= 1;
      } else {
        if (open === 0) throw new ReplayInputError(at, "a tool result without its call");
        open -= 1;
      }
      steps.push({
        role: "tool",
        name: typeof s.name === "string" ? s.name : undefined,
        ok: s.ok !== false,
        text: textOf(s.text),
        requestor,
      });
    } else if (s.role !== "system") {
      throw new ReplayInputError(at, `unknown role "${s.role}"`);
    }
  }
  return {
    id: typeof record.id === "string" ? record.id : fallbackId,
    source: typeof record.source === "string" ? record.source : undefined,
    meta: isObject(record.meta) ? record.meta : undefined,
    steps,
  };
}

/** One JSON value (a line, or a whole file) as runs. */
function runsOfValue(value: unknown, where: string, id: string, format: ReplayFormat | "auto"): ReplayRun[] {
  const want = (f: ReplayFormat) => {
    if (format !== "auto" && format !== f) {
      throw new ReplayInputError(where, `this is ${f} input, not ${format}`);
    }
  };
  if (Array.isArray(value)) {
    if (value.length > 0 && value.every((v) => isObject(v) && Array.isArray(v.steps))) {
      want("jsonl");
      return value.map((v, i) => runFromRecord(v as Json, `${where}: run ${i + 1}`, `${id}#${i + 1}`));
    }
    const f = messageFormat(value);
    if (f !== undefined) want(f);
    return [runFromMessages(value, id, where)];
  }
  if (isObject(value)) {
    if (Array.isArray(value.steps)) {
      want("jsonl");
      return [runFromRecord(value, where, id)];
    }
    const messages = Array.isArray(value.messages)
      ? value.messages
      : isObject(value.channel_values) && Array.isArray(value.channel_values.messages)
        ? value.channel_values.messages
        : isObject(value.values) && Array.isArray(value.values.messages)
          ? value.values.messages
          : undefined;
    if (messages !== undefined) {
      const f = messageFormat(messages);
      if (f !== undefined) want(f);
      return [runFromMessages(messages, typeof value.id === "string" ? value.id : id, where)];
    }
  }
  throw new ReplayInputError(
    where,
    "unknown format: expected a run with `steps`, a list of LangChain or OpenAI messages, or an object with `messages`",
  );
}

/** The runs of one parsed JSON value at `where` (also the id of a run without one), or the error why it holds none. */
export function runsOfParsed(value: unknown, where: string, format: ReplayFormat | "auto"): ReadRunsResult {
  try {
    return { runs: runsOfValue(value, where, where, format), errors: [] };
  } catch (e) {
    return { runs: [], errors: [e instanceof ReplayInputError ? e : new ReplayInputError(where, String(e))] };
  }
}

/** The first (`fromEnd`: the last) character of `line` that is not white space, or undefined. */
function edgeChar(line: string, fromEnd: boolean): string | undefined {
  const step = fromEnd ? -1 : 1;
  for (let i = fromEnd ? line.length - 1 : 0; i >= 0 && i < line.length; i += step) {
    const ch = line[i] as string;
    if (!/\s/.test(ch)) return ch;
  }
  return undefined;
}

const JSON_STARTS = '{["-0123456789tfn';

/** One line of JSON Lines parsed, or the error that names it (`where`) and says why it is not JSON. */
export function parseLine(line: string, where: string): { value: unknown } | { error: ReplayInputError } {
  // A file may have millions of bad lines: no stacks for their errors, no parser exception where one char tells.
  const stackLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    const first = edgeChar(line, false);
    if (first !== undefined && !JSON_STARTS.includes(first)) {
      return { error: new ReplayInputError(where, `not JSON (it starts with ${JSON.stringify(first)})`) };
    }
    // A line cut short (the usual broken line): an object or a list whose end is not there.
    const last = edgeChar(line, true);
    if ((first === "{" && last !== "}") || (first === "[" && last !== "]")) {
      return {
        error: new ReplayInputError(where, `not JSON (${first === "{" ? "an object" : "a list"} that does not end)`),
      };
    }
    return { value: JSON.parse(line) };
  } catch (e) {
    return { error: new ReplayInputError(where, `not JSON (${(e as Error).message})`) };
  } finally {
    Error.stackTraceLimit = stackLimit;
  }
}

/**
 * Reads the runs in one input (a file's text): a whole JSON document (one run, a list of runs, a list of messages,
 * or an object with `messages`) or JSON Lines (one of those a line). Every part that cannot be read becomes a
 * {@link ReplayInputError} naming its line (or message), and the other runs are still read. For a file, and for
 * input larger than a few hundred MB, `readRunsFromFile` reads the same a line at a time.
 *
 * @example
 * ```ts
 * const { runs, errors } = readRuns(readFileSync("runs.jsonl", "utf8"), { file: "runs.jsonl" });
 * errors.forEach((e) => console.error(e.message)); // e.g. "runs.jsonl:7: not JSON (Unexpected token …)"
 * ```
 */
export function readRuns(
  text: string,
  options: { file?: string; format?: ReplayFormat | "auto" } = {},
): ReadRunsResult {
  const file = options.file ?? "input";
  const format = options.format ?? "auto";
  const trimmed = text.trim();
  if (trimmed === "") return { runs: [], errors: [new ReplayInputError(file, "empty input")] };
  const whole = parseLine(trimmed, file);
  if ("value" in whole) return runsOfParsed(whole.value, file, format);
  // JSON Lines, or not JSON at all: read line by line
  const runs: ReplayRun[] = [];
  const errors: ReplayInputError[] = [];
  for (const [i, line] of text.split("\n").entries()) {
    if (line.trim() === "") continue;
    const where = `${file}:${i + 1}`;
    const parsed = parseLine(line, where);
    const read = "value" in parsed ? runsOfParsed(parsed.value, where, format) : { runs: [], errors: [parsed.error] };
    runs.push(...read.runs);
    errors.push(...read.errors);
  }
  return { runs, errors };
}
