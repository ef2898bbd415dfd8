/**
 * How the file tools replace a file: the new content goes to a temporary file in the same folder, is flushed to
 * disk (`fsync`) and renamed over the original (a new file is linked in place, so one made meanwhile by someone else
 * is never overwritten). The file is therefore at every moment its old or its new content: a process killed
 * half-way, a full disk or a file size limit (`ENOSPC`, `EFBIG`) leave the original as it was, and the temporary
 * file is removed (after `kill -9` it stays behind, as `.<name>.<pid>-<random>.tmp`, until a later write in its
 * folder finds its process gone and the file ten minutes old). The original's mode (and, where the process may, its
 * owner) is kept.
 *
 * The folder is reached from the root component by component and the file's entries are made through the open
 * folder (see `anchored.ts`): a folder on the way swapped for a symlink by another process refuses the write, and
 * nothing is ever created outside the root; folders made for a write that did not happen are removed again.
 */
import { randomBytes } from "node:crypto";
import { constants, fstatSync, linkSync, lstatSync, readdirSync, renameSync, type Stats, unlinkSync } from "node:fs";
import { type FileHandle, lstat, open } from "node:fs/promises";
import { basename, dirname, isAbsolute, relative, sep } from "node:path";
import { type OpenFolder, openFolderInside } from "./anchored.js";
import { failed, fdInside, type IoFailure, IoTimeout, unfit, withTimeout } from "./io.js";
import { errorCode } from "./sandbox.js";

/** `O_NOFOLLOW` where the platform has it (not on Windows). */
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;

/** Errors of `link` on file systems without hard links: the new file is renamed in place instead. */
const NO_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EMLINK"]);

/**
 * The result of a write: whether it created the file, and the stat of what was written; or why nothing was.
 *
 * @example
 * ```ts
 * const w: WriteResult = await writeFileAtomic("/repo/a.txt", Buffer.from("x\n"), options);
 * ```
 */
type WriteResult = { ok: true; created: boolean; stat: Stats } | IoFailure;

/**
 * Options of one write.
 *
 * @example
 * ```ts
 * const options: WriteOptions = { root: "/repo", timeoutMs: 10_000, refuseHardLinks: false };
 * ```
 */
export interface WriteOptions {
  /** The real path of the root: the files opened must be inside it. */
  root: string;
  /** Time the write may take; after it, nothing is changed (a write already renamed in place is waited for). */
  timeoutMs: number;
  /** Refuse a file with more than one hard link. */
  refuseHardLinks: boolean;
  /**
   * The stat the caller read the file's current content with: the file must still have it when it is replaced,
   * else the write is refused as `changed`. Undefined: whatever file is there is replaced.
   */
  expected?: Stats | undefined;
  /** Create the missing folders on the way (inside the root, component by component). Default false. */
  createFolders?: boolean;
}

/** Whether a stat and a later one are of the same, unchanged file (the ctime moves on any change). */
function sameFile(a: Stats, b: Stats): boolean {
  return a.ino === b.ino && a.dev === b.dev && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs;
}

const isFailure = (value: unknown): value is IoFailure =>
  typeof value === "object" && value !== null && "problem" in value;

const changed = (removed: boolean): IoFailure => ({ ok: false, problem: { kind: "changed", removed } });

/**
 * The stat of the file the write replaces (null when there is none), or why it may not be replaced: not a regular
 * file (a symlink is not followed; a FIFO or a device is never opened), more than one hard link (with
 * `refuseHardLinks`), or not the file the caller read (`expected`). Nothing is opened: the new content goes to a
 * new file, and the one opened is checked to be inside the root.
 */
async function existing(entry: string, options: WriteOptions): Promise<Stats | null | IoFailure> {
  let stat: Stats;
  try {
    stat = await lstat(entry);
  } catch (error) {
    if (errorCode(error) !== "ENOENT") return failed(error);
    return options.expected === undefined ? null : changed(true);
  }
  const refused = unfit(stat);
  if (refused) return refused;
  if (options.refuseHardLinks && stat.nlink > 1)
    return { ok: false, problem: { kind: "hard-link", links: stat.nlink } };
  if (options.expected !== undefined && !sameFile(stat, options.expected)) return changed(false);
  return stat;
}

