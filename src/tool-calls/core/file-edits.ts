/** The file-edits rule: each file's writes in the current run (counted when a call is recorded, undone if it fails). */
import { type CallEffect, ownEntry } from "../../common/identity/classify.js";
import type { ResolvedToolGuardOptions } from "./options.js";

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
  /** Among them, the writes that replaced its whole content (see `CallEffect`'s `rewrites`); absent: none. */
  rewrites?: number;
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

type EditOptions = Pick<ResolvedToolGuardOptions, "rules" | "tools">;

/**
 * Whether a call's writes count toward the file-edits rule: it writes known files (not only `rules.root`), the rule is
 * on, and its tool is not exempt (`tools.<name>.fileEdits: false`).
 */
export function countsEdits(tool: string, effect: CallEffect, options: EditOptions): boolean {
  return (
    effect.kind === "write" &&
    effect.paths.length > 0 &&
    // A change of the whole working folder (`git checkout`, a bisect step) writes no one file too often.
    effect.paths.some((p) => p !== options.rules.root) &&
    options.rules.fileEdits !== false &&
    ownEntry(options.tools, tool)?.fileEdits !== false
  );
}

/**
 * The counts after a call that writes `paths` (replacing the whole content of `rewrites`, a subset) was recorded
 * (`delta` 1: each file once, moved to the most recent end, the oldest dropped beyond {@link FILE_EDITS_LIMIT}) or
 * failed (`delta` -1: taken back; a file at 0 is dropped).
 */
export function noteWrites(
  counts: readonly FileEditCount[] | undefined,
  paths: readonly string[],
  delta: 1 | -1,
  rewrites: readonly string[] = [],
): FileEditCount[] {
  const next = counts === undefined ? [] : counts.slice();
  for (const path of new Set(paths)) {
    const at = next.findIndex((c) => c.path === path);
    const before: FileEditCount | undefined = at < 0 ? undefined : next[at];
    if (delta < 0 && before === undefined) continue;
    const count: FileEditCount = { path, writes: (before?.writes ?? 0) + delta };
    const whole = (before?.rewrites ?? 0) + (rewrites.includes(path) ? delta : 0);
    if (whole > 0) count.rewrites = whole;
    if (delta < 0) {
      if (count.writes <= 0) next.splice(at, 1);
      else next[at] = count;
      continue;
    }
    if (at >= 0) next.splice(at, 1);
    next.push(count);
  }
  return next.length > FILE_EDITS_LIMIT ? next.slice(next.length - FILE_EDITS_LIMIT) : next;
}

/**
 * What the file-edits rule finds for one file a call would write: its write of the file (`writes`, this call
 * included), its whole-file rewrite of it when the call replaces the content (`rewrites`, this call included), and
 * whether the call is blocked, by the count of writes (`blockAt`) or of rewrites (`blockRewritesAt`).
 *
 * @example
 * ```ts
 * const found: FileEditsFinding = { path: "a.py", writes: 12, rewrites: 12, blockedBy: "rewrites" };
 * ```
 */
export interface FileEditsFinding {
  /** The file. */
  path: string;
  /** This call's write of it in the run (this call included). */
  writes: number;
  /** This call's rewrite of its whole content in the run (this call included); absent when the call edits it. */
  rewrites?: number | undefined;
  /** Why the call is blocked: its count of writes or of whole-file rewrites reached its limit; absent: it runs. */
  blockedBy?: "writes" | "rewrites" | undefined;
}

/**
 * The rule's finding before a call that writes files runs: the counts with it of the file nearest to a block (a
 * blocked one first, then the one written most often), once they reach `remindAt` or a block; else `undefined`.
 */
export function fileEditsOf(
  counts: readonly FileEditCount[] | undefined,
  tool: string,
  effect: CallEffect,
  options: EditOptions,
): FileEditsFinding | undefined {
  const limits = options.rules.fileEdits;
  if (limits === false || counts === undefined || counts.length === 0 || !countsEdits(tool, effect, options)) {
    return undefined;
  }
  const { paths, rewrites = [] } = effect as { paths: string[]; rewrites?: string[] };
  let found: FileEditsFinding | undefined;
  for (const c of counts) {
    if (!paths.includes(c.path)) continue;
    const whole = rewrites.includes(c.path) ? (c.rewrites ?? 0) + 1 : undefined;
    const writes = c.writes + 1;
    const blockedBy =
      writes >= limits.blockAt
        ? "writes"
        : whole !== undefined && limits.blockRewritesAt !== false && whole >= limits.blockRewritesAt
          ? "rewrites"
          : undefined;
    const finding: FileEditsFinding = { path: c.path, writes, rewrites: whole, blockedBy };
    if (found === undefined || (blockedBy !== undefined && found.blockedBy === undefined)) found = finding;
    else if (found.blockedBy === undefined && blockedBy === undefined && writes > found.writes) found = finding;
  }
  if (found === undefined) return undefined;
  const from = limits.remindAt === false ? limits.blockAt : limits.remindAt;
  return found.blockedBy !== undefined || found.writes >= from ? found : undefined;
}
