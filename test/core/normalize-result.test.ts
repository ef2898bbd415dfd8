/**
 * The result normalizer (issue 34, item 1): what the rules compare two results of identical calls on. Examples of
 * every kind of volatile part, then properties: it is idempotent, it never changes a text without volatile parts,
 * and two texts that differ only in volatile parts normalize equal.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { GuardOptionsError, normalizeResult, resolveToolGuardOptions } from "../../src/core/index.js";

describe("normalizeResult: examples", () => {
  it.each([
    // keyed values (JSON and key=value / key: value)
    [
      '{"status": "running", "checked_at": "2025-01-02T10:00:03Z", "request_id": "r-81"}',
      '{"status": "running", "checked_at": "<v>", "request_id": "<v>"}',
    ],
    ['{"ok":true,"messageId":"om_7","runId":"run_7"}', '{"ok":true,"messageId":"<v>","runId":"<v>"}'],
    ['{"receipt": {"platformMessageId": "p_3"}}', '{"receipt": {"platformMessageId": "<v>"}}'],
    ["pid: 4242, trace_id=ab12 elapsed_ms=17", "pid: <v>, trace_id=<v> elapsed_ms=<v>"],
    ["x-request-id: 7a1 ok", "x-request-id: <v> ok"],
    ["createdAt=1712345678 updatedAt: 5", "createdAt=<v> updatedAt: <v>"],
    // UUIDs, timestamps, dates, clock times
    ['{"request_id": "550e8400-e29b-41d4-a716-446655440000"}', '{"request_id": "<v>"}'],
    ["at 2025-01-02T10:00:03.120+01:00 and 2025-01-02 10:00", "at <time> and <time>"],
    ["Date: Tue, 14 May 2024 10:22:01 GMT", "Date: <time>"],
    ["[12:03:44] worker started", "[<time>] worker started"],
    // durations
    ["Ran 5 tests in 0.012s\n\nOK", "Ran 5 tests in <dur>\n\nOK"],
    ["(execution took 0.813s)", "(execution took <dur>)"],
    ["took 12 ms, then 3.5 seconds", "took <dur>, then <dur>"],
    ["real\t0m0.012s", "real\t<dur>"],
    ["uptime 1h2m3s", "uptime <dur>"],
    // execution counters
    ["Out[7]: 42", "Out[#]: 42"],
    ["In [12]: x = 3", "In [#]: x = 3"],
    // addresses and long ids
    ["<Const.str l.None at 0x716c7a73f0d0>", "<Const.str l.None at 0x<addr>>"],
    // Issue 43, class 7: a bare id is data (a branch head that moved, a new reservation's number, a prefixed
    // token); only an id under an id-like key is volatile.
    ["commit 3f9a2b1c4d5e6f708192a3b4c5d6e7f8091a2b3c", "commit 3f9a2b1c4d5e6f708192a3b4c5d6e7f8091a2b3c"],
    ["req_01HXK3M9ZQ4V8T2N6P0R5S7W1Y done", "req_01HXK3M9ZQ4V8T2N6P0R5S7W1Y done"],
    ['{"request_id": "01HXK3M9ZQ4V8T2N6P0R5S7W1Y"}', '{"request_id": "<v>"}'],
    // Issue 61, item 10: a bare UUID too (a new reservation's id is a new answer).
    ["id 550e8400-e29b-41d4-a716-446655440000.", "id 550e8400-e29b-41d4-a716-446655440000."],
    [
      '{"reservation_id": "550e8400-e29b-41d4-a716-446655440000"}',
      '{"reservation_id": "550e8400-e29b-41d4-a716-446655440000"}',
    ],
    // A time left is a countdown, data; a time taken is volatile.
    ["Build queued: 9 minutes remaining", "Build queued: 9 minutes remaining"],
    ["30s left, took 0.8s", "30s left, took <dur>"],
  ])("%j → %j", (text, expected) => {
    expect(normalizeResult(text)).toBe(expected);
  });

  it.each([
    "step 3 of 10: 30%",
    "format: json, repeat=3",
    "2 sets of 3 items, 12 apples",
    "flight HAT039 departs at 06:00 from gate B12",
    "version 1.2.3 (build 4567)",
    "tests/test_models.py::TestUser::test_save_42 PASSED [ 37%]",
    "def f(x):\n    return x * 2 + 1  # item_12",
    "short hex deadbeef1 and a 15-char id abcdef123456789",
    "Total: 1234.56 USD",
    '{"id": "P1002", "user_id": "sara_doe_496", "amount": 120}',
  ])("leaves %j as it is", (text) => {
    expect(normalizeResult(text)).toBe(text);
  });

  it("returns a text without digits as it is (the same string)", () => {
    const text = 'no digits here: just words, and {"request_id": "abc"}';
    expect(normalizeResult(text)).toBe(text);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------------------------

/** Words that are no key the normalizer knows, no day, no In/Out, no time unit, no long hex. */
const WORDS = [
  "the",
  "job",
  "status",
  "running",
  "done",
  "file",
  "items",
  "error",
  "value",
  "result",
  "user",
  "order",
  "flight",
  "passed",
  "failed",
  "total",
  "price",
  "name",
  "city",
  "Paris",
  "OK",
  "TODO",
  "x",
  "y",
  "a",
];
const SEPARATORS = [" ", "\n", ", ", ". ", ": ", " (", ") ", " / ", " - ", " % ", " # ", " = "];

