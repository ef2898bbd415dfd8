/**
 * What a read-only shell line reads (`commandPaths(…).reads`, src/common/identity/shell/line.ts): every row of SHELL_READS has cases (its
 * operands, its options that name files, what it reads with no operand, what makes its reads unknown), plus `cd`,
 * pipelines and lists, globs, redirections and what is beyond the model. Properties: every file a generated line of
 * readers names is among the reads (equal to or below a returned path), the working folder is not, and a line with
 * known reads is read-only.
 */
import { posix } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { commandPaths, isReadOnlyCommand, SHELL_COMMANDS, SHELL_READS } from "../../src/common/identity/shell/index.js";

const readPaths = (line: string, cwd: string | null) => commandPaths(line, cwd).reads;

const ROOT = "/r";

/** The ignore files a searcher reads above `path` (`rg src` reads `/r/.gitignore` and `/.gitignore`). */
function ignores(path: string, names: string[]): string[] {
  const out: string[] = [];
  for (let dir = posix.dirname(path); ; dir = posix.dirname(dir)) {
    out.push(...names.map((n) => posix.join(dir, n)));
    if (dir === "/") return out;
  }
}
const RG = [".gitignore", ".ignore", ".rgignore", ".git/info/exclude"];
const AG = [".gitignore", ".ignore", ".agignore", ".hgignore", ".git/info/exclude"];
const TREE = [".gitignore", ".git/info/exclude"];
const searched = (names: string[], ...paths: string[]) => [...new Set(paths.flatMap((p) => [p, ...ignores(p, names)]))];

/** A case: the line, the paths it reads in ROOT (`undefined`: not known). */
type Case = [command: string, reads: string[] | undefined];

