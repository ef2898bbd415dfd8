/**
 * How the file tools touch file contents: only regular files, opened non-blocking and checked with `fstat` before a
 * byte is read, under a size cap and a timeout, and (Linux, `/proc/self/fd`) only when the opened file is in the root.
 */
import type { Dirent } from "node:fs";
import { closeSync, constants, fstatSync, lstatSync, openSync, readlinkSync, readSync, type Stats } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { echo } from "./echo.js";
import { errorCode, isInside } from "./sandbox.js";

// Not on Windows.
const NONBLOCK = constants.O_NONBLOCK ?? 0;
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;

type FileKind = "file" | "folder" | "symlink" | "fifo" | "socket" | "character device" | "block device" | "other";

/** The kind of a `Stats` or `Dirent`. */
export function kindOf(s: Stats | Dirent): FileKind {
  if (s.isFile()) return "file";
  if (s.isDirectory()) return "folder";
  if (s.isSymbolicLink()) return "symlink";
  if (s.isFIFO()) return "fifo";
  if (s.isSocket()) return "socket";
  if (s.isCharacterDevice()) return "character device";
  if (s.isBlockDevice()) return "block device";
  return "other";
}

/** The marker a listing puts after the name of an entry that is neither a file, a folder nor a symlink. */
export function specialMarker(kind: FileKind): string {
  return kind === "file" || kind === "folder" || kind === "symlink" ? "" : ` [${kind}]`;
}

/** Why a file could not be read or written. */
export type IoProblem =
  | { kind: "missing" }
  | { kind: "folder" }
  | { kind: "special"; what: FileKind }
  | { kind: "too-large"; size: number; limit: number }
  | { kind: "hard-link"; links: number }
  | { kind: "outside" }
  | { kind: "swapped" }
  | { kind: "timeout"; ms: number }
  | { kind: "changed"; removed?: boolean }
  | { kind: "denied" }
  | { kind: "root-gone" }
  | { kind: "error"; code: string };

/** What every tool answers once the project root is gone (removed, moved, or no longer a folder). */
export const ROOT_GONE = "The project root no longer exists (it was removed or moved); nothing can be done in it.";

/** Whether the project root (its real path) is gone: missing, or no longer a real folder. */
export function rootGone(root: string): boolean {
  try {
    return !lstatSync(root).isDirectory();
  } catch {
    return true;
  }
}

/** The message for the model about a problem with the file shown as `shown` (capped here). */
export function problemMessage(shown: string, problem: IoProblem, action: "read" | "written" | "changed"): string {
  const name = echo(shown);
  const verb = { read: "read", written: "write", changed: "change" }[action];
  switch (problem.kind) {
    case "missing":
      return `File not found: ${name}`;
    case "folder":
      return action === "read"
        ? `${name} is a folder: use list_files to see its entries.`
        : `${name} is a folder, not a file.`;
    case "special":
      return `${name} is a ${problem.what}, not a regular file: only regular files can be ${action}.`;
    case "too-large":
      return `${name} is too large to ${verb} (${problem.size} bytes; the limit is ${problem.limit}).`;
    case "hard-link":
      return `${name} has ${problem.links} hard links (refuseHardLinks is on): a write through one of them would change a file that may be outside the project root. Nothing was changed.`;
    case "outside":
      return `${name} changed while it was being opened and is no longer inside the project root; nothing was ${action}.`;
    case "swapped":
      return `A folder on the path of ${name} was moved, removed or replaced by a symbolic link while it was being opened; nothing was ${action}.`;
    case "timeout":
      return action === "written"
        ? `Writing ${name} did not finish within ${problem.ms} ms. Nothing was changed.`
        : `Reading ${name} did not finish within ${problem.ms} ms.`;
    case "changed":
      return `${name} was ${problem.removed ? "removed" : "changed"} on disk while it was being written (by another program). Nothing was changed: read it again.`;
    case "denied":
      return action === "read"
        ? `${name} is not readable (permission denied).`
        : `${name} cannot be ${action === "written" ? "written" : "changed"} (permission denied: the file or its folder is not writable). Nothing was changed.`;
    case "root-gone":
      return ROOT_GONE;
    case "error": {
      const why = problem.code === "ENOTDIR" ? "ENOTDIR: a part of its path is a file, not a folder" : problem.code;
      return action === "written"
        ? `Cannot write ${name} (${why}). Nothing was changed.`
        : `Cannot ${verb} ${name} (${why}).`;
    }
  }
}

function problemOf(error: unknown): IoProblem {
  const code = errorCode(error) ?? (error as Error)?.message ?? "unknown error";
  if (code === "ENOENT") return { kind: "missing" };
  if (code === "EISDIR") return { kind: "folder" };
  if (code === "ENXIO") return { kind: "special", what: "fifo" }; // a FIFO without a reader, opened for writing
  if (code === "EACCES" || code === "EPERM") return { kind: "denied" };
  return { kind: "error", code };
}

/** Thrown by {@link withTimeout} when an operation takes longer than its timeout. */
export class IoTimeout extends Error {
  constructor(readonly ms: number) {
    super(`timed out after ${ms} ms`);
  }
}

