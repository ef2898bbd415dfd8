/**
 * The tool a model probably meant by a name that is not a tool (`suggestToolNames`), and the answer that says so
 * (`unknownToolText`): examples, then fast-check properties over random tool lists and names.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  MAX_SUGGESTIONS,
  nearestToolNames,
  suggestToolNames,
  toolNameKey,
} from "../../src/common/identity/tool-names.js";
import { MAX_LISTED_TOOLS, unknownToolText } from "../../src/tool-calls/core/texts.js";

const TOOLS = ["read_file", "list_files", "write_to_file", "execute_command", "grep"];

describe("suggestToolNames: examples", () => {
  it.each([
    ["read-file", ["read_file"]],
    ["readFile", ["read_file"]],
    ["READ_FILE", ["read_file"]],
    ["read file", ["read_file"]],
    ["ReadFile", ["read_file"]],
    ["raed_file", ["read_file"]], // two letters swapped: 1
    ["read_fil", ["read_file"]], // a letter missing: 1
    ["reed_fiel", ["read_file"]], // 2 edits, 8 letters
    ["list_file", ["list_files"]],
    ["executeCommands", ["execute_command"]],
    ["GREP", ["grep"]], // a short name: its case and separators only
    ["grap", []], // a short name one letter off: another word as often as a typo
    ["fetch_url", []],
    ["read", []],
    ["read_file", []], // a tool
    ["", []],
    ["___", []],
  ])("%j → %j", (name, expected) => {
    expect(suggestToolNames(name, TOOLS)).toEqual(expected);
  });

  it("five letters allow one edit, six two; the nearest win, ties all named", () => {
    expect(suggestToolNames("wrote", ["write"])).toEqual(["write"]);
    expect(suggestToolNames("wrate", ["write", "wrote"])).toEqual(["write", "wrote"]);
    expect(suggestToolNames("wraet", ["write"])).toEqual([]);
    expect(suggestToolNames("serach", ["search", "starch"])).toEqual(["search"]);
    expect(suggestToolNames("serch_web", ["search_web", "search_new"])).toEqual(["search_web"]);
  });

  it("an ambiguous spelling names every tool it may be", () => {
    expect(suggestToolNames("Read-File", ["read_file", "readFile", "list_files"])).toEqual(["read_file", "readFile"]);
  });
});

describe("unknownToolText", () => {
  it("names the tool probably meant and every tool", () => {
    expect(unknownToolText("read-file", ["read_file", "list_files"])).toBe(
      "Error: read-file is not a valid tool. Did you mean read_file? Available tools: read_file, list_files.",
    );
    expect(unknownToolText("fetch", ["read_file", "list_files"])).toBe(
      "Error: fetch is not a valid tool. Available tools: read_file, list_files.",
    );
    expect(unknownToolText("Read-File", ["read_file", "readFile"])).toBe(
      "Error: Read-File is not a valid tool. Did you mean one of read_file, readFile? Available tools: read_file, readFile.",
    );
    expect(unknownToolText("x", [])).toBe("Error: x is not a valid tool. There are no tools.");
  });

  it("with more than 30 tools, names the nearest ten and the count", () => {
    const many = Array.from({ length: 40 }, (_, i) => `tool_${String(i).padStart(2, "0")}`).concat("read_file");
    const text = unknownToolText("readFile", many);
    expect(text).toMatch(
      /^Error: readFile is not a valid tool\. Did you mean read_file\? The nearest of the 41 tools: /,
    );
    const named = (text.split("tools: ")[1] as string).replace(/\.$/, "").split(", ");
    expect(named).toHaveLength(10);
    expect(named[0]).toBe("read_file");
    expect(named.every((n) => many.includes(n))).toBe(true);
  });

  it("does not depend on anything but the name and the tools (the same error for every call)", () => {
    expect(unknownToolText("read-file", TOOLS)).toBe(unknownToolText("read-file", [...TOOLS]));
  });
});

/** A tool name as an API allows it: words of letters and digits joined by `_` or `-`. */
const word = fc.stringMatching(/^[a-z][a-z0-9]{0,7}$/);
const words = fc.array(word, { minLength: 1, maxLength: 4 });
const sep = fc.constantFrom("_", "-", "", " ", ".");
const spell = (ws: readonly string[], s: string, caps: readonly boolean[]) =>
  ws
    .map((w, i) => (caps[i % caps.length] ? w.toUpperCase() : i > 0 && s === "" ? w[0]?.toUpperCase() + w.slice(1) : w))
    .join(s);
const spelling = (ws: readonly string[]) =>
  fc.tuple(sep, fc.array(fc.boolean(), { minLength: 1, maxLength: 4 })).map(([s, caps]) => spell(ws, s, caps));