/** Per command of SHELL_READS: lines of it and what they read. */
const CASES: Record<string, Case[]> = {
  cat: [
    ["cat a.txt", ["/r/a.txt"]],
    ["cat -n a.txt ../b.txt /etc/hosts", ["/r/a.txt", "/b.txt", "/etc/hosts"]],
    ["cat ./src//x.py", ["/r/src/x.py"]],
    ["cat - a.txt", ["/r/a.txt"]],
    ["cat", []],
    ["cat -- -n", ["/r/-n"]],
  ],
  readlink: [["readlink -f link", ["/r/link"]]],
  head: [
    ["head -n 5 a.txt", ["/r/a.txt"]],
    ["head -5 a.txt b.txt", ["/r/a.txt", "/r/b.txt"]],
    ["head --lines=5 a.txt", ["/r/a.txt"]],
    ["head -c20 a.txt", ["/r/a.txt"]],
    ["head -n5 a.txt", ["/r/a.txt"]],
  ],
  tail: [
    ["tail -n 20 -f log.txt", ["/r/log.txt"]], // -f is a flag
    ["tail --follow=name -s 2 log.txt", ["/r/log.txt"]],
  ],
  wc: [
    ["wc -l a.txt b.txt", ["/r/a.txt", "/r/b.txt"]],
    ["wc --files0-from=list", undefined], // the files listed in `list`
  ],
  nl: [["nl -ba -w 3 a.txt", ["/r/a.txt"]]],
  cut: [
    ["cut -d, -f1,2 data.csv", ["/r/data.csv"]],
    ["cut -f 2 -d ' ' a.txt", ["/r/a.txt"]],
  ],
  column: [["column -t -s , data.csv", ["/r/data.csv"]]],
  more: [["more -n 10 a.txt", ["/r/a.txt"]]],
  od: [["od -A x -t x1z -w16 a.bin", ["/r/a.bin"]]],
  hexdump: [
    ["hexdump -C -n 64 a.bin", ["/r/a.bin"]],
    ["hexdump -f fmt.txt a.bin", ["/r/fmt.txt", "/r/a.bin"]],
  ],
  strings: [
    ["strings -n 8 a.bin", ["/r/a.bin"]],
    ["strings @opts a.bin", undefined], // options from a file
  ],
  md5sum: [
    ["md5sum a b", ["/r/a", "/r/b"]],
    ["md5sum -c sums.md5", undefined], // the files listed in sums.md5
  ],
  sha1sum: [
    ["sha1sum a", ["/r/a"]],
    ["sha1sum --check sums", undefined],
  ],
  sha256sum: [
    ["sha256sum a", ["/r/a"]],
    ["sha256sum -c sums", undefined],
  ],
  cmp: [["cmp -n 10 a b", ["/r/a", "/r/b"]]],
  diff: [
    ["diff -u a.py b.py", ["/r/a.py", "/r/b.py"]],
    ["diff -r -x '*.pyc' dirA dirB", ["/r/dirA", "/r/dirB"]],
    ["diff -X ignore.txt -r a b", ["/r/ignore.txt", "/r/a", "/r/b"]],
    ["diff --from-file=base.txt x y", ["/r/base.txt", "/r/x", "/r/y"]],
    ["diff -U 3 a b", ["/r/a", "/r/b"]],
    ["diff --exclude-f=ex a b", ["/r/ex", "/r/a", "/r/b"]], // an abbreviation of --exclude-from
  ],
  stat: [["stat -c %s a.txt", ["/r/a.txt"]]],
  realpath: [["realpath --relative-to=/base x", ["/base", "/r/x"]]],
  du: [
    ["du -sh src", ["/r/src"]],
    ["du -sh", ["/r"]],
    ["du -d 1 -X ex.txt src", ["/r/ex.txt", "/r/src"]],
    ["du --files0-from=f", undefined],
  ],
  ls: [
    ["ls", ["/r"]],
    ["ls -la src tests", ["/r/src", "/r/tests"]],
    ["ls -I '*.pyc' src", ["/r/src"]],
    ["ls --color=auto -d .", ["/r"]],
    ["ls /", ["/"]],
  ],
  ll: [["ll src", ["/r/src"]]],
  tree: [
    ["tree -L 2 src", searched(TREE, "/r/src")],
    ["tree", searched(TREE, "/r")],
    ["tree -I node_modules -a", searched(TREE, "/r")],
  ],
  file: [
    ["file -b a.bin", ["/r/a.bin"]],
    ["file -f list.txt", undefined],
  ],
  less: [
    ["less -N a.txt", ["/r/a.txt"]],
    ["less -k keys a.txt", ["/r/keys", "/r/a.txt"]],
    ["less -t main", undefined], // the tags file and the file it names
  ],
  sort: [
    ["sort -k2 -t, -u in.txt", ["/r/in.txt"]],
    ["sort -rn in.txt | head", ["/r/in.txt"]],
    ["sort -o /dev/null in.txt", ["/r/in.txt"]],
    ["sort --random-source=seed in.txt", ["/r/seed", "/r/in.txt"]],
    ["sort --files0-from=f", undefined],
  ],
  uniq: [
    ["uniq -c -f 1 in.txt", ["/r/in.txt"]],
    ["sort a | uniq -c", ["/r/a"]],
  ],
  xxd: [
    ["xxd -c 8 -s 0x10 in.bin", ["/r/in.bin"]],
    ["xxd -c8 in.bin | head", ["/r/in.bin"]],
  ],
  sed: [
    ["sed -n '10,40p' a.txt", ["/r/a.txt"]],
    ["sed -n -e 1p -e '$p' a.txt b.txt", ["/r/a.txt", "/r/b.txt"]],
    ["sed --expression=p -n a.txt", ["/r/a.txt"]],
    ["sed -ne p a.txt", ["/r/a.txt"]],
    ["sed 'r other.txt' a.txt", ["/r/a.txt", "/r/other.txt"]],
    ["sed -n '1R lines.txt' a.txt", ["/r/a.txt", "/r/lines.txt"]],
    ["sed -n 'w /dev/stdout' a.txt", ["/r/a.txt"]],
    ["sed -n 1p", []],
    ["sed -i s/a/b/ a.txt", undefined], // it writes
  ],
  grep: [
    ["grep -n TODO a.py b.py", ["/r/a.py", "/r/b.py"]],
    ["grep -rn TODO src", ["/r/src"]],
    ["grep -rn TODO", ["/r"]],
    ["grep -R TODO", ["/r"]],
    ["grep --recursive TODO", ["/r"]],
    ["grep -d recurse TODO", ["/r"]],
    ["grep -d skip TODO", []],
    ["grep TODO", []],
    ["cat a | grep -r x", ["/r/a", "/r"]], // grep -r without a file searches the working folder, piped or not
    ["grep . a.txt", ["/r/a.txt"]], // the pattern is no path
    ["grep -e foo -e bar a.txt", ["/r/a.txt"]],
    ["grep -f pats.txt a.txt", ["/r/pats.txt", "/r/a.txt"]],
    ["grep -fpats.txt a.txt", ["/r/pats.txt", "/r/a.txt"]],
    ["grep -vf pats.txt a.txt", ["/r/pats.txt", "/r/a.txt"]],
    ["grep --file=pats.txt -r src", ["/r/pats.txt", "/r/src"]],
    ["grep -r --exclude-from=ex.txt x src", ["/r/ex.txt", "/r/src"]],
    ["grep --exclude-dir=.git -rl x .", ["/r"]],
    ["grep -A 3 -B2 x a.txt", ["/r/a.txt"]],
    ["grep -- -x- a.txt", ["/r/a.txt"]],
    ["grep -c x - < in.txt", ["/r/in.txt"]],
    ["grep --unknown-option=/etc/x y a.txt", ["/etc/x", "/r/a.txt"]], // an option it may not know may name a file
  ],
  egrep: [["egrep 'a|b' a.txt", ["/r/a.txt"]]],
  fgrep: [["fgrep -x a a.txt", ["/r/a.txt"]]],
  rg: [
    ["rg -n TODO src", searched(RG, "/r/src")],
    ["rg TODO", searched(RG, "/r")],
    ["cat a | rg x", ["/r/a"]], // its standard input
    ["rg x < in.txt", ["/r/in.txt"]],
    ["rg -e foo -g '*.py' src", searched(RG, "/r/src")],
    ["rg --files src", searched(RG, "/r/src")],
    ["rg -f pats.txt", searched(RG, "/r/pats.txt", "/r")],
    ["rg -r x foo a.txt", searched(RG, "/r/a.txt")], // -r is --replace
    ["rg --ignore-file=.myignore x src", searched(RG, "/r/.myignore", "/r/src")],
    ["rg --hostname-bin=./h x", undefined],
  ],
  ag: [
    ["ag TODO src", searched(AG, "/r/src")],
    ["ag -g '\\.py$'", searched(AG, "/r")],
    ["ag -p .agignore x src", searched(AG, "/r/.agignore", "/r/src")],
  ],
  find: [
    ["find . -name '*.py'", ["/r"]],
    ["find", ["/r"]],
    ["find -name x", ["/r"]],
    ["find src tests -type f", ["/r/src", "/r/tests"]],
    ["find -L src -maxdepth 2", ["/r/src"]],
    ["find src -newer a.txt", ["/r/src", "/r/a.txt"]],
    ["find src -samefile /etc/x", ["/r/src", "/etc/x"]],
    ["find src -newermm ref -print", ["/r/src", "/r/ref"]],
    ["find . -files0-from list", undefined],
    ["find . -name '*.pyc' -delete", undefined], // it writes
    ["find . -exec cat {} \\;", undefined],
  ],
  echo: [
    ["echo hello > /dev/null", []],
    ["echo --x=/etc/y", []],
  ],
  printf: [["printf '%s\\n' a b", []]],
  pwd: [["pwd", []]],
  true: [["true", []]],
  basename: [["basename /a/b.txt .txt", []]],
  dirname: [["dirname a/b", []]],
  tr: [
    ["tr a-z A-Z < in.txt", ["/r/in.txt"]],
    ["cat a | tr -d x", ["/r/a"]],
  ],
  tee: [
    ["ls | tee", ["/r"]],
    ["ls | tee /dev/null", ["/r"]],
    ["ls | tee out.txt", undefined], // it writes
  ],
  cd: [
    ["cd sub && cat a", ["/r/sub/a"]],
    ["cd sub", ["/r/sub"]], // whether sub exists
    ["cd /tmp && pwd", ["/tmp"]],
    ["cd sub; cat a", ["/r/sub/a", "/r/a"]], // if cd fails, cat runs in /r
    ["cd sub || cat a", ["/r/a", "/r/sub"]],
    ["cd sub | cat a", ["/r/a", "/r/sub"]], // a pipeline runs each command in a subshell
    ["cd .. && ls", ["/"]],
    ["cd a && cd ../b && cat x", ["/r/b/x", "/r/a"]],
    ["cd -P sub && grep -rn x", ["/r/sub"]],
    ["cd && ls", undefined], // $HOME
    ["cd - && ls", undefined],
    ["cd $D && ls", undefined],
    ["cd ~/x && ls", undefined],
    ["cd a* && ls", undefined],
  ],
};

