/**
 * The usual call's identity: flat JSON arguments (strings and numbers, a path among them) read in one pass, paths
 * compared as the guards compare them; `classify.ts` reads every other call's arguments by the definition.
 */
import { posix } from "node:path";
import { digest } from "./signature.js";
import { isMetadataKey } from "./volatile-args.js";

/**
 * Resolves a path the way the guards compare paths: against `root` when given, else normalized as written.
 *
 * @example
 * ```ts
 * normalizePath("./src/../a.py", "/repo"); // "/repo/a.py"
 * normalizePath("./src/", undefined);      // "src"
 * ```
 */
export function normalizePath(path: string, root: string | undefined): string {
  // Agents name the same few paths over and over: remembered per root (a bounded map, emptied when full).
  let known = normalizedPaths.get(root);
  if (known === undefined) {
    if (normalizedPaths.size >= NORMALIZED_ROOTS) normalizedPaths.clear();
    known = new Map();
    normalizedPaths.set(root, known);
  }
  const remembered = known.get(path);
  if (remembered !== undefined) return remembered;
  const resolved = root !== undefined ? posix.resolve(root, path) : posix.normalize(path);
  const normalized = resolved.length > 1 && resolved.endsWith("/") ? resolved.slice(0, -1) : resolved;
  if (known.size >= NORMALIZED_PATHS) known.clear();
  known.set(path, normalized);
  return normalized;
}

const NORMALIZED_ROOTS = 16; // normalized paths remembered per root: at most this many roots …
const NORMALIZED_PATHS = 4_096; // … and this many paths per root
const normalizedPaths = new Map<string | undefined, Map<string, string>>();

/** A value that can name a path: a non-empty string without NUL. */
export function isPathText(value: unknown): value is string {
  return typeof value === "string" && value !== "" && !value.includes("\0");
}

/**
 * The key and paths of a call whose arguments are a plain object of strings, finite numbers and booleans, none under
 * a metadata key and at most one of them a path: the digest of the canonical JSON written here (sorted keys, as
 * `canonicalJson` writes them, the path normalized against `root`), in one pass. `undefined` for any other arguments
 * (`callIdentity` then reads them by the definition, with the same result where both apply).
 *
 * @example
 * ```ts
 * flatArgsIdentity("read_file", { path: "a.py" }, ["path"], "/repo")?.paths; // ["/repo/a.py"]
 * ```
 */
export function flatArgsIdentity(
  name: string,
  args: unknown,
  pathArgs: readonly string[],
  root: string | undefined,
): { key: string; paths: string[] } | undefined {
  if (args === null || typeof args !== "object" || Object.getPrototypeOf(args) !== Object.prototype) return undefined;
  const names = Object.keys(args);
  if (Object.getOwnPropertyNames(args).length !== names.length) return undefined; // a hidden argument
  names.sort();
  const paths: string[] = [];
  let json = "";
  for (const key of names) {
    let value: unknown = (args as Record<string, unknown>)[key];
    const type = typeof value;
    if ((type !== "string" && type !== "boolean" && type !== "number") || isMetadataKey(key)) return undefined;
    if (type === "number" && !Number.isFinite(value)) return undefined;
    if (isPathText(value) && pathArgs.includes(key)) {
      if (paths.length > 0) return undefined;
      value = normalizePath(value, root);
      paths.push(value as string);
    }
    json += `${json === "" ? "{" : ","}${JSON.stringify(key)}:${JSON.stringify(value)}`;
  }
  return { key: digest(`${name}:${json === "" ? "{}" : `${json}}`}`), paths };
}
