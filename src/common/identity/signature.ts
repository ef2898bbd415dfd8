import { createHash, hash } from "node:crypto";
import { configure } from "safe-stable-stringify";

/** Deterministic JSON: keys sorted, cycles as `"[Circular]"`, BigInt a number literal, `undefined` members dropped. */
const stableStringify = configure({ bigint: true, circularValue: "[Circular]", deterministic: true });

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
 * functions, symbols) never throw. Values nested deeper than the stack allows (thousands of levels) are written by
 * `deepCanonicalJson`, the same JSON without recursion (compact, whatever `space` says): two different deep
 * values never share a text, equal ones do.
 *
 * @example
 * ```ts
 * canonicalJson({ b: 1, a: [2n] }); // '{"a":[2],"b":1}'
 * ```
 */
export function canonicalJson(value: unknown, space?: number): string {
  try {
    return stableStringify(value, null, space) ?? "null";
  } catch (error) {
    try {
      // Deeper than the stack: the same JSON, written with an explicit stack (compact).
      if (error instanceof RangeError) return deepCanonicalJson(value) ?? "null";
    } catch {
      // Unserializable after all.
    }
    // A getter that throws, a Proxy that refuses ownKeys, ...: the call still needs an identity.
    return `"[Unserializable ${typeof value}]"`;
  }
}

/** A JSON primitive as the recursive serializer writes it (`undefined`: left out of an object, `null` in a list). */
function primitiveJson(value: unknown): string | undefined {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "number":
      return Number.isFinite(value) ? String(value) : "null";
    case "boolean":
      return value ? "true" : "false";
    case "bigint":
      return String(value);
    default:
      return undefined; // undefined, functions, symbols
  }
}

/** An object or list being written: its keys (sorted; none for a list), the next one, and whether one was written. */
interface Frame {
  value: object;
  keys: string[] | undefined;
  next: number;
  wrote: boolean;
}

/** The opening of an object or list whose frame was pushed (see {@link deepCanonicalJson}). */
const OPENED = Symbol("opened");

/**
 * {@link canonicalJson} without recursion, for values deeper than the stack: the recursive serializer's output to
 * the character, compact; `undefined` when the value itself has no JSON (`undefined`, a function).
 */
export function deepCanonicalJson(value: unknown): string | undefined {
  const frames: Frame[] = [];
  const ancestors = new Set<object>();
  const out: string[] = [];
  /** Writes a member's value, or opens its frame; `undefined`: the value has no JSON (left out, or `null`). */
  const enter = (key: string, member: unknown): string | undefined | typeof OPENED => {
    if (typeof member !== "object") return primitiveJson(member);
    if (member === null) return "null";
    let item: unknown = member;
    const toJSON = (member as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === "function") {
      item = toJSON.call(member, key);
      if (typeof item !== "object") return primitiveJson(item);
      if (item === null) return "null";
    }
    const node = item as object;
    if (ancestors.has(node)) return '"[Circular]"';
    if (Array.isArray(node)) {
      if (node.length === 0) return "[]";
      frames.push({ value: node, keys: undefined, next: 0, wrote: false });
    } else {
      if (ArrayBuffer.isView(node)) return stableStringify(node) ?? "null"; // flat: no recursion to fear
      const keys = Object.keys(node);
      if (keys.length === 0) return "{}";
      frames.push({ value: node, keys: keys.sort(), next: 0, wrote: false });
    }
    ancestors.add(node);
    return OPENED;
  };
  const opening = () => ((frames[frames.length - 1] as Frame).keys === undefined ? "[" : "{");
  const first = enter("", value);
  if (first !== OPENED) return first;
  out.push(opening());
  while (frames.length > 0) {
    const frame = frames[frames.length - 1] as Frame;
    const { value: node, keys } = frame;
    const size = keys === undefined ? (node as unknown[]).length : keys.length;
    if (frame.next >= size) {
      out.push(keys === undefined ? "]" : "}");
      frames.pop();
      ancestors.delete(node);
      continue;
    }
    const at = frame.next;
    frame.next += 1;
    const key = keys === undefined ? String(at) : (keys[at] as string);
    const written = enter(key, (node as Record<string, unknown>)[key]);
    if (keys === undefined) {
      if (at > 0) out.push(",");
    } else {
      if (written === undefined) continue; // a member without JSON is left out of an object
      out.push(`${frame.wrote ? "," : ""}${JSON.stringify(key)}:`);
      frame.wrote = true;
    }
    out.push(written === OPENED ? opening() : (written ?? "null"));
  }
  return out.join("");
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

/** Returns `args` without the ignored fields (a shallow copy along each dropped path; `args` is not changed). */
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

/**
 * A short, fixed-size digest of a string or of bytes (SHA-256, 128 bits, hex). State stores digests, not signatures or
 * results, so a 10 MB argument costs 32 bytes in a checkpoint.
 */
export function digest(text: string | Buffer): string {
  // The one-shot `hash` for short texts; Node advises `createHash` above a few MB. Both give the same SHA-256.
  if (text.length <= 1_000_000) return hash("sha256", text, "hex").slice(0, 32);
  return createHash("sha256").update(text).digest("hex").slice(0, 32);
}

/**
 * The identity of a call whose arguments cannot be read (a throwing getter, a revoked Proxy): it cannot throw, and the
 * call counts as mutating; the tool then fails on its own, as it would in `ToolNode`.
 */
export function unreadableIdentity(name: string, args: unknown): { key: string; effect: { kind: "mutate" } } {
  return { key: digest(`${name}:${canonicalJson(args)}`), effect: { kind: "mutate" } };
}
