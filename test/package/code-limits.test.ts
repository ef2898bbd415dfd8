/**
 * The code size limits of issue 32 (scripts/code-limits.mjs, `npm run check:limits`): no file in src/ over 700
 * lines, no function over 80 lines of code (lines holding a token: blank and comment-only lines do not count).
 */

import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  ADAPTER_LIMITS,
  codeLimits,
  fileLinesOfCode,
  functionSizes,
  MAX_FILE_LINES,
  MAX_FUNCTION_LINES,
} from "../../scripts/code-limits.mjs";

describe("code limits", () => {
  it(`no file in src/ over ${MAX_FILE_LINES} lines, no function over ${MAX_FUNCTION_LINES} lines of code`, () => {
    expect(codeLimits()).toEqual([]);
  });

  it("the adapters it holds to their lines of code exist (a renamed one would escape the check)", () => {
    const root = join(import.meta.dirname, "..", "..");
    expect(Object.keys(ADAPTER_LIMITS).filter((file) => !existsSync(join(root, file)))).toEqual([]);
    expect(fileLinesOfCode("x.ts", "/** doc */\nconst a = 1;\n\n// note\nexport { a };\n")).toBe(2);
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
