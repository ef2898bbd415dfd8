import type { z } from "zod/v4";
import type { CallEffect, ClassifyOptions } from "../../common/identity/classify.js";
import { classifyCall, isSameOrAncestor } from "../../common/identity/classify.js";
import { digest, type SignatureOptions, toolCallSignature } from "../../common/identity/signature.js";
import { ListIndexes } from "../../common/list-index.js";
import { parseOptions } from "../../common/options.js";
import { cutEnd } from "../../common/texts/format.js";
import type { BlockRule } from "../../common/vocabulary.js";
import { repetitionRulesSchema } from "./options.js";
import { blockMessage, type MessageTemplate } from "./rules.js";

/**
 * The outcome of a call that ran: whether it succeeded, a digest of its result, and the start of its text.
 *
 * @example
 * ```ts
 * const last: RecordedResult | undefined = state.toolGuard.repetition.window.at(-1)?.result;
 * ```
 */
export interface RecordedResult {
  /** Whether the call succeeded. */
  ok: boolean;
  /**
   * Digest of `ok` + the full result text as the rules compare it (after `rules.normalizeResult`, which drops
   * volatile parts such as timestamps and request ids): equal digests mean the call produced nothing new.
   */
  digest: string;
  /**
   * Digest of `ok` + the exact result text, when the normalizer changed the text (else `digest` is it): what result
   * dedupe compares, since the model is never told "unchanged" about a result that differs.
   */
  exact?: string | undefined;
  /** The result text, cut to the feedback limit (shown to the model when an identical call is blocked). */
  preview: string;
  /** A shell read's files' fingerprint, taken before it ran (see {@link CallOutcome.reads}). */
  reads?: string | undefined;
}

/** The digest of a call's outcome (success and full text): equal digests mean the call produced nothing new. */
export function resultDigest(ok: boolean, text: string): string {
  return digest(`${ok}\n${text}`);
}

const CLASS_PREVIEW_CHARS = 1000;

/** How the class APIs record an outcome: its digest, and the start of its text (never half a surrogate pair). */
export function outcomeRecord(ok: boolean, text: string): RecordedResult {
  return { ok, digest: resultDigest(ok, text), preview: text.slice(0, cutEnd(text, CLASS_PREVIEW_CHARS)) };
}

/**
 * One recorded (allowed) call in the sliding window.
 *
 * @example
 * ```ts
 * const tools = state.toolGuard.repetition.window.map((r: CallRecord) => r.tool);
 * ```
 */
export interface CallRecord {
  /** Position in the thread's sequence of recorded calls. */
  seq: number;
  /** Digest of the call's signature. */
  key: string;
  /** The tool's name. */
  tool: string;
  /** The mutation epoch when the call was made (see {@link RepetitionState.epoch}). */
  epoch: number;
  /** The call's outcome, once it ran (absent while it runs, or when the caller records none). */
  result?: RecordedResult | undefined;
}

/**
 * Plain, serialisable state of the consecutive and threshold rules: the last `windowSize` allowed calls. An index by
 * call key is derived from the window and kept beside it (never stored), so a decision costs the same at any size.
 *
 * @example
 * ```ts
 * const levels12: RepetitionState = state.toolGuard.repetition;
 * ```
 */
export interface RepetitionState {
  /** The sequence number the next recorded call gets. */
  nextSeq: number;
  /** Bumped by every successful call that may have changed the world (a write, a command, an unknown tool). */
  epoch: number;
  /** Recorded calls, oldest first. */
  window: CallRecord[];
  /**
   * The changes (epoch bumps) since the oldest call of the window, newest first: which tool changed the world, and
   * which files, when it said (the threshold rule's `countAcrossMutations: "same-tool"` counts an earlier identical
   * call only when no other tool has changed, since it, something the call depends on).
   */
  changes?: Change[] | undefined;
}

/**
 * A change of the world (an epoch bump), as {@link RepetitionState.changes} keeps it.
 *
 * @example
 * ```ts
 * const change: Change = { tool: "write_file", epoch: 3, paths: ["/repo/a.py"] };
 * ```
 */
export interface Change {
  /** The tool that made the change. */
  tool: string;
  /** The epoch the change bumped the state to. */
  epoch: number;
  /** The files or folders it changed, when known (a write of known paths); absent: it may have changed anything. */
  paths?: string[] | undefined;
  /**
   * The key of the call that made it, for a change of known files: another call of the same tool that wrote files
   * (a `sed -i` edit between two runs of the same test through one shell tool) is a change to that tool's other
   * calls; a call's own repeats do not restart its count.
   */
  key?: string | undefined;
}

