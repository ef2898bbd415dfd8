import { lstatSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { GuardOptionsError } from "../common/options.js";
import { denyWritesMatcher } from "./deny-writes.js";
import { echo } from "./echo.js";

/**
 * Why a path was refused.
 *
 * @example
 * ```ts
 * const result = sandbox.resolve(path);
 * if (!result.ok && result.reason === ("outside-root" satisfies PathRefusal)) audit(path);
 * ```
 */
export type PathRefusal = "nul-byte" | "outside-root" | "symlink-loop" | "denied" | "invalid";

/**
 * A path resolved inside the sandbox, or the reason it was refused (with a message for the model).
 *
 * @example
 * ```ts
 * const result: ResolvedPath = createSandbox({ root: "/repo" }).resolve("src/app.ts");
 * ```
 */
export type ResolvedPath =
  | {
      /** The path is inside the sandbox. */
      ok: true;
      /** The real absolute path (symlinks followed). */
      path: string;
      /** The path relative to the root, `/`-separated (`.` for the root). */
      relative: string;
    }
  | {
      /** The path was refused. */
      ok: false;
      /** Why. */
      reason: PathRefusal;
      /** What the model is told. */
      message: string;
    };

/**
 * Options of {@link createSandbox}.
 *
 * @example
 * ```ts
 * createSandbox({ root: "/repo", denyWrites: ["*.pem", ".env*", "package-lock.json"] } satisfies SandboxOptions);
 * ```
 */
export interface SandboxOptions {
  /** The project root: every path must resolve (symlinks followed) inside it. */
  root: string;
  /**
   * Paths (relative to the root, `/`-separated) that tools may read but never write, matched as git matches a
   * `.gitignore` at the root (the `ignore` package; case ignored): `*.pem` and `.env*` at any depth, `secrets/**`,
   * `/dist/` and `src/generated/` anchored at the root (a leading `./` too), a folder pattern covering everything
   * below it. Added to the built-in protection of `.git` (any `.git` folder or file, at any depth), which this list
   * cannot drop. Default: none.
   */
  denyWrites?: readonly string[];
  /** Let the tools write inside `.git` (the built-in protection off). Default false. */
  allowGitWrites?: boolean;
}

/** Whether the real path `real` is `root` or inside it (separator-aware: `/proj2` is not inside `/proj`). */
export function isInside(root: string, real: string): boolean {
  return real === root || real.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);
}

/** The real path of `absolute` (symlinks followed, also dangling ones) when it is inside `root`, else undefined. */
export function realPathInside(root: string, absolute: string): string | undefined {
  try {
    const real = realPathOf(absolute);
    return isInside(root, real) ? real : undefined;
  } catch {
    return undefined;
  }
}

/** The longest path (bytes) the sandbox resolves: `PATH_MAX` (resolving a longer one takes time quadratic in it). */
const MAX_PATH_BYTES = 4096;

/** How many symlinks one resolution may follow before it is called a loop (the kernel's limit). */
const MAX_LINKS = 40;

/** The `code` of a Node.js system error (`"ENOENT"`, `"ELOOP"`, ...), if it has one. */
export function errorCode(error: unknown): string | undefined {
  return typeof error === "object" && error !== null && "code" in error ? String(error.code) : undefined;
}

/** The real path of the root folder `given`, or the `GuardOptionsError` of a root that is missing or not a folder. */
function realRoot(given: string): string {
  let real: string | undefined;
  try {
    real = realpathSync.native(resolve(given));
  } catch (error) {
    const code = errorCode(error);
    if (code !== "ENOENT" && code !== "ENOTDIR") throw error; // EACCES, ELOOP: the OS's own words
  }
  const problem = real === undefined ? "does not exist" : statSync(real).isDirectory() ? "" : "is not a folder";
  if (problem === "") return real as string;
  const why = `${JSON.stringify(given)} ${problem}; the file tools need the project's folder.`;
  throw new GuardOptionsError(`Invalid file-tool options:\n- root: ${why}`);
}

/**
 * The real path of `absolute`, also when its tail does not exist yet: the longest existing prefix resolved, a
 * dangling symlink followed by hand, the missing names appended. Throws `ELOOP` for symlink loops.
 */