/** `work`'s result, or an `IoTimeout` rejection after `ms` (the work is not cancelled: its clean-up still runs). */
export function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new IoTimeout(ms)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** A read or write that did not happen, and why. */
export type IoFailure = { ok: false; problem: IoProblem };

/** A failure from a system error (or anything thrown). */
export function failed(error: unknown): IoFailure {
  return { ok: false, problem: problemOf(error) };
}

/** Why an opened file may not be read or written: not a regular file, or (with `maxBytes`) larger than that. */
export function unfit(stat: Stats, maxBytes = Number.POSITIVE_INFINITY): IoFailure | undefined {
  const kind = kindOf(stat);
  if (kind === "folder") return { ok: false, problem: { kind: "folder" } };
  if (kind !== "file") return { ok: false, problem: { kind: "special", what: kind } };
  if (stat.size > maxBytes) return { ok: false, problem: { kind: "too-large", size: stat.size, limit: maxBytes } };
  return undefined;
}

/** Runs `work` under a timeout; a timeout or anything thrown becomes a failure. */
async function bounded<R>(work: () => Promise<R | IoFailure>, ms: number): Promise<R | IoFailure> {
  try {
    return await withTimeout(work(), ms);
  } catch (error) {
    if (error instanceof IoTimeout) return { ok: false, problem: { kind: "timeout", ms: error.ms } };
    return failed(error);
  }
}

/** Whether the open `fd` is in `root`, by its `/proc/self/fd` path (Linux; else undefined): no resolve/open race. */
export function fdInside(fd: number, root: string): boolean | undefined {
  let path: string;
  try {
    path = readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  }
  return isInside(root, path.endsWith(" (deleted)") ? path.slice(0, -" (deleted)".length) : path);
}

/** The bytes of a regular file and the stat they were read with, or why not. */
export type ReadResult = { ok: true; bytes: Buffer; stat: Stats } | IoFailure;

/** Reads at most `max + 1` bytes from the open file (so that growth past the cap is seen). */
async function readCapped(handle: FileHandle, max: number, hint: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  // The size from fstat, plus one byte to see the end; if the file grew meanwhile, chunks from 64 KB up.
  let size = Math.min(Math.max(hint, 0) + 1, max + 1);
  for (;;) {
    const buffer = Buffer.allocUnsafe(Math.max(1, Math.min(size, max + 1 - total)));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
    if (bytesRead === 0) break;
    chunks.push(buffer.subarray(0, bytesRead));
    total += bytesRead;
    if (total > max) break;
    size = total <= hint ? hint + 1 - total : Math.min(Math.max(size * 2, 1 << 16), 1 << 24);
  }
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total);
}

/**
 * Reads a regular file inside the real path `root`, at most `maxBytes`, within `ms`: opened `O_NONBLOCK` (a FIFO
 * cannot block the open) and `O_NOFOLLOW`, `fstat` before any byte (returned: a later change is seen by the cache).
 */
export async function readRegularFile(path: string, root: string, maxBytes: number, ms: number): Promise<ReadResult> {
  return bounded(async (): Promise<ReadResult> => {
    let handle: FileHandle;
    try {
      handle = await open(path, constants.O_RDONLY | NONBLOCK | NOFOLLOW);
    } catch (error) {
      return failed(error);
    }
    try {
      const stat = await handle.stat();
      const refused = unfit(stat, maxBytes);
      if (refused) return refused;
      if (fdInside(handle.fd, root) === false) return { ok: false, problem: { kind: "outside" } };
      const bytes = await readCapped(handle, maxBytes, stat.size);
      if (bytes.length > maxBytes) {
        return { ok: false, problem: { kind: "too-large", size: bytes.length, limit: maxBytes } };
      }
      return { ok: true, bytes, stat };
    } catch (error) {
      return failed(error);
    } finally {
      await handle.close().catch(() => {});
    }
  }, ms);
}

/** {@link readRegularFile}, synchronous (for the scan's `.gitignore` files); no timeout: the open never blocks. */
export function readRegularFileSync(path: string, root: string, maxBytes: number): ReadResult {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | NONBLOCK | NOFOLLOW);
  } catch (error) {
    return failed(error);
  }
  try {
    const stat = fstatSync(fd);
    const refused = unfit(stat, maxBytes);
    if (refused) return refused;
    if (fdInside(fd, root) === false) return { ok: false, problem: { kind: "outside" } };
    const chunks: Buffer[] = [];
    let total = 0;
    let size = Math.min(stat.size + 1, maxBytes + 1);
    for (;;) {
      const buffer = Buffer.allocUnsafe(Math.max(1, Math.min(size, maxBytes + 1 - total)));
      const n = readSync(fd, buffer, 0, buffer.length, null);
      if (n === 0) break;
      chunks.push(buffer.subarray(0, n));
      total += n;
      if (total > maxBytes) break;
      size = total <= stat.size ? stat.size + 1 - total : Math.min(Math.max(size * 2, 1 << 16), 1 << 24);
    }
    if (total > maxBytes) return { ok: false, problem: { kind: "too-large", size: total, limit: maxBytes } };
    return { ok: true, bytes: Buffer.concat(chunks, total), stat };
  } catch (error) {
    return failed(error);
  } finally {
    closeSync(fd);
  }
}