/** Lines of several commands: separators, globs, redirections, what is beyond the model. */
const LINES: Case[] = [
  // Pipelines and lists.
  ["cat a | grep x | sort | uniq -c | head", ["/r/a"]],
  ["cat a && cat b || cat c; cat d\ncat e", ["/r/a", "/r/b", "/r/c", "/r/d", "/r/e"]],
  ["ls -la src && grep -rn TODO src | head -20", ["/r/src"]],
  ["sed -n '10,40p' src/app.py | grep -n TODO", ["/r/src/app.py"]],
  ["cat a |& grep x", ["/r/a"]],
  ["ls |\nsort", ["/r"]],
  // Globs: the folder they list.
  ["cat src/*.py", ["/r/src"]],
  ["cat *.py", ["/r"]],
  ["ls src/**/*.ts", ["/r/src"]],
  ["cat /etc/*.conf", ["/etc"]],
  ["head src/a*/x.py", ["/r/src"]],
  ["cat src/*/../x", ["/r"]], // `..` after the pattern climbs
  ["cat .*", ["/"]], // `.*` may be `..`
  ["cat .env*", ["/r"]],
  ["cat src/{a,b}.py", ["/r/src"]],
  ["cat 'src/*.py'", ["/r/src/*.py"]], // quoted: no glob
  ["echo *", ["/r"]], // the words it prints are the working folder's names
  ["grep foo *.py", ["/r", "/r/foo"]], // a glob may become options: the pattern may then be a file
  ["grep -r --include=*.py foo src", ["/r", "/r/src", "/r/foo"]], // the shell expands --include=*.py in /r
  ["grep -rn x src --include='*.py'", ["/r/src"]],
  // Redirections.
  ["sort < in.txt", ["/r/in.txt"]],
  ["cat 0< in.txt", ["/r/in.txt"]],
  ["cat < src/*.txt", ["/r/src"]],
  ["cat < /dev/null", []],
  ["cat <<EOF\nsome text\nEOF", []],
  ["grep x <<< 'a x b'", []],
  ["grep x a 2>/dev/null", ["/r/a"]],
  ["grep x a > /dev/null 2>&1", ["/r/a"]],
  ["cat <&0", []],
  ["< in.txt", ["/r/in.txt"]],
  ["cat /dev/null /dev/stdin a", ["/r/a"]],
  // Program spellings and settings.
  ["/usr/bin/cat a", ["/r/a"]],
  ["\\cat a", ["/r/a"]],
  ["LC_ALL=C sort a", ["/r/a"]],
  // Words only known when the shell runs.
  ["cat $X", undefined],
  ['cat "$X"', undefined],
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion
  ["cat ${X}/a", undefined],
  ["cat ~/a", undefined],
  ["grep $P a.txt", undefined],
  ['find . -name "$PATTERN"', undefined],
  ["cat a; echo $HOME", undefined],
  // Commands whose reads are not named on the line.
  ["git status", undefined],
  ["git diff HEAD -- src", undefined],
  ["git grep -n x", undefined],
  ["git -C sub log", undefined],
  ["cat a && git log", undefined],
  ["which python", undefined],
  ["type ls", undefined],
  ["whereis ls", undefined],
  // Lines that are not read-only.
  ["rm a", undefined],
  ["cat a > b", undefined],
  ["python x.py", undefined],
  ["cat $(ls)", undefined],
  ["(cat a)", undefined],
  ["cat a &", undefined],
  ["", undefined],
  ["./cat a", undefined],
];