/** A text without volatile parts: words, numbers below 1000 and punctuation. */
const plainText = fc
  .array(
    fc.tuple(
      fc.oneof(fc.constantFrom(...WORDS), fc.integer({ min: 0, max: 999 }).map(String)),
      fc.constantFrom(...SEPARATORS),
    ),
    { maxLength: 40 },
  )
  .map((parts) => parts.map(([token, sep]) => token + sep).join(""));

const date = fc.date({
  min: new Date("2000-01-01T00:00:00Z"),
  max: new Date("2099-12-31T23:59:59Z"),
  noInvalidDate: true,
});
const two = (n: number) => String(n).padStart(2, "0");
/** Some hex or base62 characters with a digit and a letter in them. */
const idChars = (alphabet: string, min: number, max: number) =>
  fc
    .array(fc.constantFrom(...alphabet.split("")), { minLength: min - 2, maxLength: max - 2 })
    .map((chars) => `a7${chars.join("")}`);
/** The value of a keyed id: ids have a digit (a value without one is a word, kept). */
const keyValue = fc.stringMatching(/^[A-Za-z0-9_-]{0,23}$/).map((v) => `${v}7`);

/** Each kind of volatile part, drawn at random. */
const KINDS: fc.Arbitrary<string>[] = [
  fc.uuid().map((u) => `"request_id": "${u}"`),
  date.map((d) => d.toISOString()),
  date.map((d) => d.toISOString().slice(0, 10)),
  date.map((d) => d.toUTCString()),
  fc.tuple(fc.nat(23), fc.nat(59), fc.nat(59)).map(([h, m, s]) => `${two(h)}:${two(m)}:${two(s)}`),
  fc.tuple(fc.nat(99), fc.nat(999)).map(([s, ms]) => `took ${s}.${ms}s`),
  fc.nat(5000).map((ms) => `${ms} ms`),
  fc.tuple(fc.nat(9), fc.nat(59), fc.nat(999)).map(([m, s, ms]) => `${m}m${s}.${ms}s`),
  fc.nat(500).map((n) => `Out[${n}]:`),
  fc.nat(500).map((n) => `In [${n}]:`),
  idChars("0123456789abcdef", 6, 12).map((h) => `0x${h}`),
  idChars("0123456789abcdef", 16, 40).map((v) => `"trace_id": "${v}"`),
  idChars("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", 20, 32).map((v) => `request_id=${v}`),
  keyValue.map((v) => `"request_id": "${v}"`),
  keyValue.map((v) => `trace_id=${v}`),
  fc.nat(99999).map((n) => `pid: ${n}`),
];
const volatile = fc.oneof(...KINDS);

/** A hole of a template: two values of one kind. */
const hole = fc
  .nat(KINDS.length - 1)
  .chain((k) => fc.tuple(KINDS[k] as fc.Arbitrary<string>, KINDS[k] as fc.Arbitrary<string>));

/** A text of plain parts with holes between them, filled with the first or the second value of each hole. */
const twoTexts = fc
  .array(fc.tuple(plainText, hole), { minLength: 1, maxLength: 6 })
  .map((parts) => [0, 1].map((which) => parts.map(([text, pair]) => `${text} ${pair[which]} `).join("")));

describe("normalizeResult: properties", () => {
  it("is idempotent, on any text and on texts full of volatile parts", () => {
    const anyText = fc.oneof(fc.string({ maxLength: 300 }), fc.string({ unit: "binary", maxLength: 300 }));
    const mixed = fc.array(fc.oneof(plainText, volatile), { maxLength: 12 }).map((xs) => xs.join(" "));
    fc.assert(
      fc.property(fc.oneof(anyText, mixed), (text) => {
        const once = normalizeResult(text);
        expect(normalizeResult(once)).toBe(once);
      }),
      { numRuns: 2000 },
    );
  });

  it("never changes a text without volatile parts", () => {
    fc.assert(
      fc.property(plainText, (text) => {
        expect(normalizeResult(text)).toBe(text);
      }),
      { numRuns: 2000 },
    );
  });

  it("makes two texts that differ only in volatile parts equal", () => {
    fc.assert(
      fc.property(twoTexts, ([a, b]) => {
        expect(normalizeResult(a as string)).toBe(normalizeResult(b as string));
      }),
      { numRuns: 2000 },
    );
  });
});

describe("normalizeResult: the options", () => {
  it("rules.normalizeResult and tools.<name>.normalizeResult take true, false or a function, nothing else", () => {
    const fn = (text: string) => text;
    expect(resolveToolGuardOptions().rules.normalizeResult).toBe(true);
    expect(resolveToolGuardOptions({ rules: { normalizeResult: false } }).rules.normalizeResult).toBe(false);
    expect(resolveToolGuardOptions({ rules: { normalizeResult: fn } }).rules.normalizeResult).toBe(fn);
    expect(resolveToolGuardOptions({ tools: { t: { normalizeResult: fn } } }).tools.t?.normalizeResult).toBe(fn);
    for (const bad of [{ rules: { normalizeResult: "yes" } }, { tools: { t: { normalizeResult: 1 } } }]) {
      expect(() => resolveToolGuardOptions(bad as never)).toThrow(GuardOptionsError);
      expect(() => resolveToolGuardOptions(bad as never)).toThrow(
        /normalizeResult: expected true, false or a function/,
      );
    }
  });
});
