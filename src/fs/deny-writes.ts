/**
 * Which paths the file tools may never write: the `denyWrites` patterns, matched by the `ignore` package exactly as
 * git matches a `.gitignore` at the root, and the built-in protections, which a custom list cannot drop (only the
 * `allowGitWrites` option does).
 */
import ignore, { type Ignore } from "ignore";

/**
 * The built-in protections: a `.git` folder or file at any depth (a repository's, a nested one's, a submodule's
 * `.git` file) and everything below it. Hooks and config there run code on the next git command.
 *
 * @example
 * ```ts
 * BUILTIN_DENY_WRITES; // [".git"]
 * ```
 */
const BUILTIN_DENY_WRITES: readonly string[] = [".git"];

/**
 * A `denyWrites` entry as git reads it, except that a leading `./` means the root (as a leading `/` does; git would
 * match it against nothing).
 */
function asGitignoreLine(entry: string): string {
  return entry.startsWith("./") ? entry.slice(1) : entry;
}

/**
 * Why a `denyWrites` entry cannot be used, or undefined when it can (for the option's validation).
 *
 * @example
 * ```ts
 * denyWritesProblem("*.pem"); // undefined
 * ```
 */
export function denyWritesProblem(entry: string): string | undefined {
  try {
    ignore().add(asGitignoreLine(entry)).ignores("probe");
    return undefined;
  } catch (error) {
    return `not a .gitignore pattern (${(error as Error).message})`;
  }
}

/**
 * Options of {@link denyWritesMatcher}.
 *
 * @example
 * ```ts
 * const rules: DenyWritesRules = { denyWrites: ["*.pem"], allowGitWrites: false };
 * ```
 */
interface DenyWritesRules {
  /** `.gitignore` patterns, relative to the root. */
  denyWrites?: readonly string[] | undefined;
  /** Drop the built-in protection of `.git` (see {@link BUILTIN_DENY_WRITES}). */
  allowGitWrites?: boolean | undefined;
}

/**
 * Whether a path (relative to the root, `/`-separated) may not be written: the built-in protections first (no
 * pattern of the custom list, not even a `!` negation, reaches them), then the custom patterns, matched as git
 * matches a root `.gitignore` (case ignored): `*.pem` and `.env*` at any depth, `secrets/**` and `/dist/` anchored
 * at the root, a folder pattern (`build/`) covering everything below it.
 *
 * @example
 * ```ts
 * const denied = denyWritesMatcher({ denyWrites: ["*.pem", "secrets/**"] });
 * denied("certs/key.pem");         // true
 * denied("sub/.git/hooks/x");      // true (built in)
 * denied("src/app.ts");            // false
 * ```
 */
export function denyWritesMatcher(rules: DenyWritesRules): (rel: string) => boolean {
  const builtin: Ignore | undefined = rules.allowGitWrites ? undefined : ignore().add([...BUILTIN_DENY_WRITES]);
  const custom = ignore().add((rules.denyWrites ?? []).map(asGitignoreLine));
  return (rel) => {
    if (rel === "" || rel === "." || !ignore.isPathValid(rel)) return false;
    return (builtin?.ignores(rel) ?? false) || custom.ignores(rel);
  };
}