const sorted = (paths: string[] | undefined) => (paths === undefined ? undefined : [...paths].sort());

/** Whether `path` is equal to or below `folder`. */
const within = (path: string, folder: string) =>
  path === folder || path.startsWith(folder === "/" ? "/" : `${folder}/`);

describe("readPaths: one set of cases per row of SHELL_READS", () => {
  it("every read-only row of SHELL_COMMANDS has a row in SHELL_READS, but git and the $PATH readers", () => {
    const missing = SHELL_COMMANDS.filter((row) => row.readOnly && !Object.hasOwn(SHELL_READS, row.command)).map(
      (row) => row.command,
    );
    expect(missing.filter((c) => !c.startsWith("git "))).toEqual(["which", "type", "whereis"]);
    for (const command of Object.keys(SHELL_READS)) {
      expect(SHELL_COMMANDS.find((row) => row.command === command)?.readOnly, command).toBe(true);
    }
  });

  it("every row of SHELL_READS has cases, every case names a row", () => {
    expect(Object.keys(CASES).sort()).toEqual(Object.keys(SHELL_READS).sort());
  });

  for (const [command, cases] of Object.entries(CASES)) {
    describe(command, () => {
      it.each(cases)("%j reads %j", (line, reads) => {
        expect(sorted(readPaths(line, ROOT))).toEqual(sorted(reads));
        if (reads !== undefined) expect(isReadOnlyCommand(line)).toBe(true);
      });
    });
  }
});

