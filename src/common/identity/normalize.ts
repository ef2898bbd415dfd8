/** Result normalization: a result's per-call parts (a timestamp, a request id) masked, in one pass over char codes. */

/** Keys whose value is a per-call id or time (compared without `_` and `-`, lower-case), besides `*_at`, `*At`. */
const VOLATILE_KEYS = new Set(
  (
    "requestid xrequestid reqid traceid spanid correlationid runid messageid msgid pollid sessionid invocationid " +
    "executionid " +
    "receipt etag nonce pid ts timestamp elapsed elapsedms duration durationms latency latencyms took " +
    "durationseconds durationsecs durations elapsedseconds elapseds executioncount"
  ).split(" "),
);

const ISO = /\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?(?![0-9A-Za-z])/y;
const RFC =
  /(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun),? \d{1,2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}(?::\d{2})?(?: (?:GMT|UTC|[+-]\d{4}))?(?![0-9A-Za-z])/y;
const CLOCK = /\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?(?![0-9A-Za-z])/y;
/** Durations written as one word: `4h`, `1h2m`, `1m23.4s`, `0m0.012s`, `12ms`, `3s`. */
const COMPACT_DURATION =
  /\d+(?:h(?:\d+m)?(?:\d+(?:\.\d+)?s)?|m\d+(?:\.\d+)?s|(?:ns|us|ms|s|secs?|mins?))(?![0-9A-Za-z])/y;
