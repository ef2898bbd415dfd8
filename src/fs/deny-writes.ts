/** Which paths the file tools may never write: `denyWrites` (as a root `.gitignore`) and the built-in protections. */
import ignore, { type Ignore } from "ignore";

/** `.git` at any depth and all below it (hooks and config there run code on the next git command). */
const BUILTIN_DENY_WRITES: readonly string[] = [".git"];

/** A `denyWrites` entry as a root `.gitignore` line; a leading `./` anchors at the root (git would match nothing). */
function asGitignoreLine(entry: string): string {
  return entry.startsWith("./") ? entry.slice(1) : entry;
}

/** Why a `denyWrites` entry cannot be used, or undefined when it can (for the option's validation). */
export function denyWritesProblem(entry: string): string | undefined {
  try {
    ignore().add(asGitignoreLine(entry)).ignores("probe");
    return undefined;
  } catch (error) {
    return `not a .gitignore pattern (${(error as Error).message})`;
  }
}

interface DenyWritesRules {
  denyWrites?: readonly string[] | undefined;
  allowGitWrites?: boolean | undefined;
}

/**
 * Whether a path (relative to the root, `/`-separated) may not be written: the built-in protections first (no
 * custom pattern, not even a `!` negation, reaches them), then the custom patterns, as a root `.gitignore`.
 */
export function denyWritesMatcher(rules: DenyWritesRules): (rel: string) => boolean {
  const builtin: Ignore | undefined = rules.allowGitWrites ? undefined : ignore().add([...BUILTIN_DENY_WRITES]);
  const custom = ignore().add((rules.denyWrites ?? []).map(asGitignoreLine));
  return (rel) => {
    if (rel === "" || rel === "." || !ignore.isPathValid(rel)) return false;
    return (builtin?.ignores(rel) ?? false) || custom.ignores(rel);
  };
}