describe("readPaths: lines", () => {
  it.each(LINES)("%j reads %j", (line, reads) => {
    expect(sorted(readPaths(line, ROOT))).toEqual(sorted(reads));
  });

  it("resolves against the working folder given, normalized", () => {
    expect(readPaths("cat a.txt ../b", "/repo/x/")).toEqual(["/repo/x/a.txt", "/repo/b"]);
    expect(readPaths("cat a.txt", "/repo/./x/..")).toEqual(["/repo/a.txt"]);
  });

  it("with the working folder unknown: absolute paths only", () => {
    expect(readPaths("cat /abs/a.txt", null)).toEqual(["/abs/a.txt"]);
    expect(readPaths("cat /abs/a.txt < /abs/in", null)).toEqual(["/abs/in", "/abs/a.txt"]);
    expect(readPaths("cd /abs && cat a", null)).toEqual(["/abs/a"]);
    expect(readPaths("find /abs -name x", null)).toEqual(["/abs"]);
    expect(readPaths("echo hi", null)).toEqual([]);
    for (const line of [
      "cat a.txt",
      "ls",
      "grep -r x",
      "find -name x",
      "cat /abs/a < in",
      "cd sub && cat /abs/a",
      "cd /abs || cat a",
      "cat *.py",
      "cat /abs/a; cat b",
    ]) {
      expect(readPaths(line, null), line).toBeUndefined();
    }
  });

  it("the working folder only when a command reads it", () => {
    for (const line of ["cat a", "grep -n x a b", "sed -n 1p a", "head a | grep x", "diff a b", "rg x a"]) {
      const reads = readPaths(line, ROOT) ?? [];
      expect(reads, line).not.toContain(ROOT);
      expect(
        reads.every((p) => p !== "/"),
        line,
      ).toBe(true);
    }
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Properties

/** Readers that read their one file operand `{f}`. */
const READERS = [
  "cat {f}",
  "cat -n {f}",
  "head -n 3 {f}",
  "tail -5 {f}",
  "wc -l {f}",
  "nl {f}",
  "grep -n pat {f}",
  "grep -rn pat {f}",
  "grep -e pat -i {f}",
  "egrep 'a|b' {f}",
  "rg -n pat {f}",
  "sed -n 1,5p {f}",
  "sed -n -e p {f}",
  "sort -u {f}",
  "uniq -c {f}",
  "md5sum {f}",
  "sha256sum {f}",
  "ls -la {f}",
  "du -sh {f}",
  "stat {f}",
  "find {f} -type f",
  "tree -L 2 {f}",
  "od -c {f}",
  "strings {f}",
  "less {f}",
  "file {f}",
  "cut -f1 {f}",
  "column -t {f}",
  "more {f}",
  "xxd {f}",
  "hexdump -C {f}",
  "cmp {f} {f}",
  "diff -u {f} {f}",
  "readlink -f {f}",
  "realpath {f}",
  "sort < {f}",
];
const fileName = fc.oneof(
  fc.stringMatching(/^(\.\.\/|d\/|d\/e\/|\.\/)?[a-z][a-z0-9_]{0,7}(\.[a-z]{1,3})?$/),
  fc.stringMatching(/^\/[a-z]{1,5}(\/[a-z0-9_]{1,6}){0,2}$/),
);
const separator = fc.constantFrom(" | ", " && ", " || ", "; ", "\n", " |& ");
const readerLine = fc.array(fc.tuple(fc.constantFrom(...READERS), fileName, separator), {
  minLength: 1,
  maxLength: 5,
});
const joined = (parts: [string, string, string][]) =>
  parts.map(([reader, f, s], i) => `${i === 0 ? "" : s}${reader.replaceAll("{f}", f)}`).join("");

describe("properties", () => {
  it("every file a line of readers names is read; the working folder is not", () => {
    fc.assert(
      fc.property(readerLine, fc.constantFrom("/r", "/r/sub", "/"), (parts, cwd) => {
        const line = joined(parts);
        const reads = readPaths(line, cwd);
        expect(reads, line).toBeDefined();
        for (const [, f] of parts) {
          const path = posix.resolve(cwd, f);
          expect(
            reads?.some((p) => within(path, p)),
            `${line}: ${path}`,
          ).toBe(true);
        }
        if (!parts.some(([, f]) => posix.resolve(cwd, f) === cwd)) expect(reads, line).not.toContain(cwd);
      }),
      { numRuns: 500 },
    );
  });

  it("after a cd, the files are read in the folder it moved to", () => {
    fc.assert(
      fc.property(readerLine, fc.constantFrom("sub", "/abs", "../up"), (parts, dir) => {
        const line = `cd ${dir} && ${joined(parts)}`;
        const reads = readPaths(line, ROOT);
        const folder = posix.resolve(ROOT, dir);
        for (const [, f] of parts) {
          const path = posix.resolve(folder, f);
          expect(
            reads?.some((p) => within(path, p)),
            `${line}: ${path}`,
          ).toBe(true);
        }
        expect(reads?.some((p) => within(folder, p) || within(p, folder))).toBe(true); // whether it exists
        // With the working folder unknown, only an absolute cd makes the relative paths known: unless a command may
        // run where the cd failed (after `||`, `;`).
        const unknown = readPaths(line, null);
        if (!dir.startsWith("/")) expect(unknown).toBeUndefined();
        else if (parts.slice(1).every(([, , s]) => [" | ", " |& ", " && "].includes(s))) expect(unknown).toEqual(reads);
      }),
      { numRuns: 300 },
    );
  });

  it("a glob's folder covers every file the glob may name", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("", "src/", "/etc/", "a/b/", "../"),
        fc.stringMatching(/^[a-z]{0,3}$/),
        fc.constantFrom("*", "?", "[ab]", "*.py"),
        fc.stringMatching(/^[a-z]{0,3}$/),
        fc.stringMatching(/^[a-z]{1,4}$/),
        (folder, before, pattern, after, expanded) => {
          const word = `${folder}${before}${pattern}${after}`;
          const reads = readPaths(`cat ${word}`, ROOT);
          // A name the glob may match: the pattern replaced by letters.
          const name = posix.resolve(ROOT, `${folder}${before}${expanded}${after}`);
          expect(
            reads?.some((p) => within(name, p)),
            `${word}: ${name}`,
          ).toBe(true);
          expect(reads).toEqual([posix.resolve(ROOT, folder === "" ? "." : folder)]);
        },
      ),
    );
  });

  it("known reads only for read-only lines", () => {
    const anyLine = fc.array(
      fc.tuple(
        fc.constantFrom(...READERS, "rm {f}", "sort -o {f} a", "echo x > {f}", "sed -i s/a/b/ {f}", "git log {f}"),
        fileName,
        separator,
      ),
      { minLength: 1, maxLength: 4 },
    );
    fc.assert(
      fc.property(anyLine, (parts) => {
        const line = joined(parts);
        if (readPaths(line, ROOT) !== undefined) expect(isReadOnlyCommand(line), line).toBe(true);
        if (!isReadOnlyCommand(line)) expect(readPaths(line, ROOT), line).toBeUndefined();
      }),
      { numRuns: 300 },
    );
  });
});