const COUNTER = / ?\[\d+\]/y;
const UNITS = new Set("ns µs us ms s sec secs second seconds min mins minute minutes".split(" "));
const DAYS = new Set(["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]);
const DIGIT = /\d/;

/** Character classes of ASCII: 1 a digit, 2 a hex letter, 4 another letter (0 anything else). */
const CLASS = new Uint8Array(128);
for (let c = 48; c <= 57; c += 1) CLASS[c] = 1;
for (let c = 65; c <= 90; c += 1) CLASS[c] = c <= 70 ? 2 : 4;
for (let c = 97; c <= 122; c += 1) CLASS[c] = c <= 102 ? 2 : 4;
const classOf = (c: number) => (c < 128 ? (CLASS[c] as number) : 0);
const isDigit = (c: number) => c >= 48 && c <= 57;
const isAlnum = (c: number) => classOf(c) !== 0;
const isAlpha = (c: number) => classOf(c) > 1;
const isHex = (c: number) => classOf(c) === 1 || classOf(c) === 2;
const isKeyChar = (c: number) => classOf(c) !== 0 || c === 95 || c === 45; // letters, digits, _ and -
const isSpace = (c: number) => c === 32 || c === 9;

/** A volatile part found: where it ends and what replaces it. */
interface Hit {
  end: number;
  text: string;
}

const KEY_ENDS = new Set([..."dDtgespnyk"].map((c) => c.charCodeAt(0)));

/** Whether a key names a per-call id or time (`request_id`, `traceId`, `checked_at`, `createdAt`, `ts`, …). */
function isVolatileKey(key: string): boolean {
  // Every such key ends in d/D (…id, …Id, elapsed), t (…_at, …At, receipt), g (etag), e (nonce), s (ts, …ms),
  // p (timestamp), n (duration), y (latency) or k (took).
  if (!KEY_ENDS.has(key.charCodeAt(key.length - 1))) return false;
  const n = key.length;
  if (n > 3 && key.charCodeAt(n - 1) === 116 /* t */) {
    const a = key.charCodeAt(n - 2);
    const before = key.charCodeAt(n - 3);
    if (a === 65 /* A */ && before >= 97 && before <= 122) return true; // createdAt
    if (a === 97 /* a */ && before === 95 /* _ */) return true; // checked_at
  }
  const plain = key.replace(/[-_]/g, "").toLowerCase();
  return VOLATILE_KEYS.has(plain) || ID_SUFFIXES.some((suffix) => plain.endsWith(suffix));
}

/** Key endings that name a per-call id whatever comes before (`platformMessageId`, `upstream_request_id`). */
const ID_SUFFIXES = ["messageid", "requestid", "traceid", "correlationid"];

/** The end of a value after a key (`"…"`, or a run without spaces and delimiters), or -1. */
function valueEnd(text: string, at: number): number {
  const n = text.length;
  if (at >= n) return -1;
  if (text.charCodeAt(at) === 34 /* " */) {
    for (let k = at + 1; k < n && k <= at + 200; k += 1) {
      const c = text.charCodeAt(k);
      if (c === 92 /* \ */) k += 1;
      else if (c === 34) return k + 1;
      else if (c === 10) return -1;
    }
    return -1;
  }
  const first = text.charCodeAt(at);
  if (first === 123 /* { */ || first === 91 /* [ */) return -1; // an object or a list: its own keys decide
  let k = at;
  while (k < n && k < at + 200) {
    const c = text.charCodeAt(k);
    // space, quote, comma, semicolon, closing brackets end a bare value
    if (c <= 32 || c === 34 || c === 39 || c === 44 || c === 59 || c === 41 || c === 93 || c === 125) break;
    k += 1;
  }
  return k > at ? k : -1;
}

/** A value under a volatile key, `"key": value` (`quoted`) or `key=value` / `key: value`, becomes `<v>`. */
function keyedValue(text: string, i: number, quoted: boolean): Hit | undefined {
  const n = text.length;
  const from = quoted ? i + 1 : i;
  let k = from;
  while (k < n && k - from < 40 && isKeyChar(text.charCodeAt(k))) k += 1;
  if (k === from || (quoted && text.charCodeAt(k) !== 34)) return undefined;
  const keyEnd = k;
  if (quoted) k += 1;
  while (k < n && isSpace(text.charCodeAt(k))) k += 1;
  const sep = text.charCodeAt(k);
  if (sep !== 58 /* : */ && sep !== 61 /* = */) return undefined;
  k += 1;
  while (k < n && isSpace(text.charCodeAt(k))) k += 1;
  if (text.charCodeAt(k) === 60 /* < */ || !isVolatileKey(text.slice(from, keyEnd))) return undefined;
  const end = valueEnd(text, k);
  // A per-call id or time has a digit: a value without one is a word (`"status": "running"`), kept.
  if (end < 0 || !hasDigit(text, k, end)) return undefined;
  const placeholder = quoted || text.charCodeAt(k) === 34 ? '"<v>"' : "<v>";
  return { end, text: text.slice(i, k) + placeholder };
}

function stickyAt(re: RegExp, text: string, i: number, placeholder: string): Hit | undefined {
  re.lastIndex = i;
  const m = re.exec(text);
  return m === null ? undefined : { end: i + m[0].length, text: placeholder };
}

/** The end of a time unit (`ms`, `s`, `seconds`, `min`, …) that starts at `u` and ends a word, or -1. */
function unitEnd(text: string, u: number): number {
  const c = text.charCodeAt(u);
  // n(s), µ(s), u(s), m(s, in), s(ec, econds)
  if (c !== 110 && c !== 181 && c !== 117 && c !== 109 && c !== 115) return -1;
  let w = u;
  while (w < text.length && w - u <= 7) {
    const c = text.charCodeAt(w);
    if (!isAlpha(c) && c !== 181 /* µ */) break;
    w += 1;
  }
  return w > u && !isAlnum(text.charCodeAt(w)) && UNITS.has(text.slice(u, w)) ? w : -1;
}

/** A duration starting at the run `[i, j)`: `0.81s`, `12 ms`, `3.2 seconds`, `12µs`, `1m23.4s`, `4h`. */
function durationAt(text: string, i: number, j: number, digits: number): Hit | undefined {
  if (digits < j - i) {
    // digits then letters: only a unit's first letter after the leading digits can start a duration
    let k = i;
    while (isDigit(text.charCodeAt(k))) k += 1;
    const u = text.charCodeAt(k);
    return u === 104 || u === 109 || u === 110 || u === 115 || u === 117
      ? stickyAt(COMPACT_DURATION, text, i, "<dur>")
      : undefined;
  }
  let k = j;
  if (text.charCodeAt(k) === 46 /* . */ && isDigit(text.charCodeAt(k + 1))) {
    k += 1;
    while (isDigit(text.charCodeAt(k))) k += 1;
    if (isAlpha(text.charCodeAt(k))) {
      // 0.81s, 2.5ms: the fraction runs into the unit
      const end = unitEnd(text, k);
      return end < 0 ? undefined : { end, text: "<dur>" };
    }
  }
  if (isSpace(text.charCodeAt(k))) k += 1;
  const end = unitEnd(text, k);
  return end < 0 ? undefined : { end, text: "<dur>" };
}

/** A volatile part that starts with the run of letters and digits `[i, j)` (`digits` of them digits), if any. */
function volatileAt(text: string, i: number, j: number, digits: number): Hit | undefined {
  const c = text.charCodeAt(i);
  const len = j - i;
  const next = text.charCodeAt(j);
  if (isAlpha(c) && (next === 58 || next === 61 || next === 95 || next === 45 || isSpace(next))) {
    const keyed = keyedValue(text, i, false);
    if (keyed !== undefined) return keyed;
  }
  if (digits === 0) {
    if ((len === 2 && text.startsWith("In", i)) || (len === 3 && text.startsWith("Out", i))) {
      COUNTER.lastIndex = j;
      const m = COUNTER.exec(text);
      return m === null ? undefined : { end: j + m[0].length, text: text.slice(i, j) + m[0].replace(/\d+/, "#") };
    }
    return len === 3 && DAYS.has(text.slice(i, j)) ? stickyAt(RFC, text, i, "<time>") : undefined;
  }
  if (c === 48 /* 0 */ && text.charCodeAt(i + 1) === 120 /* x */ && len >= 8 && isHexRun(text, i + 2, j)) {
    return { end: j, text: "0x<addr>" };
  }
  if (digits === len) {
    if (next === 45 && len === 4) return stickyAt(ISO, text, i, "<time>");
    if (next === 58 && len <= 2) return stickyAt(CLOCK, text, i, "<time>");
  }
  if (isDigit(c)) {
    const duration = durationAt(text, i, j, digits);
    // A time left (`9 minutes remaining`, `30s left`) is a countdown: data, which moves when the world does.
    if (duration !== undefined)
      return COUNTDOWN.test(text.slice(duration.end, duration.end + 12)) ? undefined : duration;
  }
  // A bare id (a commit SHA, a new reservation's number or UUID) is data: only one under an id-like key is volatile.
  return undefined;
}

/** What follows a duration that is a time left, not a time taken. */
const COUNTDOWN = /^\s*(?:remaining|left|to go)\b/;

/** Whether letters `[i, j)` can start a volatile part: a key before `:`, `=`, `_`, `-`, ` =`; `In`/`Out`; a day. */
function mayStartPart(text: string, i: number, j: number): boolean {
  const next = text.charCodeAt(j);
  if (next === 58 || next === 61 || next === 95 || next === 45) return true;
  if (next === 32 && text.charCodeAt(j + 1) === 61) return true;
  const len = j - i;
  if (len !== 2 && len !== 3) return false;
  const c = text.charCodeAt(i);
  // I(n), O(ut), M(on), T(ue|hu), W(ed), F(ri), S(at|un)
  return c === 73 || c === 79 || c === 77 || c === 84 || c === 87 || c === 70 || c === 83;
}

function hasDigit(text: string, from: number, to: number): boolean {
  for (let k = from; k < to; k += 1) if (isDigit(text.charCodeAt(k))) return true;
  return false;
}

function isHexRun(text: string, from: number, to: number): boolean {
  for (let k = from; k < to; k += 1) if (!isHex(text.charCodeAt(k))) return false;
  return to > from;
}

/**
 * The default normalizer: `text` with its volatile parts replaced by placeholders — a value with a digit under a key
 * that names a per-call id or time (`request_id`, `trace_id`, `messageId`, `runId`, `session_id`, `etag`, `nonce`,
 * `pid`, `ts`, `timestamp`, `*_at`, `createdAt`, `duration_ms`, `elapsed`, `took`, …; JSON `"key": value`, or
 * `key=value`, `key: value`), ISO 8601 and RFC 2822 dates and timestamps, clock times with seconds, durations
 * taken (`took 0.81s`, `12 ms`, `3.2 seconds`, `1m23.4s`), notebook execution counters (`Out[7]`, `In [7]`), memory
 * addresses (`0x7f…`); a kernel's `execution_count` and a `duration_seconds` under their keys too (a replayed
 * `execute_code` probe). Data stays: a time left (`9 minutes remaining`, `30s left`) and a bare id (a commit SHA, a
 * reservation's number or UUID) move when the world does. Text without a digit is returned as it is. Pure, one pass,
 * idempotent.
 *
 * @example
 * ```ts
 * normalizeResult('{"status": "running", "checked_at": "2025-01-02T10:00:03Z", "request_id": "r-81"}');
 * // '{"status": "running", "checked_at": "<v>", "request_id": "<v>"}'
 * normalizeResult("Out[7]: 42 (execution took 0.813s)"); // "Out[#]: 42 (execution took <dur>)"
 * ```
 */
export function normalizeResult(text: string): string {
  if (!DIGIT.test(text)) return text;
  const n = text.length;
  let out = "";
  let last = 0;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    let hit: Hit | undefined;
    let next = i + 1;
    if (c === 34 /* " */) {
      hit = keyedValue(text, i, true);
    } else if (isAlnum(c)) {
      let digits = isDigit(c) ? 1 : 0;
      while (next < n) {
        const kind = classOf(text.charCodeAt(next));
        if (kind === 0) break;
        if (kind === 1) digits += 1;
        next += 1;
      }
      // Most runs are plain words: only one that can start a volatile part is looked at.
      if (digits > 0 || mayStartPart(text, i, next)) hit = volatileAt(text, i, next, digits);
    }
    if (hit === undefined) {
      i = next;
      continue;
    }
    out += text.slice(last, i) + hit.text;
    last = hit.end;
    i = hit.end;
  }
  return last === 0 ? text : out + text.slice(last);
}