/**
 * Notes a change (an epoch bump) made by `tool` (of `paths`, when known), newest first, keeping the changes that
 * came after the oldest call of `window` (an earlier one is no change since any call the window holds).
 */
export function noteChange(
  changes: readonly Change[] | undefined,
  tool: string,
  epoch: number,
  paths: readonly string[] | undefined,
  window: readonly CallRecord[],
  key?: string,
): Change[] {
  const change: Change = paths === undefined ? { tool, epoch } : { tool, epoch, paths: [...paths] };
  if (paths !== undefined && key !== undefined) change.key = key;
  const since = window[0]?.epoch ?? epoch;
  const next = [change];
  const older: Change[] = [];
  for (const earlier of changes ?? []) {
    if (earlier.epoch <= since) break; // newest first: the rest came before the window's oldest call
    if (next.length < CHANGES_KEPT) next.push(earlier);
    else older.push(earlier);
  }
  if (older.length > 0) {
    // Past the bound, older changes merge into one that may have changed anything, by their tool if all were one's
    // (repeated rewrites still add up), else by none: a repeat from before it counts only where it would anyway.
    const tool = (older[0] as Change).tool;
    const oneTool = older.every((c) => c.tool === tool);
    next.push({ tool: oneTool ? tool : "\u0000older", epoch: (older[0] as Change).epoch });
  }
  return next;
}

/** Changes kept with their tool and files (older ones are merged into one that may have changed anything). */
const CHANGES_KEPT = 32;

/**
 * The epoch of the newest change by another tool to something a call with `effect` depends on (-1: none). A change of
 * known files matters to a read or write of known files only where the paths meet (same, or a folder above).
 */
function latestForeignChange(
  state: RepetitionState,
  record: Pick<CallRecord, "tool" | "key">,
  effect: CallEffect | undefined,
): number {
  const own = effect !== undefined && effect.kind !== "mutate" && effect.kind !== "none" ? effect.paths : undefined;
  for (const change of state.changes ?? []) {
    // The same tool's changes count only as writes of known files by another call, before a call that is no write
    // itself (an edit before a test re-run through one shell); rewriting a file again and again still adds up.
    const sameTool = change.tool === record.tool;
    if (sameTool && (change.key === undefined || change.key === record.key || effect?.kind === "write")) continue;
    if (change.paths === undefined || own === undefined || own.length === 0) return change.epoch;
    const meets = change.paths.some((c) => own.some((p) => isSameOrAncestor(c, p) || isSameOrAncestor(p, c)));
    if (meets) return change.epoch;
  }
  return -1;
}

/** Derived index of a window: sequence numbers per call key, oldest first (carried by {@link recordCall}). */
const windowIndexes = new ListIndexes<CallRecord, Map<string, number[]>>((window) => {
  const index = new Map<string, number[]>();
  for (const record of window) {
    const seqs = index.get(record.key);
    if (seqs) seqs.push(record.seq);
    else index.set(record.key, [record.seq]);
  }
  return index;
});

/** Windows up to this size are scanned (cheaper than an index for a few records); larger ones keep the index. */
const SCANNED_WINDOW = 32;

/** Takes the index of `window` away from it (a scanned window never gets one: nothing to look up). */
function takeIndex(window: readonly CallRecord[]): Map<string, number[]> | undefined {
  return window.length <= SCANNED_WINDOW ? undefined : windowIndexes.take(window);
}

function recordsWithKey(window: readonly CallRecord[], key: string): CallRecord[] {
  const records: CallRecord[] = [];
  if (window.length <= SCANNED_WINDOW) {
    for (const record of window) if (record.key === key) records.push(record);
    return records;
  }
  for (const seq of windowIndexes.of(window).get(key) ?? []) {
    const at = positionOf(window, seq);
    if (at >= 0) records.push(window[at] as CallRecord);
  }
  return records;
}

/** How many calls with key `key` the window holds, whatever they answered (indexed in a large window). */
export function countInWindow(window: readonly CallRecord[], key: string): number {
  return recordsWithKey(window, key).length;
}

/**
 * Counting rules of the consecutive and threshold rules (each field below).
 *
 * @example
 * ```ts
 * const { rules } = new ToolRepetitionDetector({ countAcrossMutations: false }); // rules: RepetitionRules
 * ```
 *
 * @interface
 */
