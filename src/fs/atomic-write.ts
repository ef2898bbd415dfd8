/**
 * How the file tools replace a file: a temporary file in its folder (opened through `anchored.ts`, never outside the
 * root), flushed and renamed over it (a new file linked in place), so it is always its old or its new content.
 */
import { randomBytes } from "node:crypto";
import { constants, fstatSync, linkSync, lstatSync, readdirSync, renameSync, type Stats, unlinkSync } from "node:fs";
import { type FileHandle, lstat, open } from "node:fs/promises";
import { basename, dirname, isAbsolute, relative, sep } from "node:path";
import { type OpenFolder, openFolderInside } from "./anchored.js";
import { failed, fdInside, type IoFailure, IoTimeout, unfit, withTimeout } from "./io.js";
import { errorCode } from "./sandbox.js";

const NOFOLLOW = constants.O_NOFOLLOW ?? 0;

/** Errors of `link` on file systems without hard links: the new file is renamed in place instead. */
const NO_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EMLINK"]);

type WriteResult = { ok: true; created: boolean; stat: Stats } | IoFailure;

interface WriteOptions {
  /** The real path of the root: the files opened must be inside it. */
  root: string;
  /** After it, nothing is changed (a write already renamed in place is waited for). */
  timeoutMs: number;
  refuseHardLinks: boolean;
  /** The stat the caller read the file with: the file must still have it, else the write is refused (`changed`). */
  expected?: Stats | undefined;
  createFolders?: boolean;
}

/** Whether a stat and a later one are of the same, unchanged file (the ctime moves on any change). */
function sameFile(a: Stats, b: Stats): boolean {
  return a.ino === b.ino && a.dev === b.dev && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs;
}

const changed = (removed: boolean): IoFailure => ({ ok: false, problem: { kind: "changed", removed } });

/**
 * The stat of the file the write replaces (null when there is none), or why it may not be replaced: not a regular
 * file (a symlink is not followed), more than one hard link (with `refuseHardLinks`), or not `expected`.
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

const TEMP_NAME = /^\..+\.(\d+)-[0-9a-f]{12}\.tmp$/;
/** How old a temporary file of a process that is gone must be to be removed (no write of ours takes that long). */
export const LEFTOVER_AGE_MS = 10 * 60_000;
/** When each folder (device:inode) was last swept for leftovers. */
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
 * Removes the temporary files a killed writer left in the folder: a name of {@link tempNameFor} whose process is not
 * running, untouched for {@link LEFTOVER_AGE_MS}. Once per folder per {@link LEFTOVER_AGE_MS}; never throws.
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

async function keepOwnerAndMode(handle: FileHandle, original: Stats): Promise<void> {
  const mine = await handle.stat();
  if (mine.uid !== original.uid || mine.gid !== original.gid) {
    await handle.chown(original.uid, original.gid).catch(() => {}); // only root, or the same owner, may
  }
  await handle.chmod(original.mode & 0o7777);
}

interface Progress {
  cancelled: boolean;
  committed: boolean;
}

/** The file's and the temporary file's entries, as paths through the open folder. */
interface Entries {
  folder: OpenFolder;
  path: string;
  temp: string;
}

/**
 * Puts the temporary file in place, synchronously (no timeout can fire in between): renamed over the original when
 * it is still the file checked, linked in place when there was none (a file made meanwhile is never overwritten).
 */
function commit(entries: Entries, before: Stats | null, root: string, progress: Progress): IoFailure | undefined {
  const { path, temp } = entries;
  if (progress.cancelled) return { ok: false, problem: { kind: "timeout", ms: 0 } };
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

async function syncFolder(folder: OpenFolder): Promise<void> {
  try {
    const handle = await open(folder.at("."), constants.O_RDONLY);
    await handle.sync().finally(() => handle.close());
  } catch {
    // not possible on every system (Windows): the rename is still atomic, only not yet durable
  }
}

async function replaceIn(
  entries: Entries,
  data: Buffer,
  options: WriteOptions,
  progress: Progress,
): Promise<WriteResult> {
  const { path, temp } = entries;
  const before = await existing(path, options);
  if (before !== null && "problem" in before) return before;
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

/** Writes in the file's folder, opened from the root; the folders made for a write that did not happen are removed. */
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
 * Replaces the regular file at `path` (created if missing) with `data` atomically, keeping its mode (and owner where
 * allowed). Refused before any write: not a regular file, other hard links (`refuseHardLinks`), outside the root, or
 * not `expected` (compared again just before the rename). A write that runs out of `timeoutMs` changes nothing.
 */
export async function writeFileAtomic(path: string, data: Buffer, options: WriteOptions): Promise<WriteResult> {
  const progress: Progress = { cancelled: false, committed: false };
  const work = replace(path, data, options, progress).catch(failed);
  try {
    return await withTimeout(work, options.timeoutMs);
  } catch (error) {
    if (!(error instanceof IoTimeout)) return failed(error);
    progress.cancelled = true;
    // Renamed in place already (only the folder's flush was left): the write happened.
    if (progress.committed) return await work;
    return { ok: false, problem: { kind: "timeout", ms: error.ms } };
  }
}
