/**
 * Folders opened from the root one component at a time, never through a symlink; on Linux each step goes through the
 * open folder (`/proc/self/fd/N`), elsewhere each is checked by real path (a swap right after that is not caught).
 */
import {
  closeSync,
  constants,
  type Dirent,
  existsSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  rmdirSync,
  type Stats,
} from "node:fs";
import { join } from "node:path";
import { failed, fdInside, type IoFailure } from "./io.js";
import { errorCode } from "./sandbox.js";

const FOLDER_FLAGS =
  constants.O_RDONLY | (constants.O_DIRECTORY ?? 0) | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

let procFd: boolean | undefined;

/** Whether an open folder can be reached by its `/proc/self/fd/N` path (Linux). */
function hasProcFd(): boolean {
  if (procFd !== undefined) return procFd;
  let fd: number | undefined;
  try {
    fd = openSync("/", FOLDER_FLAGS);
    procFd = existsSync(`/proc/self/fd/${fd}/.`);
  } catch {
    procFd = false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  return procFd;
}

/** A folder opened by {@link openFolderInside}: its entries are reached through the open folder (Linux). */
export interface OpenFolder {
  readonly fd: number;
  readonly path: string;
  /** The path of its entry `name`, through the open folder where the system allows it. */
  at(name: string): string;
  /** Removes the folders the walk created (deepest first, only while empty): for a write that did not happen. */
  undo(): void;
  /** Closes the folder and every folder above it that the walk opened. */
  close(): void;
}

type OpenFolderResult = { ok: true; folder: OpenFolder } | IoFailure;

function entryOf(fd: number, path: string, name: string): string {
  return hasProcFd() ? `/proc/self/fd/${fd}/${name}` : join(path, name);
}

interface Step {
  fd: number;
  path: string;
  created: boolean;
}

/** Why the component at `entry` could not be opened as a folder: `swapped` by another process, a file, an error. */
function refusal(entry: string, error: unknown): IoFailure {
  const code = errorCode(error);
  if (code === "ENOTDIR" || code === "ELOOP") {
    let stat: Stats | undefined;
    try {
      stat = lstatSync(entry);
    } catch {
      stat = undefined;
    }
    // Not there, a link, or a folder again (put back meanwhile): another process changed it.
    if (stat === undefined || !stat.isFile()) return { ok: false, problem: { kind: "swapped" } };
    return { ok: false, problem: { kind: "error", code: "ENOTDIR" } };
  }
  if (code === "ENOENT") return { ok: false, problem: { kind: "swapped" } };
  return failed(error);
}

/** Opens the component `name` below `parent` (made first when missing and `create`), or why it cannot be. */
function step(parent: Step, name: string, create: boolean): Step | IoFailure {
  const entry = entryOf(parent.fd, parent.path, name);
  const path = join(parent.path, name);
  let created = false;
  for (let attempt = 0; ; attempt += 1) {
    try {
      const fd = openSync(entry, FOLDER_FLAGS);
      return { fd, path, created };
    } catch (error) {
      if (errorCode(error) !== "ENOENT" || !create || attempt > 0) return refusal(entry, error);
    }
    try {
      mkdirSync(entry, 0o777);
      created = true;
    } catch (error) {
      // EEXIST: made by someone else meanwhile, opened next; ENOENT: the folder it goes in was removed meanwhile.
      if (errorCode(error) === "ENOENT") return { ok: false, problem: { kind: "swapped" } };
      if (errorCode(error) !== "EEXIST") return failed(error);
    }
  }
}

/** Whether the folder open as `s` is inside the root, and (without `/proc`) still at the path walked. */
function stillInside(root: string, s: Step): boolean {
  if (hasProcFd()) return fdInside(s.fd, root) !== false;
  try {
    return realpathSync.native(s.path) === s.path;
  } catch {
    return false;
  }
}

function openFolder(steps: Step[]): OpenFolder {
  const last = steps[steps.length - 1] as Step;
  return {
    fd: last.fd,
    path: last.path,
    at: (name) => entryOf(last.fd, last.path, name),
    undo: () => {
      for (let i = steps.length - 1; i > 0; i -= 1) {
        const s = steps[i] as Step;
        const parent = steps[i - 1] as Step;
        if (!s.created) break;
        try {
          rmdirSync(entryOf(parent.fd, parent.path, s.path.slice(parent.path.length + 1)));
        } catch {
          break; // not empty (someone put something there meanwhile): kept
        }
      }
    },
    close: () => {
      for (const s of steps) closeSync(s.fd);
    },
  };
}

/**
 * Opens the folder `rel` (`/`-separated, `""` for the root) of the real path `root`, creating missing ones with
 * `create`; refused (what it created removed again): the root gone, a symlink or file on the way, a folder outside.
 */
export function openFolderInside(root: string, rel: string, create: boolean): OpenFolderResult {
  let rootFd: number;
  try {
    rootFd = openSync(root, FOLDER_FLAGS);
  } catch (error) {
    const code = errorCode(error);
    if (code === "ENOENT" || code === "ENOTDIR" || code === "ELOOP")
      return { ok: false, problem: { kind: "root-gone" } };
    return failed(error);
  }
  const steps: Step[] = [{ fd: rootFd, path: root, created: false }];
  const fail = (failure: IoFailure): IoFailure => {
    const opened = openFolder(steps);
    opened.undo();
    opened.close();
    return failure;
  };
  for (const name of rel === "" ? [] : rel.split("/")) {
    const next = step(steps[steps.length - 1] as Step, name, create);
    if ("problem" in next) return fail(next);
    steps.push(next);
    if (!stillInside(root, next)) return fail({ ok: false, problem: { kind: "outside" } });
  }
  return { ok: true, folder: openFolder(steps) };
}

/**
 * The stat and entries of the folder at the real path `path`, read through the folder opened without following a
 * symlink and checked to be the one at that path; undefined when it is not, or cannot be read.
 */
export function readFolderAt(path: string): { stat: Stats; dirents: Dirent[] } | undefined {
  let fd: number;
  try {
    fd = openSync(path, FOLDER_FLAGS);
  } catch {
    return undefined;
  }
  try {
    if (hasProcFd()) {
      if (readlinkSync(`/proc/self/fd/${fd}`) !== path) return undefined; // reached through a symlink on the way
      return { stat: fstatSync(fd), dirents: readdirSync(`/proc/self/fd/${fd}`, { withFileTypes: true }) };
    }
    const stat = fstatSync(fd);
    const dirents = readdirSync(path, { withFileTypes: true });
    const after = lstatSync(path, { throwIfNoEntry: false });
    if (after?.ino !== stat.ino || after.dev !== stat.dev || realpathSync.native(path) !== path) return undefined;
    return { stat, dirents };
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}
