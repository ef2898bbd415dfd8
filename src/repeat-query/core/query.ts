import { jsonrepair } from "jsonrepair";

/**
 * Normalizes a retrieval query: trimmed, lowercased, every run of (Unicode) whitespace collapsed to one space.
 *
 * @example
 * ```ts
 * normalizeQuery("  CLASS   PaymentService\u00a0definition "); // "class paymentservice definition"
 * ```
 */
export function normalizeQuery(query: string): string {
  return query.trim().replace(/\s+/gu, " ").toLowerCase();
}

function queryFromValue(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null || typeof value !== "object" || Array.isArray(value)) return "";
  const query = (value as Record<string, unknown>).query;
  if (typeof query === "string") return query;
  if (typeof query === "number" || typeof query === "boolean") return String(query);
  return "";
}

function parseLenient(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(jsonrepair(text)) };
  } catch {
    return { ok: false };
  }
}

/** Balanced `{...}` spans of `text`, outermost first, skipping braces inside quoted strings. */
function objectCandidates(text: string): string[] {
  const found: string[] = [];
  for (let start = text.indexOf("{"); start >= 0 && found.length < 20; start = text.indexOf("{", start + 1)) {
    let depth = 0;
    let quote: string | undefined;
    for (let i = start; i < text.length; i += 1) {
      const ch = text[i] as string;
      if (quote !== undefined) {
        if (ch === "\\") i += 1;
        else if (ch === quote) quote = undefined;
        continue;
      }
      if (ch === '"' || ch === "'") quote = ch;
      else if (ch === "{") depth += 1;
      else if (ch === "}") {
        depth -= 1;
        if (depth === 0) {
          found.push(text.slice(start, i + 1));
          break;
        }
      }
    }
  }
  return found;
}

/**
 * Reads JSON-ish model output as a value: strict JSON, JSON in a code fence or surrounded by prose, single quotes,
 * trailing commas, unquoted keys. With `want`, the first object (the whole text, then each `{...}` in it) that
 * satisfies it wins. Returns `undefined` when nothing parses.
 *
 * @example
 * ```ts
 * parseJsonish("Sure! ```json\n{'action': 'retrieve',}\n```"); // { action: "retrieve" }
 * ```
 */
export function parseJsonish(text: string, want: (value: unknown) => boolean = () => true): unknown {
  const whole = parseLenient(text);
  if (whole.ok && want(whole.value)) return whole.value;
  for (const candidate of objectCandidates(text)) {
    const parsed = parseLenient(candidate);
    if (parsed.ok && want(parsed.value)) return parsed.value;
  }
  return undefined;
}

/**
 * Extracts the `query` from JSON-ish model output, as {@link parseJsonish} reads it, or a bare string (the
 * `JsonishQueryParser` / `jsonish_v1` parser). `""` when there is none (the guard routes it to `on_repeat`).
 *
 * @example
 * ```ts
 * parseJsonishQuery('{"query": "class Foo"}');                         // "class Foo"
 * parseJsonishQuery("Sure:\n```json\n{'query': 'class Foo',}\n```"); // "class Foo"
 * parseJsonishQuery("class Foo definition");                           // "class Foo definition"
 * parseJsonishQuery('{"action": "retrieve"}');                         // ""
 * ```
 */
export function parseJsonishQuery(payload: unknown): string {
  if (payload !== null && typeof payload === "object") return queryFromValue(payload);
  if (typeof payload !== "string") return "";
  const text = payload.trim();
  if (text === "") return "";
  // Plain prose without any JSON-looking character is a bare query.
  if (!/[{}[\]"'`]/.test(text)) return text;
  const value = parseJsonish(text, (v) => typeof v === "string" || queryFromValue(v) !== "");
  return value === undefined ? "" : queryFromValue(value);
}

/**
 * The names of the query parsers a guard can be configured with.
 *
 * @example
 * ```ts
 * QUERY_PARSERS.includes("jsonish_v1"); // true
 * ```
 */
export const QUERY_PARSERS = ["JsonishQueryParser", "jsonish_v1"] as const;

/**
 * A query parser name accepted by the repeat-query guard.
 *
 * @example
 * ```ts
 * const parser: QueryParserName = "JsonishQueryParser";
 * ```
 */
export type QueryParserName = (typeof QUERY_PARSERS)[number];

/**
 * The query of a payload under a parser: the parser's extraction, or the raw payload (as text) without one.
 *
 * @example
 * ```ts
 * extractQuery('{"query": "x"}', "jsonish_v1"); // "x"
 * extractQuery('{"query": "x"}');               // '{"query": "x"}'
 * ```
 */
export function extractQuery(payload: unknown, parser?: QueryParserName): string {
  if (parser !== undefined) return parseJsonishQuery(payload);
  if (typeof payload === "string") return payload;
  if (payload === null || payload === undefined) return "";
  return typeof payload === "object" ? JSON.stringify(payload) : String(payload);
}

/**
 * The repeat-query decision: `"repeat"` when the normalized query is empty or already asked, else `"ok"`.
 *
 * @example
 * ```ts
 * decideRepeatQuery("class PaymentService definition", ["class orderservice definition"]); // "ok"
 * decideRepeatQuery("  CLASS   PaymentService   definition ", ["class paymentservice definition"]); // "repeat"
 * decideRepeatQuery("", []); // "repeat"
 * ```
 */
export function decideRepeatQuery(query: string, askedNormalized: readonly string[]): "ok" | "repeat" {
  const normalized = normalizeQuery(query);
  if (normalized === "") return "repeat";
  return askedNormalized.includes(normalized) ? "repeat" : "ok";
}

/**
 * How many normalized queries a thread remembers (oldest dropped first).
 *
 * @example
 * ```ts
 * state.retrievalQueriesAskedNorm.length <= MAX_ASKED_QUERIES; // always true
 * ```
 */
export const MAX_ASKED_QUERIES = 1000;

/**
 * The reducer of the asked-queries channel: a set union that keeps first-asked order, bounded to
 * {@link MAX_ASKED_QUERIES}. Updates are normalized again, so a raw query written by hand still matches.
 *
 * @example
 * ```ts
 * unionQueries(["a"], ["B ", "a"]); // ["a", "b"]
 * ```
 */
export function unionQueries(current: readonly string[] | undefined, update: string | readonly string[]): string[] {
  const result = [...(current ?? [])];
  const seen = new Set(result);
  for (const query of typeof update === "string" ? [update] : update) {
    const normalized = normalizeQuery(query);
    if (normalized === "" || seen.has(normalized)) continue;
    seen.add(normalized);
    result.push(normalized);
  }
  return result.length > MAX_ASKED_QUERIES ? result.slice(result.length - MAX_ASKED_QUERIES) : result;
}