export type RepetitionRules = z.output<typeof repetitionRulesSchema>;

/** The repetition verdict for one call. */
interface RepetitionCheck {
  rule?: "consecutive" | "threshold" | undefined;
  /** How many identical calls the window would hold with this one (countable ones only). */
  count: number;
  /** The recorded call whose result is shown to the model when this one is blocked. */
  previous?: CallRecord | undefined;
  /** The last two identical calls with a known result returned the same result: repeating it is stuck. */
  repeatsResult?: boolean | undefined;
}

/** An empty repetition state. */
export function emptyRepetitionState(): RepetitionState {
  return { nextSeq: 0, epoch: 0, window: [] };
}

/** Position of the record with sequence `seq` in the window (sorted by sequence), or -1. O(1) without gaps. */
function positionOf(window: readonly CallRecord[], seq: number): number {
  const first = window[0];
  if (first === undefined || seq < first.seq) return -1;
  const direct = seq - first.seq;
  if (window[direct]?.seq === seq) return direct;
  // Sequence numbers can have gaps (records from parallel branches): search back from the newest.
  for (let i = Math.min(direct, window.length - 1); i >= 0; i -= 1) {
    const at = (window[i] as CallRecord).seq;
    if (at === seq) return i;
    if (at < seq) return -1;
  }
  return -1;
}

/** Levels 1 and 2 (consecutive, threshold) for a call with key `key`, without recording anything. */
export function evaluateRepetition(
  state: RepetitionState,
  key: string,
  rules: Readonly<RepetitionRules>,
  effect?: CallEffect,
): RepetitionCheck {
  const records = recordsWithKey(state.window, key);
  const latest = records[records.length - 1];
  // The two newest results of identical calls: the count compares against the newest, a repeat of it is stuck.
  let latestResult: RecordedResult | undefined;
  let earlierResult: RecordedResult | undefined;
  for (let i = records.length - 1; i >= 0 && earlierResult === undefined; i -= 1) {
    const result = (records[i] as CallRecord).result;
    if (result === undefined) continue;
    if (latestResult === undefined) latestResult = result;
    else earlierResult = result;
  }
  let countable = 0;
  let previousCountable: CallRecord | undefined;
  for (const r of records) {
    const sameWorld =
      rules.countAcrossMutations === true ||
      r.epoch === state.epoch ||
      (rules.countAcrossMutations === "same-tool" && latestForeignChange(state, r, effect) <= r.epoch);
    const sameResult =
      rules.countChangedResults || !r.result || !latestResult || r.result.digest === latestResult.digest;
    if (!sameWorld || !sameResult) continue;
    countable += 1;
    if (r.result) previousCountable = r;
  }
  const count = countable + 1;
  const repeatsResult = earlierResult !== undefined && latestResult?.digest === earlierResult.digest;
  const last = state.window[state.window.length - 1];
  if (rules.consecutive && last !== undefined && last.key === key) {
    return { rule: "consecutive", count, previous: last, repeatsResult };
  }
  if (countable >= rules.repetitionThreshold) {
    return { rule: "threshold", count, previous: previousCountable ?? latest, repeatsResult };
  }
  return { count, previous: latest, repeatsResult };
}

/** A call to record (an allowed call). */
interface NewCall {
  key: string;
  tool: string;
  /** Defaults to `state.nextSeq`. */
  seq?: number | undefined;
}

/** Records an allowed call in a new state; the window keeps the newest `windowSize` records. */
export function recordCall(
  state: RepetitionState,
  call: NewCall,
  windowSize: number,
  opts: { carryIndex?: boolean } = {},
): RepetitionState {
  const seq = call.seq ?? state.nextSeq;
  const record: CallRecord = { seq, key: call.key, tool: call.tool, epoch: state.epoch };
  const size = Math.max(1, windowSize);
  const last = state.window[state.window.length - 1];
  const nextSeq = Math.max(state.nextSeq, seq + 1);
  if (last !== undefined && last.seq >= seq) {
    // Out-of-order arrival (parallel branches): keep the window sorted; the index is rebuilt when next needed.
    const sorted = [...state.window.filter((r) => r.seq !== seq), record].sort((a, b) => a.seq - b.seq);
    return { ...state, nextSeq, window: sorted.slice(Math.max(0, sorted.length - size)) };
  }
  const evict = Math.max(0, state.window.length + 1 - size);
  const window = state.window.slice(evict);
  window.push(record);
  const index = opts.carryIndex === false ? undefined : takeIndex(state.window);
  if (index !== undefined) {
    for (let i = 0; i < evict; i += 1) {
      const evicted = state.window[i] as CallRecord;
      const seqs = index.get(evicted.key);
      // The evicted record is the oldest of its key, so it is first in its list.
      if (seqs?.[0] === evicted.seq) seqs.shift();
      if (seqs?.length === 0) index.delete(evicted.key);
    }
    const seqs = index.get(call.key);
    if (seqs === undefined) index.set(call.key, [seq]);
    else seqs.push(seq);
    windowIndexes.give(window, index);
  }
  // The changes stay: a call recorded after another tool's change must not forget it.
  return { ...state, nextSeq, window };
}

