// Volatile call metadata in arguments (a fresh request id per call would make a stuck loop's calls look new). Not the
// result normalizer's list: in arguments many of its keys (`run_id`, `session_id`, `pid`) name what a call is about.

/** Keys (lower-case, without `_`, `-` and `.`) that name a per-call id or the time a call was sent. */
const METADATA_KEYS = new Set(
  (
    "requestid reqid traceid spanid correlationid idempotencykey nonce " +
    "ts timestamp sentat senttime requestedat requesttime requesttimestamp clienttimestamp"
  ).split(" "),
);
/** Time keys that may name data (a price `timestamp`, Slack's `ts`): metadata only when read off a clock. */
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

function isClockReading(value: unknown): boolean {
  return typeof value === "string" && ISO_DATE_TIME.test(value) && CLOCK_READING.test(value.replace(" ", "T"));
}

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

/** `value` without volatile metadata, `depth` levels down; itself when nothing is dropped; `asked` keys are kept. */
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
 * A call's arguments without volatile metadata (a UUID, date-time or epoch under a key such as `requestId`, `trace_id`,
 * `nonce`, `sent_at`, two levels down at most); other values (`order_id: <uuid>`) and the `asked` keys stay.
 */
export function withoutVolatileArgs(args: unknown, asked?: readonly string[]): unknown {
  return withoutVolatile(args, MAX_DEPTH, asked);
}
