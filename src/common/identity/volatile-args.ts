// Volatile call metadata in a call's arguments (a fresh request id or time of sending with every call would make each
// call of a stuck loop look new). The result normalizer (tool-calls/normalize.ts) keeps its own list of volatile
// keys: in arguments many of those (`run_id`, `session_id`, `pid`) name what a call is about.

/** Keys (lower-case, without `_`, `-` and `.`) that name a per-call id or the time a call was sent. */
const METADATA_KEYS = new Set(
  (
    "requestid reqid traceid spanid correlationid idempotencykey nonce " +
    "ts timestamp sentat senttime requestedat requesttime requesttimestamp clienttimestamp"
  ).split(" "),
);
/**
 * Keys that name a time but may name the data asked about (a price `timestamp`, Slack's message `ts`, an epoch with
 * a fraction): metadata only when the value is a clock's reading of now, an ISO date-time with a fraction of a second
 * or seconds past the minute (`new Date().toISOString()`), never an epoch or a round time.
 */
const AMBIGUOUS_TIME_KEYS = new Set(["ts", "timestamp"]);
/** An ISO date-time read off a clock: seconds with a fraction, or seconds other than `00`. */
const CLOCK_READING = /T\d{2}:\d{2}:(?:\d{2}[.,]\d+|(?!00)\d{2})/i;

/** Key endings that name a per-call id whatever comes before (`x-request-id`, `clientRequestId`, `parent_span_id`). */
const METADATA_SUFFIXES = ["requestid", "traceid", "spanid", "correlationid", "idempotencykey"];

/** A UUID, with or without dashes, optionally after a short prefix (`req_…`, `urn:uuid:…`). */
const UUID = /^(?:[a-z]{1,8}[-_:]){0,2}(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32})$/i;
/** An ISO 8601 date-time (a time of day is required: a date alone is a day asked about). */
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?$/i;
/** An epoch time in seconds (10 digits, optionally with a fraction) or milliseconds (13 digits). */
const EPOCH = /^(?:\d{10}(?:\.\d+)?|\d{13})$/;

/** How deep into nested objects and lists metadata keys are looked for (`metadata.trace.trace_id` is 3). */
const MAX_DEPTH = 3;

/** Whether `value` under `key` is call metadata: a key that names it, a value shaped as a per-call id or time. */
function isMetadata(key: string, value: unknown): boolean {
  const plain = key.replace(/[-_.]/g, "").toLowerCase();
  if (!METADATA_KEYS.has(plain) && !METADATA_SUFFIXES.some((suffix) => plain.endsWith(suffix))) return false;
  return isVolatileValue(value) && (!AMBIGUOUS_TIME_KEYS.has(plain) || isClockReading(value));
}

/** Whether a value is an ISO date-time read off a clock (see {@link CLOCK_READING}). */
function isClockReading(value: unknown): boolean {
  return typeof value === "string" && ISO_DATE_TIME.test(value) && CLOCK_READING.test(value.replace(" ", "T"));
}

/** Whether a value is shaped as a per-call id or time: a UUID, an ISO date-time, an epoch time (number or text). */
function isVolatileValue(value: unknown): boolean {
  if (typeof value === "number") return Number.isFinite(value) && value >= 0 && EPOCH.test(String(value));
  if (typeof value !== "string" || value.length > 64) return false;
  return UUID.test(value) || ISO_DATE_TIME.test(value) || EPOCH.test(value);
}

/** Whether a value is a plain object (a model's JSON): only those are looked into and copied. */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * `value` without its volatile metadata, `depth` levels down at most; the same value when nothing was dropped.
 * `asked`: the top-level keys the tool's schema declares, kept whatever their values look like.
 */
function withoutVolatile(value: unknown, depth: number, asked?: readonly string[]): unknown {
  if (depth <= 0) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i += 1) {
      const item: unknown = value[i];
      const kept = withoutVolatile(item, depth - 1);
      if (kept === item) continue;
      copy ??= value.slice();
      copy[i] = kept;
    }
    return copy ?? value;
  }
  if (!isPlainObject(value)) return value;
  let copy: Record<string, unknown> | undefined;
  for (const key of Object.keys(value)) {
    const member = value[key];
    if (isMetadata(key, member) && asked?.includes(key) !== true) {
      copy ??= { ...value };
      delete copy[key];
      continue;
    }
    const kept = withoutVolatile(member, depth - 1);
    if (kept === member) continue;
    copy ??= { ...value };
    copy[key] = kept;
  }
  return copy ?? value;
}

/**
 * A call's arguments without their volatile metadata: a value shaped as a UUID, an ISO date-time or an epoch time
 * under a key that names a request, trace or correlation id, an idempotency key, a nonce or a time of sending
 * (`requestId`, `x-request-id`, `trace_id`, `nonce`, `ts`, `timestamp`, `sent_at`, …), at the top level or up to
 * two levels down in plain objects and lists (`metadata.trace_id`). Other values are kept, whatever their shape:
 * `order_id: <uuid>` is data, and so is `request_id: "r3"`, and so is any top-level argument in `asked`, the ones the
 * tool's schema declares (`get_trace({ trace_id })` asks about that trace). A copy along each changed path; `args` is
 * not changed, and is returned as it is when nothing is dropped.
 *
 * @example
 * ```ts
 * withoutVolatileArgs({ q: "x", requestId: "3f2b8c1e-9d4a-4b6e-8f1a-2c3d4e5f6a7b", ts: "2026-11-28T10:00:03.512Z" });
 * // { q: "x" }
 * withoutVolatileArgs({ channel: "C1", ts: "1503435956.000247" }); // unchanged: Slack's message ts is data
 * withoutVolatileArgs({ order_id: "3f2b8c1e-9d4a-4b6e-8f1a-2c3d4e5f6a7b", request_id: "r3" }); // unchanged
 * ```
 */
export function withoutVolatileArgs(args: unknown, asked?: readonly string[]): unknown {
  return withoutVolatile(args, MAX_DEPTH, asked);
}
