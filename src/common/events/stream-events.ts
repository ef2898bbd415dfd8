// Guard events: one typed, versioned shape for every decision a person may want to see, and the `guardLog` channel.
import { z } from "zod/v4";
import type { ChannelSpec } from "../channel.js";
import { canonicalJson } from "../identity/signature.js";
import { GuardStateError, kindOf, StoredValues } from "../state-error.js";
import { capText } from "../texts/format.js";
import type { BlockRule, StopReason } from "../vocabulary.js";

/**
 * The version of {@link GuardStreamEvent}'s shape. Fields may be added within a version; a field that changes
 * meaning or disappears bumps it.
 *
 * @example
 * ```ts
 * if (chunk.source === "langgraph-guards" && chunk.version === GUARD_EVENT_VERSION) show(chunk);
 * ```
 */
export const GUARD_EVENT_VERSION = 1;

/**
 * What happened:
 * - `blocked`: a tool call was not run (`rule`, `count`, and with escalation on `level` and `strikes`);
 * - `near-miss`: a call ran although it repeats an identical earlier call of the window (`count`), or although it
 *   writes a file written often in this run (`rule: "file_edits"`, `count` the file's writes with it, `message` the
 *   reminder its answer carries), or although it repeats a call made often in this run (`rule: "repeat_ceiling"`,
 *   `count` the identical calls in the run with it, `message` the reminder);
 * - `observed`: observe mode let a call run that enforce mode would have blocked (`rule`, `count`);
 * - `cache`: a file tool answered from its cache without reading the file again (`guard: "file-cache"`), or a
 *   repeat was answered from the result cache without running its tool (`guard: "tool-calls"`; see `memory.cache`);
 * - `unchanged`: a call ran and returned exactly an earlier identical call's result, and the model was sent a short
 *   note pointing at that call instead (result dedupe; `bytesSaved`);
 * - `loop`: the loop detector found the model repeating itself (`similarity`, `threshold`) and ended the run;
 * - `limit`: a safety limit ended the run (`limit`, `value`, `threshold`);
 * - `escalation`: a response reached escalation level 3 (a person is asked) or 4 (the run ends);
 * - `interrupt`: the run is paused for a person's answer (`interrupt()`).
 *
 * @example
 * ```ts
 * const stops: GuardStreamEventKind[] = ["loop", "limit", "escalation"];
 * ```
 */
export type GuardStreamEventKind =
  | "blocked"
  | "near-miss"
  | "observed"
  | "cache"
  | "unchanged"
  | "loop"
  | "limit"
  | "escalation"
  | "interrupt";

/**
 * One guard event, as written to the custom stream (`streamMode: "custom"`) and kept in the `guardLog` channel.
 * Plain JSON; `source` tells it apart from other custom chunks.
 *
 * @example
 * ```ts
 * for await (const chunk of await agent.stream(input, { ...config, streamMode: "custom" })) {
 *   if (isGuardStreamEvent(chunk) && chunk.kind === "blocked") console.log(`${chunk.tool}: ${chunk.rule}`);
 * }
 * ```
 */
export interface GuardStreamEvent {
  /** Always `"langgraph-guards"`: tells guard events apart from other custom chunks. */
  source: "langgraph-guards";
  /** The shape's version ({@link GUARD_EVENT_VERSION}). */
  version: typeof GUARD_EVENT_VERSION;
  /** What happened. */
  kind: GuardStreamEventKind;
  /** Which guard decided. */
  guard: "tool-calls" | "loop" | "limits" | "file-cache";
  /** The tool the call was for. */
  tool?: string;
  /** The tool call's id. */
  callId?: string;
  /** The call's arguments as canonical JSON, cut at 200 characters. */
  args?: string;
  /** The rule that blocked the call (or would have). */
  rule?: BlockRule;
  /** Identical calls in the window, this one included. */
  count?: number;
  /** Escalation level (1 ask, 2 options, 3 ask a person, 4 end the run). */
  level?: number;
  /** Strikes in the thread with this event. */
  strikes?: number;
  /** For `loop` and `limit`: which limit (`loop`, `iterations`, `runtime`, `cost`, `tokens`, `failures`). */
  limit?: string;
  /** For `loop` and `limit`: the value reached (similarity 0..1 for a loop). */
  value?: number;
  /** For `loop` and `limit`: the threshold. */
  threshold?: number;
  /** For `cache` and `unchanged`: characters not read again (or not sent again). */
  bytesSaved?: number;
  /** A sentence for people, cut at 300 characters. */
  message?: string;
}

/**
 * Whether a custom-stream chunk is a guard event (of any version).
 *
 * @example
 * ```ts
 * const events = chunks.filter(isGuardStreamEvent);
 * ```
 */
export function isGuardStreamEvent(value: unknown): value is GuardStreamEvent {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { source?: unknown }).source === "langgraph-guards" &&
    typeof (value as { kind?: unknown }).kind === "string"
  );
}

/**
 * How many recent events the `guardLog` channel keeps (the counts cover every event).
 *
 * @example
 * ```ts
 * log.recent.length <= GUARD_LOG_LIMIT; // true
 * ```
 */
export const GUARD_LOG_LIMIT = 50;

/**
 * The guard events of a thread, counted (per kind, for the thread's lifetime) and the most recent ones kept
 * (at most {@link GUARD_LOG_LIMIT}, oldest first): the `guardLog` channel.
 *
 * @example
 * ```ts
 * const { values } = await agent.getState(config);
 * const log: GuardLog = values.guardLog;
 * console.log(`${log.counts.blocked ?? 0} calls blocked; last: ${log.recent.at(-1)?.kind}`);
 * ```
 */
