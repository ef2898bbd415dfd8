/**
 * Issue 45, item 7: a limit's question is answered as a person writes it. "Yes", "y", "OK", "go on" go on with the
 * amount offered; "No", "stop" end the run; a number (or "20 more") goes on with that much, in the unit the question
 * names (minutes for runtime, dollars for cost); an answer that reads as none of these is asked again.
 */
import { describe, expect, it } from "vitest";
import { readLimitAnswer } from "../../src/loop/limit-ask.js";

describe("readLimitAnswer", () => {
  it.each([
    true,
    "yes",
    "Yes",
    "YES",
    "y",
    "Y",
    "yes.",
    "Yes!",
    "ok",
    "OK",
    "okay",
    "sure",
    "go on",
    "Go ahead.",
    "continue",
    " yes ",
  ])("%j goes on with the amount offered", (answer) => {
    expect(readLimitAnswer(answer, "iterations", 10)).toEqual({ more: 10 });
  });

  it.each([
    false,
    null,
    undefined,
    "no",
    "No",
    "n",
    "N",
    "no.",
    "nope",
    "stop",
    "Stop!",
    "end",
    "cancel",
    { more: 0 },
    0,
  ])("%j ends the run", (answer) => {
    expect(readLimitAnswer(answer, "iterations", 10)).toBe("end");
  });

  it("a number, or { more }, goes on with that much, in the question's unit", () => {
    expect(readLimitAnswer({ more: 3 }, "iterations", 10)).toEqual({ more: 3 });
    expect(readLimitAnswer(4, "iterations", 10)).toEqual({ more: 4 });
    expect(readLimitAnswer("20", "iterations", 10)).toEqual({ more: 20 });
    expect(readLimitAnswer("20 more", "tokens", 10)).toEqual({ more: 20 });
    expect(readLimitAnswer("5 more minutes", "runtime", 60_000)).toEqual({ more: 300_000 });
    expect(readLimitAnswer("$0.50", "cost", 1)).toEqual({ more: 0.5 });
    expect(readLimitAnswer("yes, 3 more", "iterations", 10)).toEqual({ more: 3 });
  });

  it.each(["maybe", "", "what does that mean?", "yes no", { answer: "yes" }, [], "-3", "3 more hours"])(
    "%j is not read: the question is asked again",
    (answer) => {
      expect(readLimitAnswer(answer, "runtime", 60_000)).toBe("unclear");
    },
  );
});