/**
 * A temporary name for `name`: `.<name>.<pid>-<random>.tmp` (the name cut to 100 bytes, within any NAME_MAX), the
 * writing process's id in it so that a later process can tell a leftover from a write in progress.
 */
function tempNameFor(name: string): string {
  const cut = Buffer.from(name).subarray(0, 100).toString("utf8");
  return `.${cut}.${process.pid}-${randomBytes(6).toString("hex")}.tmp`;
}

/** A temporary file of {@link tempNameFor}: the writer's process id. */
const TEMP_NAME = /^\..+\.(\d+)-[0-9a-f]{12}\.tmp$/;
/** How old a temporary file of a process that is gone must be to be removed (no write of ours takes that long). */
export const LEFTOVER_AGE_MS = 10 * 60_000;
/** When each folder (device and inode) was last swept for leftovers: at most once per {@link LEFTOVER_AGE_MS}. */
const swept = new Map<string, number>();

/** Whether a process with this id runs here (one of another user's counts as running). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errorCode(error) === "EPERM";
  }
}

/**
 * Removes the temporary files a killed writer left in the folder (`kill -9` between creating and renaming one): a
 * name of {@link tempNameFor} whose process is not running, untouched for {@link LEFTOVER_AGE_MS}. Once per folder
 * per {@link LEFTOVER_AGE_MS}; never fails the write that calls it.
 */
export function sweepLeftovers(folder: Pick<OpenFolder, "fd" | "at">, now = Date.now()): number {
  let removed = 0;
  try {
    const { dev, ino } = fstatSync(folder.fd);
    const key = `${dev}:${ino}`;
    if (now - (swept.get(key) ?? Number.NEGATIVE_INFINITY) < LEFTOVER_AGE_MS) return 0;
    if (swept.size >= 10_000) swept.clear();
    swept.set(key, now);
    for (const name of readdirSync(folder.at("."))) {
      const pid = TEMP_NAME.exec(name)?.[1];
      if (pid === undefined || Number(pid) === process.pid || running(Number(pid))) continue;
      const stat = lstatSync(folder.at(name), { throwIfNoEntry: false });
      if (stat?.isFile() && now - stat.mtimeMs >= LEFTOVER_AGE_MS) {
        removeQuietly(folder.at(name));
        removed += 1;
      }
    }
  } catch {
    // an unreadable folder: the leftovers stay, the write stands
  }
  return removed;
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}

/** Gives the temporary file the original's owner (where the process may) and mode. */
async function keepOwnerAndMode(handle: FileHandle, original: Stats): Promise<void> {
  const mine = await handle.stat();
  if (mine.uid !== original.uid || mine.gid !== original.gid) {
    await handle.chown(original.uid, original.gid).catch(() => {}); // only root, or the same owner, may
  }
  await handle.chmod(original.mode & 0o7777);
}

/** Whether the write was given up (its timeout passed) and whether the new content is in place. */
interface Progress {
  cancelled: boolean;
  committed: boolean;
}

/** The entries of one write, in the folder opened for it: the file and the temporary file. */
interface Entries {
  folder: OpenFolder;
  /** The file's entry (a path through the open folder). */
  path: string;
  /** The temporary file's entry. */
  temp: string;
}

/**
 * Puts the temporary file in place, synchronously (no timeout can fire in between): renamed over the original when
 * it is still the file that was checked, linked in place when there was none (a file made meanwhile is never
 * overwritten). Undefined when done, else why not.
 */
function commit(entries: Entries, before: Stats | null, root: string, progress: Progress): IoFailure | undefined {
  const { path, temp } = entries;
  if (progress.cancelled) return { ok: false, problem: { kind: "timeout", ms: 0 } };
  // The folder is still inside the root (a real folder moved out of it meanwhile is refused).
  if (fdInside(entries.folder.fd, root) === false) return { ok: false, problem: { kind: "outside" } };
  if (before === null) {
    try {
      linkSync(temp, path);
      progress.committed = true;
      removeQuietly(temp);
      return undefined;
    } catch (error) {
      if (errorCode(error) === "EEXIST") return changed(false);
      if (!NO_LINKS.has(errorCode(error) ?? "")) throw error;
      if (lstatSync(path, { throwIfNoEntry: false }) !== undefined) return changed(false);
    }
  } else {
    const now = lstatSync(path, { throwIfNoEntry: false });
    if (now === undefined) return changed(true);
    if (!sameFile(now, before)) return changed(false);
  }
  renameSync(temp, path);
  progress.committed = true;
  return undefined;
}