export interface GuardLog {
  /** Events per kind, for the thread's lifetime (a kind that never happened is absent). */
  counts: Partial<Record<GuardStreamEventKind, number>>;
  /** Events in all, for the thread's lifetime. */
  total: number;
  /** The most recent events, oldest first (at most {@link GUARD_LOG_LIMIT}). */
  recent: GuardStreamEvent[];
}

/**
 * An empty log (the channel default).
 *
 * @example
 * ```ts
 * emptyGuardLog().total; // 0
 * ```
 */
export function emptyGuardLog(): GuardLog {
  return new ChannelLog({}, 0, []);
}

/** The reducer's log: an instance, which LangGraph's `Send` does not deep-copy per tool task as it would a literal. */
class ChannelLog implements GuardLog {
  constructor(
    public counts: Partial<Record<GuardStreamEventKind, number>>,
    public total: number,
    public recent: GuardStreamEvent[],
  ) {}
}

function isLog(value: unknown): value is GuardLog {
  return typeof value === "object" && value !== null && !Array.isArray(value) && "recent" in value;
}

const count = z.number();
/** Logs read from checkpoints: each plain value is checked once. */
const storedLogs = new StoredValues(
  "guardLog",
  "the guard log",
  z.looseObject({ counts: z.record(z.string(), count), total: count, recent: z.array(z.unknown()) }),
  (parsed) => new ChannelLog({ ...parsed.counts }, parsed.total, parsed.recent as GuardStreamEvent[]),
);

/** The `guardLog` value as the guards read it: a checkpoint's is checked once (`update`: it is a node's update). */
export function readGuardLog(value: unknown, update = false): GuardLog {
  if (value instanceof ChannelLog) return value;
  if (value === undefined) return emptyGuardLog();
  return storedLogs.read(value, update);
}

/** The events of an update, each an object with a `kind`; else a `GuardStateError`. */
function logEvents(update: GuardStreamEvent | GuardStreamEvent[]): GuardStreamEvent[] {
  const events = Array.isArray(update) ? update : [update];
  for (const e of events as unknown[]) {
    if (e === null || typeof e !== "object" || typeof (e as { kind?: unknown }).kind !== "string") {
      throw new GuardStateError("guardLog", `${kindOf(e)} is not a guard event (no \`kind\`)`, true);
    }
  }
  return events;
}

/**
 * What a node may write to the `guardLog` channel: events (counted and appended) or a whole log.
 *
 * @example
 * ```ts
 * const node = () => ({ guardLog: emptyGuardLog() satisfies GuardLogUpdate }); // start the log again
 * ```
 */
export type GuardLogUpdate = GuardStreamEvent | GuardStreamEvent[] | GuardLog | null;

/**
 * The `guardLog` reducer: events are counted and appended (the oldest dropped beyond the limit); a whole log
 * replaces the current one (createAgent feeds each channel's own value back on every invoke, which must change
 * nothing); `null` resets it (how a damaged log is reset); `undefined` changes nothing. Anything else is refused with
 * a `GuardStateError`, and so is a stored log the reducer cannot read.
 *
 * @example
 * ```ts
 * reduceGuardLog(emptyGuardLog(), [event]).counts[event.kind]; // 1
 * ```
 */
export function reduceGuardLog(
  current: GuardLog | undefined,
  update: GuardStreamEvent | GuardStreamEvent[] | GuardLog | undefined | null,
): GuardLog {
  if (update === null) return emptyGuardLog();
  if (update === undefined) return current ?? emptyGuardLog();
  if (typeof update !== "object") throw new GuardStateError("guardLog", `${kindOf(update)} (not an event)`, true);
  if (isLog(update)) return update; // a whole log (createAgent writes it back on every invoke): checked when read
  const events = logEvents(update);
  if (events.length === 0) return current ?? emptyGuardLog();
  const log = readGuardLog(current);
  const counts = { ...log.counts };
  for (const e of events) counts[e.kind] = (counts[e.kind] ?? 0) + 1;
  return new ChannelLog(counts, log.total + events.length, [...log.recent, ...events].slice(-GUARD_LOG_LIMIT));
}

/**
 * A guard event with its header, long fields cut and empty ones left out.
 *
 * @example
 * ```ts
 * guardStreamEvent({ kind: "cache", guard: "file-cache", tool: "read_file", bytesSaved: 1200 });
 * ```
 */
export function guardStreamEvent(
  fields: Omit<GuardStreamEvent, "source" | "version" | "args"> & { args?: unknown },
): GuardStreamEvent {
  const { args, message, ...rest } = fields;
  const event: GuardStreamEvent = { source: "langgraph-guards", version: GUARD_EVENT_VERSION, ...rest };
  if (args !== undefined) event.args = capText(canonicalJson(args), 200);
  if (message !== undefined) event.message = capText(message, 300);
  for (const key of Object.keys(event) as (keyof GuardStreamEvent)[]) if (event[key] === undefined) delete event[key];
  return event;
}

/**
 * The event of a run stopped by the loop detector (`loop`) or a safety limit (`limit`).
 *
 * @example
 * ```ts
 * stopStreamEvent({ kind: "iterations", value: 30, limit: 30, message: "Maximum iterations (30) reached." });
 * ```
 */
export function stopStreamEvent(reason: StopReason): GuardStreamEvent {
  const loop = reason.kind === "loop";
  return guardStreamEvent({
    kind: loop ? "loop" : "limit",
    guard: loop ? "loop" : "limits",
    limit: reason.kind,
    value: reason.value,
    threshold: reason.limit,
    message: reason.message,
  });
}

/** The `guardLog` channel, declared by every guard: the thread's guard events, counted per kind, the last 50 kept. */
export const guardLogChannel: ChannelSpec<GuardLog, GuardLogUpdate> = { reduce: reduceGuardLog, empty: emptyGuardLog };