/**
 * Attaches the outcome of a recorded call. A successful mutating call starts a new epoch (see
 * {@link RepetitionRules.countAcrossMutations}). A record already evicted is simply not updated.
 */
export function recordResult(
  state: RepetitionState,
  seq: number,
  result: RecordedResult,
  mutates: boolean,
  opts: { carryIndex?: boolean; paths?: readonly string[] | undefined } = {},
): RepetitionState {
  const at = positionOf(state.window, seq);
  let window = state.window;
  if (at >= 0) {
    window = state.window.slice();
    const { seq: own, key, tool, epoch } = window[at] as CallRecord;
    window[at] = { seq: own, key, tool, epoch, result };
    // Same keys and sequence numbers: the derived index moves to the new window as it is.
    const index = opts.carryIndex === false ? undefined : takeIndex(state.window);
    if (index !== undefined) windowIndexes.give(window, index);
  }
  if (!(mutates && result.ok)) return { ...state, window };
  const tool = at >= 0 ? (window[at] as CallRecord).tool : "\u0000evicted";
  const key = at >= 0 ? (window[at] as CallRecord).key : undefined;
  const epoch = state.epoch + 1;
  return { ...state, epoch, window, changes: noteChange(state.changes, tool, epoch, opts.paths, window, key) };
}

/**
 * Options of {@link ToolRepetitionDetector}.
 *
 * @example
 * ```ts
 * new ToolRepetitionDetector({ repetitionThreshold: 5, windowSize: 20, ignoreArgs: ["requestId"] });
 * ```
 */
export interface ToolRepetitionDetectorOptions extends Partial<RepetitionRules>, SignatureOptions {
  /** How tools are classified (only needed with `countAcrossMutations: false`). */
  classify?: ClassifyOptions;
  /** Replacements for the consecutive and threshold messages. */
  messages?: Partial<Record<BlockRule, MessageTemplate>>;
}

/**
 * The result of {@link ToolRepetitionDetector.evaluate}.
 *
 * @example
 * ```ts
 * const { allowed, level, message }: RepetitionEvaluation = detector.evaluate("ls", {});
 * ```
 */
export interface RepetitionEvaluation {
  /** Whether the call may run (it was recorded); `false`: it is blocked (not recorded). */
  allowed: boolean;
  /** The rule that blocked the call. */
  level?: "consecutive" | "threshold" | undefined;
  /** Identical calls the window would hold with this one. */
  count: number;
  /** The block message (the default wording unless replaced). */
  message?: string | undefined;
}

/**
 * The consecutive and threshold rules as a class, over the same pure functions the graph nodes use.
 * The consecutive rule blocks a call identical to the previous recorded call; the threshold rule blocks a call when the window already
 * holds `repetitionThreshold` identical calls (the 4th with the default). A blocked call is not recorded, so
 * {@link ToolRepetitionDetector.isConsecutiveDuplicate} after a failed {@link ToolRepetitionDetector.check}
 * tells which level blocked it.
 *
 * @example
 * ```ts
 * const detector = new ToolRepetitionDetector({ repetitionThreshold: 3 });
 * detector.check("read_file", { path: "config.py" }); // true
 * detector.check("read_file", { path: "config.py" }); // false
 * detector.isConsecutiveDuplicate("read_file", { path: "config.py" }); // true: the consecutive rule
 * ```
 */
export class ToolRepetitionDetector {
  /** The counting rules, with the defaults filled in. */
  readonly rules: Readonly<RepetitionRules>;
  private readonly options: ToolRepetitionDetectorOptions;
  private state: RepetitionState;

