/**
 * The freshness check of read-only shell commands (issue 43, class 2): a build that writes `build.log`, a training
 * run that appends to `logs/train.log`, change files the agent never wrote, so the guards cannot know from the calls
 * that a re-read is no repeat. The shell classifier knows which files a read-only command reads (resolved against
 * `rules.root`, or absolute): the adapter fingerprints them just before the command runs, keeps the fingerprint with
 * the recorded result (in the `toolGuard` channel, so it persists with the checkpointer), and before a block
 * fingerprints them again (`DecideContext.readsChanged`); a changed file makes the read no repeat. The core never
 * touches the file system: it only asks.
 */
import { createHash } from "node:crypto";
import {
  type BigIntStats,
  closeSync,
  constants,
  fstatSync,
  openSync,
  readdirSync,
  readSync,
  realpathSync,
  statSync,
} from "node:fs";
import { isAbsolute, join } from "node:path";
import { type CallEffect, isShellTool } from "../common/identity/classify.js";
import type { CallFacts } from "./core/call.js";
import type { RecordedResult } from "./core/repetition.js";

/**
 * A recorded result with the fingerprint of the files its call read, taken just before it ran (a read-only shell
 * command whose files are known). Stored as an extra field of the result in the `toolGuard` channel.
 *
 * @example
 * ```ts
 * const previous: FingerprintedResult = state.toolGuard.repetition.window.at(-1)?.result ?? { ok: true, digest: "", preview: "" };
 * if (previous.reads !== undefined) console.log("the files it read, fingerprinted:", previous.reads);
 * ```
 */
export type FingerprintedResult = RecordedResult & {
  /** The fingerprint of the files the call read ({@link readsFingerprint}), when they are known. */
  reads?: string | undefined;
};

/** Files up to this size are fingerprinted by their content too (a same-size rewrite in one timestamp tick). */
const SMALL_FILE_BYTES = 64 * 1024;
/**
 * Kernel and device files, by their real path: fingerprinted by their stat alone. A `/proc` file says size 0 and may
 * never end (`/proc/self/pagemap`) or block its reader (`/proc/kmsg`); opening a device may act (a watchdog).
 */
const KERNEL_FILES = /^\/(?:proc|sys|dev)(?:\/|$)/;
/** A folder of up to this many entries is fingerprinted with each entry's stat (`ls -l` shows sizes and times). */
const FOLDER_ENTRIES = 256;

/**
 * The files a call depends on that something other than the agent may write, when they are known: a shell tool's
 * read-only command whose read paths are all absolute (resolved against `rules.root`, or written so). `undefined`
 * for any other call: another tool, a command that may change things, a read of unknown or relative paths.
 *
 * @example
 * ```ts
 * shellReadPaths("bash", { kind: "read", paths: ["/repo/build.log"] }); // ["/repo/build.log"]
 * shellReadPaths("bash", { kind: "read", paths: ["build.log"] });       // undefined: no root to resolve it against
 * ```
 */
export function shellReadPaths(tool: string, effect: CallEffect): readonly string[] | undefined {
  if (effect.kind !== "read" || effect.paths.length === 0 || !isShellTool(tool)) return undefined;
  return effect.paths.every((path) => isAbsolute(path)) ? effect.paths : undefined;
}

/**
 * A fingerprint of what `paths` hold now: per path its inode, size, modification and status-change times (ns), the
 * content of a regular file up to 64 KiB, and for a folder of up to 256 entries each entry's stat; a path that
 * cannot be read is fingerprinted as such (created later, it has changed). Kernel and device files (`/proc`, `/sys`,
 * `/dev`, by the real path) and whatever is not a regular file or folder: their stat alone. Cheap and never waits:
 * a `stat` per path, at most 64 KiB + 1 read of each.
 *
 * @example
 * ```ts
 * const before = readsFingerprint(["/repo/build.log"]);
 * appendFileSync("/repo/build.log", "[4/9] link\n");
 * readsFingerprint(["/repo/build.log"]) !== before; // true
 * ```
 */
