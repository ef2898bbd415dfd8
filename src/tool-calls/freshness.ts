/** Fingerprints of read-only shell commands' files: files the agent never wrote (a build's log) change too. */
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

/** Files up to this size are fingerprinted by their content too (a same-size rewrite in one timestamp tick). */
const SMALL_FILE_BYTES = 64 * 1024;
/** Stat only: a `/proc` file may never end or may block (`/proc/kmsg`); opening a device may act (a watchdog). */
const KERNEL_FILES = /^\/(?:proc|sys|dev)(?:\/|$)/;
/** A folder of up to this many entries is fingerprinted with each entry's stat (`ls -l` shows sizes and times). */
const FOLDER_ENTRIES = 256;

/** A shell read's files, when known and all absolute. */
export function shellReadPaths(tool: string, effect: CallEffect): readonly string[] | undefined {
  if (effect.kind !== "read" || effect.paths.length === 0 || !isShellTool(tool)) return undefined;
  return effect.paths.every((path) => isAbsolute(path)) ? effect.paths : undefined;
}

/** A fingerprint of what `paths` hold now (stats, small files' content, small folders' entries); never waits. */
export function readsFingerprint(paths: readonly string[]): string {
  const hash = createHash("sha256");
  for (const path of paths) hash.update(path).update("\0").update(pathStamp(path)).update("\n");
  return hash.digest("base64url").slice(0, 24);
}

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

/** Hashes up to 64 KiB + 1 bytes whatever the stat says; non-blocking and re-checked, in case of a swapped-in FIFO. */
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

function statStamp(stats: BigIntStats): string {
  return `${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`;
}

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

/** Taken before the run, so a file written while it runs shows as a change next time, never the reverse. */
export function fingerprintBeforeRun(tool: string, effect: CallEffect): string | undefined {
  const paths = shellReadPaths(tool, effect);
  return paths === undefined ? undefined : readsFingerprint(paths);
}

/**
 * Whether the files a shell read reads changed since `previous` was recorded; `undefined` when it cannot tell (the
 * adapters' `DecideContext.readsChanged`).
 */
export function readsChanged(call: CallFacts, previous: RecordedResult): boolean | undefined {
  const recorded = previous.reads;
  if (typeof recorded !== "string" || !call.shell) return undefined;
  try {
    const paths = shellReadPaths(call.name, call.effect);
    return paths === undefined ? undefined : readsFingerprint(paths) !== recorded;
  } catch {
    return undefined; // a check that fails tells nothing: the rules decide
  }
}