  constructor(options: ToolRepetitionDetectorOptions = {}, state: RepetitionState = emptyRepetitionState()) {
    const picked = Object.fromEntries(
      Object.keys(repetitionRulesSchema.shape).map((k) => [k, options[k as keyof RepetitionRules]]),
    );
    this.rules = parseOptions(repetitionRulesSchema, picked, "ToolRepetitionDetector");
    this.options = options;
    this.state = state;
  }

  private key(toolName: string, input: unknown): string {
    return digest(toolCallSignature(toolName, input, { ignoreArgs: this.options.ignoreArgs }));
  }

  /**
   * Decides a call; an allowed call is recorded. Returns the level and the message when blocked.
   *
   * @example
   * ```ts
   * new ToolRepetitionDetector().evaluate("ls", {}); // { allowed: true, count: 1 }
   * ```
   */
  evaluate(toolName: string, input: unknown): RepetitionEvaluation {
    const key = this.key(toolName, input);
    const verdict = evaluateRepetition(this.state, key, this.rules);
    if (verdict.rule) {
      const message = blockMessage(
        { tool: toolName, args: input, count: verdict.count, rule: verdict.rule },
        this.options.messages,
      );
      return { allowed: false, level: verdict.rule, count: verdict.count, message };
    }
    this.state = recordCall(this.state, { key, tool: toolName }, this.rules.windowSize);
    return { allowed: true, count: verdict.count };
  }

  /**
   * `true` if the call is allowed (and then recorded), `false` if the consecutive or threshold rule blocks it.
   *
   * @example
   * ```ts
   * const d = new ToolRepetitionDetector();
   * d.check("ls", {}); // true
   * ```
   */
  check(toolName: string, input: unknown): boolean {
    return this.evaluate(toolName, input).allowed;
  }

  /**
   * Whether the call is identical to the last recorded call (a pure query).
   *
   * @example
   * ```ts
   * new ToolRepetitionDetector().isConsecutiveDuplicate("ls", {}); // false
   * ```
   */
  isConsecutiveDuplicate(toolName: string, input: unknown): boolean {
    const last = this.state.window[this.state.window.length - 1];
    return last !== undefined && last.key === this.key(toolName, input);
  }

  /**
   * Attaches the outcome of the most recent recorded call with these inputs (used by the result-aware counting
   * rules and shown to the model when an identical call is blocked).
   *
   * @example
   * ```ts
   * const d = new ToolRepetitionDetector();
   * d.check("ls", {});
   * d.recordResult("ls", {}, { success: true, result: "a.py" });
   * ```
   */
  recordResult(toolName: string, input: unknown, outcome: { success: boolean; result?: string }): void {
    const key = this.key(toolName, input);
    const records = recordsWithKey(this.state.window, key);
    const seq = records[records.length - 1]?.seq;
    if (seq === undefined) return;
    const text = outcome.result ?? "";
    const mutates = this.options.classify
      ? !["read", "none"].includes(classifyCall(toolName, input, this.options.classify).kind)
      : false;
    this.state = recordResult(this.state, seq, outcomeRecord(outcome.success, text), mutates);
  }

  /**
   * Forgets every recorded call.
   *
   * @example
   * ```ts
   * detector.reset();
   * ```
   */
  reset(): void {
    this.state = emptyRepetitionState();
  }

  /**
   * The detector's state as plain JSON (what a checkpoint stores).
   *
   * @example
   * ```ts
   * const copy = ToolRepetitionDetector.fromJSON(detector.toJSON());
   * ```
   */
  toJSON(): {
    /** The options the detector was built with, without `messages` (builders are not JSON). */
    options: ToolRepetitionDetectorOptions;
    /** The detector's state. */
    state: RepetitionState;
  } {
    const { messages: _messages, ...options } = this.options;
    return { options, state: structuredClone(this.state) };
  }

  /**
   * Rebuilds a detector from {@link ToolRepetitionDetector.toJSON} output.
   *
   * @example
   * ```ts
   * const copy = ToolRepetitionDetector.fromJSON(JSON.parse(JSON.stringify(detector)));
   * ```
   */
  static fromJSON(json: { options?: ToolRepetitionDetectorOptions; state: RepetitionState }): ToolRepetitionDetector {
    return new ToolRepetitionDetector(json.options ?? {}, structuredClone(json.state));
  }
}
