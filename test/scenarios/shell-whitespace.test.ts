/**
 * Shell commands that differ only by whitespace outside quotes are one call (issue 34, item 4). A model re-issuing
 * `ls -la src` as `ls -la src ` or `ls  -la src` made a new call each time, so the repetition rules never saw the
 * loop. Now the command of a shell tool the identity code recognises (`bash`, `execute_command`, …) is compared with
 * runs of blanks outside quotes squeezed, and blanks at the ends of its lines dropped; quoted whitespace, and a
 * heredoc's body, still count. Each scenario runs through every adapter (support.ts).
 */
import { describe, expect, it } from "vitest";
import { callIdentity } from "../../src/common/identity/classify.js";
import { ADAPTERS, type Adapter, runScenario, same, step } from "./support.js";

const PADDED = ["ls -la src", "ls -la src ", "ls  -la src", "ls -la\tsrc", " ls -la  src\n", "ls   -la src"];

const keyOf = (tool: string, command: string) => callIdentity(tool, { command }).key;

describe("the identity of a padded command", () => {
  it("is the identity of the command as written once", () => {
    for (const command of PADDED)
      expect(keyOf("bash", command), JSON.stringify(command)).toBe(keyOf("bash", PADDED[0]!));
    expect(keyOf("execute_command", "npm   test ")).toBe(keyOf("execute_command", "npm test"));
  });

  it("keeps whitespace inside quotes, escaped blanks and heredoc bodies", () => {
    expect(keyOf("bash", 'grep -n "a  b" f.txt')).not.toBe(keyOf("bash", 'grep -n "a b" f.txt'));
    expect(keyOf("bash", "grep -n 'a  b' f.txt")).not.toBe(keyOf("bash", "grep -n 'a b' f.txt"));
    expect(keyOf("bash", "echo a\\  b")).not.toBe(keyOf("bash", "echo a\\ b"));
    const heredoc = (body: string) => `cat > a.py <<EOF\n${body}\nEOF`;
    expect(keyOf("bash", heredoc("if x:\n    y()"))).not.toBe(keyOf("bash", heredoc("if x:\n  y()")));
    // Separators are not touched: `a|b` and `a | b` stay two calls (only runs of blanks are squeezed).
    expect(keyOf("bash", "ls|wc -l")).not.toBe(keyOf("bash", "ls | wc -l"));
  });

  it("is only squeezed for shell tools: another tool's string arguments are compared as written", () => {
    expect(keyOf("search_docs", "a  b")).not.toBe(keyOf("search_docs", "a b"));
  });
});

describe.each(ADAPTERS)("padded shell commands through %s", (adapter: Adapter) => {
  it("`ls -la src` re-issued with padding is blocked as a repeat by the 4th call, as the identical command is", async () => {
    const tools = [same("bash", "total 8\ndrwxr-xr-x 2 u u 4096 app.py")];
    const padded = await runScenario(
      adapter,
      tools,
      PADDED.slice(0, 4).map((command) => step("bash", { command })),
    );
    const identical = await runScenario(
      adapter,
      tools,
      PADDED.slice(0, 4).map(() => step("bash", { command: "ls -la src" })),
    );
    expect(padded.outcomes).toEqual(identical.outcomes);
    const firstBlock = padded.outcomes.findIndex((o) => o !== "ran");
    expect(firstBlock).toBeGreaterThanOrEqual(0);
    expect(firstBlock).toBeLessThan(4); // the limit: blocked by the 4th
  });

  it("a padded command that changes things (`python  fix.py`) is judged by its results, as the identical one", async () => {
    const tools = [same("execute_command", "Traceback: NameError: name 'x' is not defined")];
    const commands = ["python fix.py", "python  fix.py", "python fix.py ", " python fix.py"];
    const padded = await runScenario(
      adapter,
      tools,
      commands.map((command) => step("execute_command", { command })),
    );
    // Two runs answer the same: the 3rd is a consecutive repeat, before the 4th.
    expect(padded.outcomes.slice(0, 3)).toEqual(["ran", "ran", "consecutive@1"]);
  });
});
