/**
 * `squeezeCommand` (issue 34, item 4): the spacing it takes out of a command line changes nothing the line runs.
 * Checked against the shell lexer (the guards' model of bash): a squeezed line lexes to the same words, separators
 * and redirections, and squeezing twice changes nothing more.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { lex, type Token } from "../../src/common/identity/shell/lexer.js";
import { squeezeCommand } from "../../src/common/identity/shell/spacing.js";

describe("squeezeCommand", () => {
  it.each([
    ["ls -la src", "ls -la src"],
    ["  ls  -la\tsrc \n", "ls -la src"],
    ["cd src &&  ls\n\n  pwd  ", "cd src && ls\npwd"],
    ['grep -n "a  b"   f.txt', 'grep -n "a  b" f.txt'],
    ["echo 'x  y'  z", "echo 'x  y' z"],
    ["echo a\\   b", "echo a\\  b"], // an escaped blank, then one that separates
    ["ls   # two  spaces  ", "ls # two  spaces"],
    ["echo a#b   c", "echo a#b c"],
    ["ls \\\n   -la", "ls \\\n -la"],
    ["echo  $'a  b'  c", "echo $'a  b' c"],
    ['echo  `echo  "a  b"`  c', 'echo `echo  "a  b"` c'],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion
    ["echo  ${HOME}  x", "echo ${HOME} x"],
  ])("%j → %j", (command, squeezed) => {
    expect(squeezeCommand(command)).toBe(squeezed);
  });

  it("keeps a heredoc's body, and what follows it, as written", () => {
    const command = "cat  > a.py <<EOF\n  if x:\n      y()  \nEOF\necho  done";
    expect(squeezeCommand(command)).toBe("cat > a.py <<EOF\n  if x:\n      y()  \nEOF\necho  done");
    expect(squeezeCommand("cat  <<< 'a  b'   x")).toBe("cat <<< 'a  b' x");
  });

  it("keeps the rest as written from a part it does not follow for sure", () => {
    // A substitution inside double quotes nests its own quotes.
    expect(squeezeCommand('echo  "$(echo "a  b")"  x')).toBe('echo "$(echo "a  b")"  x');
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion
    expect(squeezeCommand("echo  ${X:-'a  b'}  x")).toBe("echo ${X:-'a  b'}  x");
    expect(squeezeCommand("echo  'unclosed  x")).toBe("echo 'unclosed  x");
  });

  const piece = fc.constantFrom(
    "ls",
    "-la",
    "src/",
    "a.py",
    '"a  b"',
    "'c  d'",
    "x\\ y",
    "$HOME",
    '"$X"',
    "*.py",
    "|",
    "&&",
    "||",
    ";",
    ">",
    "2>&1",
    "<",
    "#c  d",
    "\\\n",
    "$'e  f'",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion
    "${Y}",
    "`pwd`",
    "a#b",
  );
  const blank = fc.constantFrom(" ", "  ", "\t", " \t ", "\n", " \n  ", "");
  const line = fc
    .array(fc.tuple(blank, piece), { maxLength: 8 })
    .chain((parts) => blank.map((end) => parts.map(([b, p]) => `${b}${p}`).join("") + end));

  /** Tokens with empty lines left out: newlines at the start, at the end or in a row separate nothing. */
  const lines = (tokens: Token[] | undefined) => {
    if (tokens === undefined) return undefined;
    const isNewline = (t: Token | undefined) => t?.kind === "sep" && t.op === "\n";
    const kept = tokens.filter((t, i) => !(isNewline(t) && (i === 0 || isNewline(tokens[i - 1]))));
    while (isNewline(kept[0])) kept.shift();
    while (isNewline(kept[kept.length - 1])) kept.pop();
    return kept;
  };

  it("a squeezed line lexes to the same tokens as the line, and squeezing it again changes nothing", () => {
    fc.assert(
      fc.property(line, (command) => {
        const squeezed = squeezeCommand(command);
        expect(squeezeCommand(squeezed)).toBe(squeezed);
        expect(lines(lex(squeezed))).toEqual(lines(lex(command)));
      }),
      { numRuns: 5_000, seed: 34 },
    );
  });
});
