/**
 * The code size limits of issue 32 (scripts/code-limits.mjs, `npm run check:limits`): no file in src/ over 700
 * lines, no function over 80 lines of code (lines holding a token: blank and comment-only lines do not count).
 */
import { describe, expect, it } from "vitest";
import { codeLimits, functionSizes, MAX_FILE_LINES, MAX_FUNCTION_LINES } from "../../scripts/code-limits.mjs";

describe("code limits", () => {
  it(`no file in src/ over ${MAX_FILE_LINES} lines, no function over ${MAX_FUNCTION_LINES} lines of code`, () => {
    expect(codeLimits()).toEqual([]);
  });

  it("counts the lines of code of every function form, not its blank or comment-only lines", () => {
    const text = [
      "/** A doc comment: not counted. */",
      "export function f(a: number): number {",
      "  // a comment",
      "",
      "  /* a block",
      "     comment */",
      '  const s = "// not a comment";',
      "  return a + s.length;",
      "}",
      "class C {",
      "  m(): void {",
      "    const g = () => {",
      "      return 1;",
      "    };",
      "  }",
      "}",
      "const h = function () {",
      "  return `a",
      "",
      "b`;",
      "};",
    ].join("\n");
    expect(functionSizes("x.ts", text)).toEqual([
      { name: "f", line: 2, loc: 4 },
      { name: "C.m", line: 11, loc: 5 },
      { name: "g", line: 12, loc: 3 },
      { name: "h", line: 17, loc: 4 },
    ]);
  });
});
