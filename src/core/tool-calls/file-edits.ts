/**
 * The file-edits rule: how often each file was written in the current run. A call counts once for each file its
 * effect writes (a write tool with path arguments, a shell command the path-aware classifier understands); it is
 * counted when it is recorded (so a later call of the same response sees it) and taken back when it fails. From
 * `remindAt` writes on, the call's answer carries a reminder; the `blockAt`-th write is blocked.
 */
import { type CallEffect, ownEntry } from "../identity/classify.js";
import type { ResolvedToolGuardOptions } from "../options.js";

/**
 * How many times one file was written in the current run (calls that ran; blocked and failed ones do not count).
 *
 * @example
 * ```ts
 * const mostRecent: FileEditCount | undefined = state.toolGuard.fileEdits?.at(-1); // { path: "/repo/a.py", writes: 3 }
 * ```
 */
export interface FileEditCount {
  /** The file, as the guards know its path (resolved against `rules.root` when set). */
  path: string;
  /** Its writes in the current run. */
  writes: number;
}

/**
 * Files whose writes are counted in one run (the most recently written ones; an older file's count is forgotten).
 *
 * @example
 * ```ts
 * (state.toolGuard.fileEdits ?? []).length <= FILE_EDITS_LIMIT; // true
 * ```
 */
export const FILE_EDITS_LIMIT = 50;

/** The options the rule reads. */
type EditOptions = Pick<ResolvedToolGuardOptions, "rules" | "tools">;

/**
 * Whether a call's writes count toward the file-edits rule: it writes known files, the rule is on, and its tool is
 * not exempted from it (`tools.<name>.fileEdits: false`).
 *
 * @example
 * ```ts
 * countsEdits("write_file", { kind: "write", paths: ["a.py"] }, resolveToolGuardOptions()); // true
 * countsEdits("bash", { kind: "mutate" }, resolveToolGuardOptions()); // false: the files it writes are not known
 * ```
 */
export function countsEdits(tool: string, effect: CallEffect, options: EditOptions): boolean {
  return (
    effect.kind === "write" &&
    effect.paths.length > 0 &&
    options.rules.fileEdits !== false &&
    ownEntry(options.tools, tool)?.fileEdits !== false
  );
}

/**
 * The counts after a call that writes `paths` was recorded (`delta` 1: each file once, moved to the most recent
 * end, the oldest dropped beyond {@link FILE_EDITS_LIMIT}) or failed (`delta` -1: taken back; a file at 0 is
 * dropped).
 *
 * @example
 * ```ts
 * noteWrites(undefined, ["a.py", "b.py", "a.py"], 1); // [{ path: "a.py", writes: 1 }, { path: "b.py", writes: 1 }]
 * ```
 */
export function noteWrites(
  counts: readonly FileEditCount[] | undefined,
  paths: readonly string[],
  delta: 1 | -1,
): FileEditCount[] {
  const next = counts === undefined ? [] : counts.slice();
  for (const path of new Set(paths)) {
    const at = next.findIndex((c) => c.path === path);
    const writes = (at < 0 ? 0 : (next[at] as FileEditCount).writes) + delta;
    if (delta < 0) {
      if (at < 0) continue;
      if (writes <= 0) next.splice(at, 1);
      else next[at] = { path, writes };
      continue;
    }
    if (at >= 0) next.splice(at, 1);
    next.push({ path, writes });
  }
  return next.length > FILE_EDITS_LIMIT ? next.slice(next.length - FILE_EDITS_LIMIT) : next;
}

/**
 * What the rule has to say about a call that writes files, before it runs: the file it would have written most
 * often in this run and this call's write of it (`writes`, this call included), when that reaches `remindAt` or
 * `blockAt`; `undefined` otherwise (not a counted write, or too few writes to say anything).
 *
 * @example
 * ```ts
 * fileEditsOf(state.fileEdits, "write_file", effect, options); // { path: "a.py", writes: 8 } at the 8th write
 * ```
 */
export function fileEditsOf(
  counts: readonly FileEditCount[] | undefined,
  tool: string,
  effect: CallEffect,
  options: EditOptions,
): { path: string; writes: number } | undefined {
  const limits = options.rules.fileEdits;
  if (limits === false || counts === undefined || counts.length === 0 || !countsEdits(tool, effect, options)) {
    return undefined;
  }
  const paths = (effect as { paths: string[] }).paths;
  let most: FileEditCount | undefined;
  for (const c of counts) if (paths.includes(c.path) && c.writes > (most?.writes ?? 0)) most = c;
  if (most === undefined) return undefined;
  const writes = most.writes + 1;
  const from = limits.remindAt === false ? limits.blockAt : limits.remindAt;
  return writes >= from ? { path: most.path, writes } : undefined;
}

/**
 * Whether two of a response's calls write one file that the rule counts (then the second one's count depends on
 * the first, and the response is decided call by call).
 *
 * @example
 * ```ts
 * writeSameFile(planToolCalls(state, calls, options).decisions, options); // true: two writes of a.py
 * ```
 */
export function writeSameFile(
  calls: readonly { call: { name: string }; effect: CallEffect }[],
  options: EditOptions,
): boolean {
  if (calls.length < 2 || options.rules.fileEdits === false) return false;
  const seen = new Set<string>();
  for (const { call, effect } of calls) {
    if (!countsEdits(call.name, effect, options)) continue;
    for (const path of new Set((effect as { paths: string[] }).paths)) {
      if (seen.has(path)) return true;
      seen.add(path);
    }
  }
  return false;
}