const toolName = words.map((ws) => ws.join("_"));
const toolList = fc.uniqueArray(toolName, { minLength: 1, maxLength: 12 });

describe("suggestToolNames: properties", () => {
  it("never suggests a name that is not a tool, never twice, at most three", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), fc.array(fc.string({ maxLength: 20 }), { maxLength: 10 }), (n, ts) => {
        const got = suggestToolNames(n, ts);
        expect(got.every((t) => ts.includes(t))).toBe(true);
        expect(new Set(got).size).toBe(got.length);
        expect(got.length).toBeLessThanOrEqual(MAX_SUGGESTIONS);
      }),
      { numRuns: 2000 },
    );
  });

  it("an exact tool name is never unknown", () => {
    fc.assert(
      fc.property(toolList, fc.nat(), (ts, i) => {
        expect(suggestToolNames(ts[i % ts.length] as string, ts)).toEqual([]);
      }),
    );
  });

  it("a case or separator variant of one tool maps to that tool when no other tool has its spelling", () => {
    fc.assert(
      fc.property(
        toolList,
        fc.nat(),
        words.chain((ws) => fc.tuple(fc.constant(ws), spelling(ws))),
        (others, i, [ws, variant]) => {
          const tool = ws.join(i % 2 === 0 ? "_" : "-");
          const ts = [...others.filter((t) => toolNameKey(t) !== toolNameKey(tool)), tool];
          fc.pre(!ts.includes(variant));
          expect(suggestToolNames(variant, ts)).toEqual([tool]);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("an ambiguous variant (two tools of one spelling) names both", () => {
    fc.assert(
      fc.property(
        words.filter((ws) => ws.length > 1),
        toolList,
        fc.constantFrom("-", " ", "."),
        (ws, others, s) => {
          const [snake, camel] = [ws.join("_"), spell(ws, "", [false])];
          const ts = [snake, ...others.filter((t) => toolNameKey(t) !== toolNameKey(snake)), camel];
          const variant = ws.join(s).toUpperCase();
          expect(suggestToolNames(variant, ts)).toEqual([snake, camel]);
        },
      ),
    );
  });

  it("one typo (a letter replaced, missing, added or two swapped) in a key of 6 or more letters finds the tool", () => {
    const letter = fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz");
    fc.assert(
      fc.property(
        fc.stringMatching(/^[a-z]{6,16}$/),
        fc.nat(),
        letter,
        fc.constantFrom("replace", "delete", "insert", "swap"),
        toolList,
        (tool, at, c, edit, others) => {
          const i = at % (tool.length - 1);
          const typo =
            edit === "replace"
              ? tool.slice(0, i) + c + tool.slice(i + 1)
              : edit === "delete"
                ? tool.slice(0, i) + tool.slice(i + 1)
                : edit === "insert"
                  ? tool.slice(0, i) + c + tool.slice(i)
                  : tool.slice(0, i) + tool[i + 1] + tool[i] + tool.slice(i + 2);
          const ts = [...others, tool];
          fc.pre(!ts.some((t) => toolNameKey(t) === toolNameKey(typo)));
          expect(suggestToolNames(typo, ts)).toContain(tool);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("a short name (key under 5 characters) gets only the tools of its own spelling", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-zA-Z_-]{0,6}$/), toolList, (name, ts) => {
        fc.pre(toolNameKey(name).length < 5);
        const same = ts.filter((t) => toolNameKey(t) === toolNameKey(name));
        expect(suggestToolNames(name, ts)).toEqual(ts.includes(name) ? [] : same.slice(0, MAX_SUGGESTIONS));
      }),
    );
  });
});

describe("nearestToolNames and the answer: properties", () => {
  it("the nearest are tools, the suggestions first; the answer names every tool up to 30, else the count", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 20 }), fc.uniqueArray(toolName, { maxLength: 45 }), fc.nat(12), (n, ts, k) => {
        const nearest = nearestToolNames(n, ts, k);
        expect(nearest.length).toBe(Math.min(k, ts.length));
        expect(nearest.every((t) => ts.includes(t))).toBe(true);
        const meant = suggestToolNames(n, ts);
        expect(nearest).toEqual([...meant, ...nearest.slice(meant.length)].slice(0, nearest.length));
        const text = unknownToolText(n, ts);
        if (ts.length > 0 && ts.length <= MAX_LISTED_TOOLS)
          expect(text).toContain(`Available tools: ${ts.join(", ")}.`);
        if (ts.length > MAX_LISTED_TOOLS) expect(text).toContain(`of the ${ts.length} tools`);
        expect(text.includes("Did you mean")).toBe(meant.length > 0);
      }),
      { numRuns: 500 },
    );
  });
});