/** Flushes a folder's entries (the rename) to disk, where the system allows it. */
async function syncFolder(folder: OpenFolder): Promise<void> {
  try {
    const handle = await open(folder.at("."), constants.O_RDONLY);
    await handle.sync().finally(() => handle.close());
  } catch {
    // not possible on every system (Windows): the rename is still atomic, only not yet durable
  }
}

/** The write itself (see {@link writeFileAtomic}) in the open folder; `progress` tells whether it is in place. */
async function replaceIn(
  entries: Entries,
  data: Buffer,
  options: WriteOptions,
  progress: Progress,
): Promise<WriteResult> {
  const { path, temp } = entries;
  const before = await existing(path, options);
  if (isFailure(before)) return before;
  let handle: FileHandle;
  try {
    const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW;
    handle = await open(temp, flags, before === null ? 0o666 : 0o600);
  } catch (error) {
    return failed(error);
  }
  try {
    if (fdInside(handle.fd, options.root) === false) return { ok: false, problem: { kind: "outside" } };
    await handle.writeFile(data);
    if (before !== null) await keepOwnerAndMode(handle, before);
    await handle.sync();
    const refused = commit(entries, before, options.root, progress);
    if (refused !== undefined) return refused;
    await syncFolder(entries.folder);
    sweepLeftovers(entries.folder);
    return { ok: true, created: before === null, stat: await handle.stat() }; // the renamed file's stat
  } catch (error) {
    return failed(error);
  } finally {
    await handle.close().catch(() => {});
    if (!progress.committed) removeQuietly(temp);
  }
}

/**
 * Opens the file's folder from the root (creating it with `createFolders`), writes in it, and closes it; the folders
 * made for a write that did not happen are removed again.
 */
async function replace(path: string, data: Buffer, options: WriteOptions, progress: Progress): Promise<WriteResult> {
  const rel = relative(options.root, dirname(path));
  if (rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return { ok: false, problem: { kind: "outside" } };
  const opened = openFolderInside(options.root, rel.split(sep).join("/"), options.createFolders ?? false);
  if (!opened.ok) return opened;
  const { folder } = opened;
  const name = basename(path);
  const entries: Entries = { folder, path: folder.at(name), temp: folder.at(tempNameFor(name)) };
  try {
    const result = await replaceIn(entries, data, options, progress);
    if (!result.ok) folder.undo();
    return result;
  } finally {
    folder.close();
  }
}

/**
 * Replaces the regular file at `path` (created if missing) with `data`, atomically: a temporary file in the same
 * folder, written, given the original's mode, flushed (`fsync`), then renamed over the original (see the module's
 * comment). Refused before anything is written: a FIFO, socket, device or folder (never opened for writing, never
 * waited on), a symlink (never followed), a file with other hard links (with `refuseHardLinks`), a file outside the
 * root (Linux, `/proc/self/fd`), and, with `expected`, a file changed since the caller read it (also when it changes
 * while the new content is written: the stat is compared again just before the rename). Within `timeoutMs`: a write
 * that runs out of time changes nothing.
 *
 * @example
 * ```ts
 * const w = await writeFileAtomic("/repo/a.txt", Buffer.from("x\n"), {
 *   root: "/repo",
 *   timeoutMs: 10_000,
 *   refuseHardLinks: false,
 * });
 * if (!w.ok) console.log(problemMessage("a.txt", w.problem, "written"));
 * ```
 */
export async function writeFileAtomic(path: string, data: Buffer, options: WriteOptions): Promise<WriteResult> {
  const progress: Progress = { cancelled: false, committed: false };
  const work = replace(path, data, options, progress).catch(failed);
  try {
    return await withTimeout(work, options.timeoutMs);
  } catch (error) {
    if (!(error instanceof IoTimeout)) return failed(error);
    progress.cancelled = true;
    // Renamed in place already (only the folder's flush was left): the write happened, say so.
    if (progress.committed) return await work;
    return { ok: false, problem: { kind: "timeout", ms: error.ms } };
  }
}