export function readsFingerprint(paths: readonly string[]): string {
  const hash = createHash("sha256");
  for (const path of paths) hash.update(path).update("\0").update(pathStamp(path)).update("\n");
  return hash.digest("base64url").slice(0, 24);
}

/** What one path holds now, as {@link readsFingerprint} takes it. */
function pathStamp(path: string): string {
  let stats: BigIntStats;
  try {
    stats = statSync(path, { bigint: true });
  } catch (error) {
    return `unreadable:${(error as { code?: unknown }).code ?? "?"}`;
  }
  const own = statStamp(stats);
  try {
    if (KERNEL_FILES.test(realpathSync(path))) return own;
    if (stats.isFile() && stats.size <= BigInt(SMALL_FILE_BYTES)) return `${own}:${contentStamp(path, stats)}`;
    if (stats.isDirectory()) return `${own}:${folderStamp(path)}`;
  } catch {
    return `${own}:unreadable`; // removed or locked between the stat and the read: the stat stands
  }
  return own;
}

/**
 * The hash of a small regular file's first 64 KiB + 1 bytes, whatever its size says. Opened without waiting (a path
 * swapped for a FIFO since the stat must not block) and checked to be the file that was stat'ed.
 */
function contentStamp(path: string, stats: BigIntStats): string {
  const fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  try {
    const now = fstatSync(fd, { bigint: true });
    if (!now.isFile() || now.ino !== stats.ino || now.dev !== stats.dev) return "replaced";
    const buffer = Buffer.alloc(SMALL_FILE_BYTES + 1);
    let [length, read] = [0, -1];
    while (read !== 0 && length < buffer.length) {
      read = readSync(fd, buffer, length, buffer.length - length, null);
      length += read;
    }
    return createHash("sha256").update(buffer.subarray(0, length)).digest("base64url");
  } finally {
    closeSync(fd);
  }
}

/** A stat as a stamp: inode, size, modification and status-change times (ns). */
function statStamp(stats: BigIntStats): string {
  return `${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`;
}

/** A folder's entries: their names, and each one's stat when there are few enough. */
function folderStamp(path: string): string {
  const names = readdirSync(path).sort();
  if (names.length > FOLDER_ENTRIES) return `${names.length} entries`;
  return names
    .map((name) => {
      try {
        return `${name}=${statStamp(statSync(join(path, name), { bigint: true }))}`;
      } catch {
        return `${name}=?`;
      }
    })
    .join("/");
}

/**
 * The fingerprint to keep with the result of a call about to run (see {@link readsFingerprint}), when it is a shell
 * read of known files; `undefined` otherwise. Taken before the call runs: a file written while it runs shows as a
 * change the next time (the read runs again), never the other way round.
 *
 * @example
 * ```ts
 * const reads = fingerprintBeforeRun("bash", decision.effect); // then kept with the call's recorded result
 * ```
 */
export function fingerprintBeforeRun(tool: string, effect: CallEffect): string | undefined {
  const paths = shellReadPaths(tool, effect);
  return paths === undefined ? undefined : readsFingerprint(paths);
}

/**
 * Whether the files a shell read reads changed since `previous` was recorded (its fingerprint, taken as it started);
 * `undefined` when it cannot tell (no fingerprint, not a shell read of known files): what the adapters give
 * `DecideContext.readsChanged`.
 *
 * @example
 * ```ts
 * const context: DecideContext = { readsChanged };
 * ```
 */
export function readsChanged(call: CallFacts, previous: RecordedResult): boolean | undefined {
  const recorded = (previous as FingerprintedResult).reads;
  if (typeof recorded !== "string" || !call.shell) return undefined;
  try {
    const paths = shellReadPaths(call.name, call.effect);
    return paths === undefined ? undefined : readsFingerprint(paths) !== recorded;
  } catch {
    return undefined; // a check that fails tells nothing: the rules decide
  }
}
