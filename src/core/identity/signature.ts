import { createHash, hash } from "node:crypto";
import { configure } from "safe-stable-stringify";

/**
 * Deterministic JSON that never throws: keys sorted, cycles become `"[Circular]"`, BigInt becomes a number
 * literal, `undefined` members are dropped (as JSON does).
 */
const stableStringify = configure({
  bigint: true,
  circularValue: "[Circular]",
  deterministic: true,
});

/**
 * Options for {@link toolCallSignature}.
 *
 * @example
 * ```ts
 * toolCallSignature("search", { q: "x", nonce: 7 }, { ignoreArgs: ["nonce"] } satisfies SignatureOptions);
 * ```
 */
export interface SignatureOptions {
  /**
   * Argument fields that do not change what a call does (request ids, timestamps, ...), dropped before comparing.
   * A dotted name (`"meta.requestId"`) reaches into nested objects.
   */
  ignoreArgs?: readonly string[];
}

/**
 * Canonical JSON of any value: key order does not matter, and odd values (cycles, BigInt, `undefined`,
 * functions, symbols) never throw.
 *
 * @example
 * ```ts
 * canonicalJson({ b: 1, a: [2n] }); // '{"a":[2],"b":1}'
 * ```
 */
export function canonicalJson(value: unknown, space?: number): string {
  try {
    return stableStringify(value, null, space) ?? "null";
  } catch {
    // A getter that throws, a Proxy that refuses ownKeys, ...: the call still needs an identity.
    return `"[Unserializable ${typeof value}]"`;
  }
}

function dropPath(value: unknown, path: readonly string[]): unknown {
  if (path.length === 0 || value === null || typeof value !== "object" || Array.isArray(value)) return value;
  const [head, ...rest] = path as [string, ...string[]];
  if (!Object.hasOwn(value, head)) return value;
  const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  if (rest.length === 0) delete copy[head];
  else copy[head] = dropPath(copy[head], rest);
  return copy;
}

/**
 * Returns `args` without the ignored fields (a shallow copy along each dropped path; `args` is not changed).
 *
 * @example
 * ```ts
 * withoutIgnoredArgs({ q: "x", requestId: 7 }, ["requestId"]); // { q: "x" }
 * ```
 */
export function withoutIgnoredArgs(args: unknown, ignoreArgs: readonly string[] | undefined): unknown {
  if (!ignoreArgs || ignoreArgs.length === 0) return args;
  let result = args;
  for (const name of ignoreArgs) result = dropPath(result, name.split("."));
  return result;
}

/**
 * The identity of a tool call: the tool name and its arguments as canonical JSON, so `{a:1,b:2}` and `{b:2,a:1}`
 * are the same call. Never throws, whatever the arguments hold.
 *
 * @example
 * ```ts
 * toolCallSignature("read_file", { path: "a.py", limit: 10 }) ===
 *   toolCallSignature("read_file", { limit: 10, path: "a.py" }); // true
 * toolCallSignature("search", { q: "x", nonce: 1 }, { ignoreArgs: ["nonce"] }); // 'search:{"q":"x"}'
 * ```
 */
export function toolCallSignature(name: string, args: unknown, opts: SignatureOptions = {}): string {
  let kept: unknown;
  try {
    kept = withoutIgnoredArgs(args, opts.ignoreArgs);
  } catch {
    kept = args; // unreadable arguments: canonicalJson still gives them an identity
  }
  return `${name}:${canonicalJson(kept)}`;
}

/** Texts up to this many characters are digested with the one-shot `crypto.hash`. */
const ONE_SHOT_LIMIT = 1_000_000;

/**
 * A short, fixed-size digest of a string (SHA-256, 128 bits, hex). State stores digests, not signatures or
 * results, so a 10 MB argument costs 32 bytes in a checkpoint.
 *
 * @example
 * ```ts
 * digest("read_file:{}").length; // 32
 * ```
 */
export function digest(text: string): string {
  // The one-shot `hash` is ~3x faster for the short texts of call signatures; Node advises `createHash` above a
  // few MB. Both give the same SHA-256.
  if (text.length <= ONE_SHOT_LIMIT) return hash("sha256", text, "hex").slice(0, 32);
  return createHash("sha256").update(text).digest("hex").slice(0, 32);
}

/**
 * The identity of a call whose arguments cannot be read (a getter that throws, a revoked Proxy — never JSON from a
 * model, but possible from code): one that cannot throw, for a call treated as one that may change anything (never
 * redundant, makes earlier reads stale). The tool then fails on its own, as it would in `ToolNode`.
 *
 * @example
 * ```ts
 * unreadableIdentity("t", args).effect; // { kind: "mutate" }
 * ```
 */
export function unreadableIdentity(name: string, args: unknown): { key: string; effect: { kind: "mutate" } } {
  return { key: digest(`${name}:${canonicalJson(args)}`), effect: { kind: "mutate" } };
}