function realPathOf(absolute: string, links = 0): string {
  if (links > MAX_LINKS) throw Object.assign(new Error("too many symbolic links"), { code: "ELOOP" });
  try {
    return realpathSync.native(absolute);
  } catch (error) {
    const code = errorCode(error);
    if (code !== "ENOENT" && code !== "ENOTDIR") throw error; // ELOOP too
  }
  let stat: ReturnType<typeof lstatSync> | undefined;
  try {
    stat = lstatSync(absolute);
  } catch {
    stat = undefined;
  }
  if (stat?.isSymbolicLink()) {
    let target: string;
    try {
      target = readlinkSync(absolute);
    } catch (error) {
      // No longer a link (another process changed it meanwhile): resolved again, within the loop limit.
      if (errorCode(error) === "ENOENT" || errorCode(error) === "EINVAL") return realPathOf(absolute, links + 1);
      throw error;
    }
    return realPathOf(isAbsolute(target) ? target : resolve(dirname(absolute), target), links + 1);
  }
  const parent = dirname(absolute);
  if (parent === absolute) return absolute; // the filesystem root
  const name = absolute.slice(parent.length + (parent.endsWith(sep) ? 0 : 1));
  return join(realPathOf(parent, links), name);
}

const refuse = (reason: PathRefusal, message: string): ResolvedPath => ({ ok: false, reason, message });

/**
 * A sandbox for file tools: resolves every path to its real absolute path (symlinks followed, non-existent tails
 * handled, loops caught) and refuses anything outside `root` by a separator-aware check (`/proj2` is not inside
 * `/proj`), paths with NUL bytes, and writes to denied paths (`denyWrites`, and `.git` unless `allowGitWrites`). A
 * name that merely contains `..` (`[...slug].tsx`) is an ordinary name.
 *
 * @example
 * ```ts
 * const sandbox = createSandbox({ root: "/repo" });
 * sandbox.resolve("src/app.ts");         // { ok: true, path: "/repo/src/app.ts", relative: "src/app.ts" }
 * sandbox.resolve("../etc/passwd");      // { ok: false, reason: "outside-root", message: "..." }
 * sandbox.resolve(".git/config", { write: true }); // { ok: false, reason: "denied", ... }
 * ```
 */
export function createSandbox(options: SandboxOptions) {
  if (typeof options.root !== "string" || options.root === "") throw new TypeError("createSandbox: root is required");
  const root = realRoot(options.root);
  const denies = denyWritesMatcher(options);

  const resolvePath = (input: unknown, opts: { write?: boolean } = {}): ResolvedPath => {
    if (typeof input !== "string" || input === "") return refuse("invalid", "The path must be a non-empty string.");
    if (input.includes("\0")) return refuse("nul-byte", "The path contains a NUL byte, which no file name can.");
    const absolute = resolve(root, input);
    if (input.length > MAX_PATH_BYTES || Buffer.byteLength(absolute) >= MAX_PATH_BYTES) {
      return refuse("invalid", `The path ${echo(input)} is too long (the limit is ${MAX_PATH_BYTES} bytes).`);
    }
    let real: string;
    try {
      real = realPathOf(absolute);
    } catch (error) {
      const code = errorCode(error);
      if (code === "ELOOP") return refuse("symlink-loop", `The path ${echo(input)} goes through a symbolic link loop.`);
      const why =
        code === "ENAMETOOLONG"
          ? "it is too long"
          : code === "EACCES"
            ? "a folder on the way is not readable (permission denied)"
            : (code ?? "an unknown error");
      return refuse("invalid", `The path ${echo(input)} cannot be resolved: ${why}.`);
    }
    if (!isInside(root, real)) {
      return refuse(
        "outside-root",
        `The path ${echo(input)} is outside the project root; only files inside it can be used.`,
      );
    }
    const rel = relative(root, real).split(sep).join("/");
    // Both the real path and the path as given (a link named `.env` to an allowed file is still `.env`).
    const given = relative(root, absolute).split(sep).join("/");
    if (opts.write && (denies(rel) || (isInside(root, absolute) && denies(given)))) {
      return refuse("denied", `Writing to ${echo(denies(rel) ? rel : given)} is not allowed.`);
    }
    return { ok: true, path: real, relative: rel === "" ? "." : rel };
  };

  return {
    /** The real absolute path of the root (symlinks followed). */
    root,
    /** Resolves a path (relative to the root, or absolute) inside the sandbox; `write` applies `denyWrites`. */
    resolve: resolvePath,
  };
}

/**
 * A sandbox made by {@link createSandbox}.
 *
 * @example
 * ```ts
 * const sandbox: Sandbox = createSandbox({ root: process.cwd() });
 * ```
 */
export type Sandbox = ReturnType<typeof createSandbox>;
