/**
 * The shell model (src/common/identity/shell/): every row of the command table and of the redirection table has a test —
 * each writing form is mutating with its written path resolved (also after a `cd`), each read-only form stays
 * read-only — plus the parsing (newlines, comments, heredocs, quoting, expansions), `cd` and what is beyond the
 * model. Property: a read-only line stays read-only; adding any writing form of the tables makes it mutating.
 */
import { resolve } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type CommandRow,
  changedPaths,
  isReadOnlyCommand,
  REDIRECTIONS,
  SHELL_COMMANDS,
  type WriteForm,
} from "../../src/common/identity/shell/index.js";

const ROOT = "/r";

/** A writing example: the form it exercises, the command for a file name, the paths it writes (or "all"). */
interface WriteCase {
  form: string;
  command: (f: string) => string;
  paths: ((f: string) => string[]) | "all";
}

const w = (form: string, command: (f: string) => string, paths: WriteCase["paths"] = (f) => [f]): WriteCase => ({
  form,
  command,
  paths,
});
const all = (form: string, command: string): WriteCase => ({ form, command: () => command, paths: "all" });

/** The name of a write form, as the cases name it. */
function formKey(form: WriteForm): string {
  if ("option" in form) return form.option;
  if ("operand" in form) return `operand ${form.operand}`;
  return form.script;
}

const READ_ONLY_GIT = SHELL_COMMANDS.filter((r) => r.command.startsWith("git ") && r.readOnly).map((r) => r.command);

/** Per row of SHELL_COMMANDS with write forms: its read-only forms and an example of each write form. */
const CASES: Record<string, { reads: string[]; writes: WriteCase[] }> = {
  rg: { reads: ["rg -n TODO src", "rg --pre-glob '*.gz' x"], writes: [all("--pre", "rg --pre ./unzip.sh x src")] },
  ag: { reads: ["ag TODO src"], writes: [all("--pager", "ag --pager less TODO")] },
  file: {
    reads: ["file a.bin", "file -b a.bin"],
    writes: [all("-C", "file -C -m magic"), all("--compile", "file --compile")],
  },
  tree: {
    reads: ["tree -L 2 src", "tree -a"],
    writes: [w("-o", (f) => `tree -L 2 -o ${f} src`), all("-R", "tree -R -H . src")],
  },
  less: {
    reads: ["less -N a.txt", "less a.txt"],
    writes: [
      w("-o", (f) => `less -o ${f} a.txt`),
      w("--log-file", (f) => `less --log-file=${f} a.txt`),
      w("-O", (f) => `less -NO${f} a.txt`),
      w("--LOG-FILE", (f) => `less --LOG-FILE ${f} a.txt`),
      all("+", "less '+!rm x' a.txt"),
    ],
  },
  sort: {
    reads: ["sort in.txt", "sort -k2 -t, -u in.txt", "sort -rn in.txt | head", "LC_ALL=C sort in.txt"],
    writes: [
      w("-o", (f) => `sort -o ${f} in.txt`),
      w("-o", (f) => `sort -o${f} in.txt`),
      w("-o", (f) => `sort -rno ${f} in.txt`),
      w("-o", (f) => `sort in.txt -o ${f}`),
      w("--output", (f) => `sort --output=${f} in.txt`),
      w("--output", (f) => `sort --output ${f} in.txt`),
      w("--output", (f) => `sort --out=${f} in.txt`),
      all("--compress-program", "sort --compress-program=gzip in.txt"),
    ],
  },
  uniq: {
    reads: [
      "uniq in.txt",
      "uniq -c in.txt",
      "sort a | uniq -c",
      "uniq in.txt -",
      "uniq -f 1 in.txt",
      "uniq in.txt 2>/dev/null",
    ],
    writes: [
      w("operand 2", (f) => `uniq in.txt ${f}`),
      w("operand 2", (f) => `uniq -c -f 1 in.txt ${f}`),
      w("operand 2", (f) => `uniq --skip-fields 1 -- in.txt ${f}`),
      w("operand 2", (f) => `uniq - ${f}`),
      all("operand 2", "uniq --unknown 1 in.txt out.txt"), // an option it may not know could shift the operands
      all("operand 2", "uniq *.txt"), // how many files the glob names is only known when the shell runs
    ],
  },
  xxd: {
    reads: ["xxd in.bin", "xxd -l 64 in.bin", "xxd -c8 in.bin | head", "xxd -cols 8 in.bin"],
    writes: [
      w("operand 2", (f) => `xxd in.bin ${f}`),
      w("operand 2", (f) => `xxd -r -p in.hex ${f}`),
      w("operand 2", (f) => `xxd -c 8 -s 0x10 in.bin ${f}`),
      all("operand 2", "xxd -Z in.bin out.bin"),
    ],
  },
  sed: {
    reads: [
      "sed -n '10,40p' a.txt",
      "sed -n '/x/{p;q}' a.txt",
      "sed 's/a/b/g' a.txt",
      "sed -E 's/(a)/\\1/' a.txt",
      "sed -n '$p' a.txt",
      "sed '1~2d' a.txt",
      "sed -n 'w /dev/stdout' a.txt",
      "sed --expression=p -n a.txt",
      "sed 'r other.txt' a.txt",
      "sed -ne '/start/,/end/ p' -e '$=' a.txt",
      "sed 's/w/x/' a.txt",
      "sed 'y/abc/xyz/' a.txt",
      "sed -n '/a/I p' a.txt",
      "sed '/x/a added' a.txt",
    ],
    writes: [
      w("-i", (f) => `sed -i 's/a/b/' ${f}`),
      w(
        "-i",
        (f) => `sed -i.bak -e 's/a/b/' ${f} other.txt`,
        (f) => [f, "other.txt"],
      ),
      w("-i", (f) => `sed -Ei 's/a/b/' ${f}`),
      w("-i", (f) => `sed -ni p ${f}`),
      w("--in-place", (f) => `sed --in-place=.bak 's/a/b/' ${f}`),
      w("--in-place", (f) => `sed --in 's/a/b/' ${f}`),
      all("-f", "sed -f fix.sed a.txt"),
      all("--file", "sed --file=fix.sed a.txt"),
      w("w FILE", (f) => `sed -n '1w ${f}' a.txt`),
      w("w FILE", (f) => `sed -n '/x/w ${f}' a.txt`),
      w("w FILE", (f) => `sed -n -e p -e 'w ${f}' a.txt`),
      w("w FILE", (f) => `sed -n '/a/{p;w ${f}\n}' a.txt`),
      w("W FILE", (f) => `sed -n 'N;W ${f}' a.txt`),
      w("s///w FILE", (f) => `sed 's/a/b/w ${f}' a.txt`),
      w("s///w FILE", (f) => `sed 's|a|b|gw ${f}' a.txt`),
      all("e COMMAND", "sed 'e ls' a.txt"),
      all("e COMMAND", "sed '1e date' a.txt"),
      all("s///e", "sed 's/.*/echo &/e' a.txt"),
    ],
  },
  find: {
    reads: [
      "find . -name '*.py'",
      'find src -type f -name "*.ts" | head -20',
      'find . -name "$PATTERN"',
      "find . -name -delete",
      "find . -newer a.txt -print",
      "find -L src -maxdepth 2",
    ],
    writes: [
      w("-delete", (f) => `find ${f} -name '*.pyc' -delete`),
      w(
        "-delete",
        () => "find -delete",
        () => ["."],
      ),
      w(
        "-delete",
        (f) => `find -L ${f} other -delete`,
        (f) => [f, "other"],
      ),
      all("-exec", "find . -exec rm {} \\;"),
      all("-exec", "find . -type f -exec grep -l x {} +"),
      all("-execdir", "find . -execdir touch x \\;"),
      all("-ok", "find . -ok rm {} \\;"),
      all("-okdir", "find . -okdir rm {} \\;"),
      w("-fprint", (f) => `find . -name '*.py' -fprint ${f}`),
      w("-fprint0", (f) => `find . -fprint0 ${f}`),
      w("-fprintf", (f) => `find . -fprintf ${f} '%p\\n'`),
      w("-fls", (f) => `find src -fls ${f}`),
    ],
  },
  tee: {
    reads: ["ls | tee", "ls | tee /dev/null", "ls | tee -a"],
    writes: [
      w("operand all", (f) => `ls | tee ${f}`),
      w(
        "operand all",
        (f) => `ls | tee -a ${f} b.txt`,
        (f) => [f, "b.txt"],
      ),
      w("operand all", (f) => `ls | tee --output-error=warn ${f}`),
    ],
  },
  ...Object.fromEntries(
    READ_ONLY_GIT.map((git) => [
      git,
      {
        reads: [git, `${git} HEAD -- src`, `git -C sub ${git.slice(4)}`, `git --no-pager ${git.slice(4)} | head`],
        writes: [w("--output", (f) => `${git} --output=${f}`), w("--output", (f) => `${git} HEAD --output ${f}`)],
      },
    ]),
  ),
  "git grep": {
    reads: ["git grep -n x", "git grep -e -O src", "git grep --count x -- src"],
    writes: [
      w("--output", (f) => `git grep x --output=${f}`),
      all("-O", "git grep -O x"),
      all("-O", "git grep -nOvim x"),
      all("--open-files-in-pager", "git grep --open-files-in-pager=vim x"),
    ],
  },
  "git checkout": {
    reads: [],
    writes: [
      w("operand afterDashes", (f) => `git checkout -- ${f}`),
      w(
        "operand afterDashes",
        (f) => `git checkout HEAD~1 -- ${f} b.py`,
        (f) => [f, "b.py"],
      ),
      // Without `--` it moves the working tree: a change of the folder it runs in (a bisect step, a branch switch).
      w(
        "operand afterDashes",
        () => "git checkout main",
        () => ["."],
      ),
    ],
  },
  "git restore": {
    reads: [],
    writes: [
      w("operand all", (f) => `git restore ${f}`),
      w("operand all", (f) => `git restore -s HEAD~1 ${f}`),
      w("operand all", (f) => `git restore --staged ${f}`),
    ],
  },
  rm: { reads: [], writes: [w("operand all", (f) => `rm -rf ${f}`), all("operand all", "rm *.pyc")] },
  rmdir: { reads: [], writes: [w("operand all", (f) => `rmdir -p ${f}`)] },
  mkdir: { reads: [], writes: [w("operand all", (f) => `mkdir -p -m 755 ${f}`)] },
  touch: { reads: [], writes: [w("operand all", (f) => `touch -d '2 days ago' ${f}`)] },
  mv: {
    reads: [],
    writes: [
      w(
        "operand all",
        (f) => `mv ${f} b.txt`,
        (f) => [f, "b.txt"],
      ),
      w(
        "-t",
        (f) => `mv -t ${f} a b`,
        (f) => [f, "a", "b"],
      ),
      w(
        "--target-directory",
        (f) => `mv --target-directory=${f} a`,
        (f) => [f, "a"],
      ),
    ],
  },
  cp: {
    reads: [],
    writes: [
      w("operand last", (f) => `cp -r a.txt ${f}`),
      w("operand last", (f) => `cp --preserve=mode a b ${f}`),
      all("operand last", "cp --bogus a b"),
      // With -t the last operand is a source: naming it too is harmless.
      w(
        "-t",
        (f) => `cp -t ${f} a b`,
        (f) => [f, "b"],
      ),
      w(
        "--target-directory",
        (f) => `cp --target-directory ${f} a`,
        (f) => [f, "a"],
      ),
    ],
  },
};

/** Read-only forms of a row without write forms. */
function plainReads(row: CommandRow): string[] {
  if (row.command === "cd") return ["cd sub", "cd /tmp && ls", "cd"];
  return [row.command, `${row.command} -x a.txt`, `${row.command} $X *.py ~/notes 2>/dev/null`];
}

const resolved = (cwd: string, paths: string[]) => paths.map((p) => resolve(cwd, p));

describe("the command table: one test per row", () => {
  it("every row with write forms has an example of each form; every example names a form of its row", () => {
    for (const row of SHELL_COMMANDS) {
      if (row.writes === undefined) continue;
      const cases = CASES[row.command];
      expect(cases, row.command).toBeDefined();
      const exercised = new Set(cases?.writes.map((c) => c.form));
      const forms = new Set(row.writes.map(formKey));
      expect(
        [...forms].filter((f) => !exercised.has(f)),
        row.command,
      ).toEqual([]);
      expect(
        [...exercised].filter((f) => !forms.has(f)),
        row.command,
      ).toEqual([]);
    }
    expect(Object.keys(CASES).filter((c) => !SHELL_COMMANDS.some((row) => row.command === c))).toEqual([]);
  });

  for (const row of SHELL_COMMANDS) {
    describe(row.command, () => {
      const cases = CASES[row.command] ?? { reads: plainReads(row), writes: [] };
      it.each(cases.reads)("read-only: %j", (command) => {
        expect(isReadOnlyCommand(command)).toBe(true);
        expect(changedPaths(command, ROOT)).toEqual([]);
      });
      it.each(cases.writes.map((c) => [c.form, c.command("out.txt"), c] as const))(
        "%s: %j is mutating; its paths resolved, after a cd too",
        (_form, command, c) => {
          expect(isReadOnlyCommand(command)).toBe(false);
          const expected = c.paths === "all" ? undefined : resolved(ROOT, c.paths("out.txt"));
          expect(changedPaths(command, ROOT)).toEqual(expected);
          const inSub = c.paths === "all" ? undefined : resolved(`${ROOT}/sub`, c.paths("out.txt"));
          expect(changedPaths(`cd sub && ${command}`, ROOT)).toEqual(inSub);
          expect(isReadOnlyCommand(`cat a.txt | ${command}`)).toBe(false);
        },
      );
    });
  }
});

describe("the redirection table: one test per row", () => {
  const examples: Record<string, { writes: string[]; reads: string[] }> = {
    ">": {
      writes: ["echo x > {f}", "echo x >{f}", "cat a 1> {f}", "grep x a 2> {f}", "> {f} echo x"],
      reads: ["ls >/dev/null"],
    },
    ">>": { writes: ["echo x >> {f}", "ls 2>> {f}"], reads: ["ls >> /dev/null"] },
    ">|": { writes: ["cat a >| {f}"], reads: [] },
    "&>": { writes: ["ls &> {f}", "ls &>{f}"], reads: ["ls &> /dev/null"] },
    "&>>": { writes: ["ls &>> {f}"], reads: [] },
    "<>": { writes: ["cat <> {f}"], reads: [] },
    ">&": { writes: ["ls >& {f}"], reads: ["ls 2>&1", "ls >&2", "ls 2>&-", "grep x a > /dev/null 2>&1"] },
    "<": { writes: [], reads: ["cat < {f}", "sort 0< {f}"] },
    "<&": { writes: [], reads: ["cat <&0"] },
    "<<": { writes: [], reads: ["cat <<EOF\nrm -rf x\nEOF", "cat <<'EOF' | grep x\n$(rm -rf x)\nEOF"] },
    "<<-": { writes: [], reads: ["cat <<-EOF\n\trm x\n\tEOF\nls"] },
    "<<<": { writes: [], reads: ["grep x <<< 'a x b'"] },
  };

  it("every redirection has examples", () => {
    expect(Object.keys(examples).sort()).toEqual(REDIRECTIONS.map((r) => r.op).sort());
    for (const r of REDIRECTIONS) {
      const { writes = [], reads = [] } = examples[r.op] ?? {};
      if (r.writes === "nothing") expect([writes.length, reads.length > 0], r.op).toEqual([0, true]);
      else expect(writes.length, r.op).toBeGreaterThan(0);
    }
  });

  for (const r of REDIRECTIONS) {
    const { writes, reads } = examples[r.op] ?? { writes: [], reads: [] };
    it.each(writes.map((t) => t.replaceAll("{f}", "out.txt")))(`${r.op} writes its target: %j`, (command) => {
      expect(isReadOnlyCommand(command)).toBe(false);
      expect(changedPaths(command, ROOT)).toEqual(["/r/out.txt"]);
      expect(changedPaths(`cd sub && ${command}`, ROOT)).toEqual(["/r/sub/out.txt"]);
    });
    it.each(reads.map((t) => t.replaceAll("{f}", "in.txt")))(`${r.op} writes nothing: %j`, (command) => {
      expect(isReadOnlyCommand(command)).toBe(true);
      expect(changedPaths(command, ROOT)).toEqual([]);
    });
  }

  it("a redirection to a target only known when the shell runs may write anything", () => {
    for (const command of ["ls > $OUT", "ls > *.txt", "ls > ~/x", 'ls > "$D/x"']) {
      expect(isReadOnlyCommand(command)).toBe(false);
      expect(changedPaths(command, ROOT)).toBeUndefined();
    }
  });
});

describe("cd moves the later relative paths of the line", () => {
  it.each([
    ["cd sub && echo x > f", ["/r/sub/f"]],
    ["cd sub; echo x > f", ["/r/sub/f", "/r/f"]], // if cd fails, echo still runs, in /r
    ["cd sub\necho x > f", ["/r/sub/f", "/r/f"]],
    ["cd sub || echo x > f", ["/r/f"]],
    ["cd sub | echo x > f", ["/r/f"]], // a pipeline runs each command in a subshell
    ["cd a && cd b && touch x", ["/r/a/b/x"]],
    ["cd a && cd ../b && touch x", ["/r/b/x"]],
    ["cd /tmp && touch x", ["/tmp/x"]],
    ["cd .. && touch x", ["/x"]],
    ["cd -- sub && touch x", ["/r/sub/x"]],
    ["cd -P sub && touch x", ["/r/sub/x"]],
    ["cd sub > log && touch x", ["/r/log", "/r/sub/x"]], // the redirection happens before cd runs
    ["cd sub && git -C deeper log --output=o", ["/r/sub/deeper/o"]],
    ["git -C sub diff --output=o", ["/r/sub/o"]],
    ["git -C /abs diff --output=o", ["/abs/o"]],
    ["cd $D && touch /abs/x", ["/abs/x"]],
    ["cd sub && cat a", []],
  ])("%j changes %j", (command, paths) => {
    expect(changedPaths(command, ROOT)).toEqual(paths);
  });

  it.each(["cd && touch x", "cd - && touch x", "cd $D && touch x", "cd ~/x && touch x", "cd a* && touch x"])(
    "%j: the folder is only known when the shell runs, so a relative path may be anything",
    (command) => {
      expect(changedPaths(command, ROOT)).toBeUndefined();
      expect(isReadOnlyCommand(command)).toBe(false);
    },
  );

  it("a cd changes nothing on disk", () => {
    expect(isReadOnlyCommand("cd sub && ls && cd .. && cat a")).toBe(true);
    expect(isReadOnlyCommand("cd $D && ls")).toBe(true);
  });
});

describe("parsing", () => {
  it.each([
    // A newline separates commands; a comment ends at the newline.
    ["ls\nrm x", ["/r/x"]],
    ["# fix the typo\nsed -i s/a/b/ f.py", ["/r/f.py"]],
    ["ls # > x", []],
    ["echo a#b > f", ["/r/f"]],
    ["ls |\nsort -o s.txt", ["/r/s.txt"]],
    ["ls &&\n\ntouch x", ["/r/x"]],
    // Heredoc bodies are data, not commands.
    ["cat > f.py <<'EOF'\nx = $(rm -rf /)\nrm y\nEOF", ["/r/f.py"]],
    ["cat > f.py << EOF\nx = $HOME\nEOF\ntouch done", ["/r/f.py", "/r/done"]],
    ["cat <<-END > f.txt\n\tline\n\tEND", ["/r/f.txt"]],
    ["cat <<A <<B > f\na\nA\nb\nB\nrm z", ["/r/f", "/r/z"]],
    // fd numbers belong to the redirection, not to the command's operands.
    ["uniq in.txt 2>/dev/null", []],
    ["cat a 2> err.txt", ["/r/err.txt"]],
    ["echo 2 > f", ["/r/f"]],
    ["echo a2>f", ["/r/f"]],
    // Quoting.
    ["rm 'a b' \"c d\" e\\ f", ["/r/a b", "/r/c d", "/r/e f"]],
    ["rm 'a'\"b\"c", ["/r/abc"]],
    ["sort \\\n  -o out.txt in.txt", ["/r/out.txt"]],
    ["grep '$(x)' a.txt", []],
    ["grep 'a;rm x' a.txt", []],
    ['grep "a && rm x" a.txt > hits', ["/r/hits"]],
    // Program spellings.
    ["/usr/bin/sort -o o in", ["/r/o"]],
    ["\\cat a", []],
    ["LC_ALL=C GREP_COLORS=x grep x a", []],
    ["GIT_PAGER=cat git log", []],
    ["> empty.txt", ["/r/empty.txt"]],
  ])("%j changes %j", (command, paths) => {
    expect(changedPaths(command, ROOT)).toEqual(paths);
    expect(isReadOnlyCommand(command)).toBe(paths.length === 0);
  });

  it.each([
    // Beyond the model: it may change anything.
    "echo $(rm x)",
    "echo `rm x`",
    'echo "$(rm x)"',
    "diff <(ls a) <(ls b)",
    "ls > >(tee x)",
    "(cd x && rm y)",
    "{ ls; }",
    "ls &",
    "echo 'unterminated",
    'echo "unterminated',
    "echo $((1 + 2))",
    "cat <<EOF\n$(rm x)\nEOF",
    "case x in x) ls;; esac",
    "if true; then ls; fi",
    "for f in a; do cat $f; done",
    "./cat a",
    "$CAT a",
    "GIT_PAGER=rm git log",
    "LD_PRELOAD=x.so cat a",
    "X=1",
    "xargs rm",
    "python reproduce.py",
    "git -c core.pager=rm log",
    "git --git-dir=x log",
    "",
    "   ",
  ])("%j is not understood: it may change anything", (command) => {
    expect(isReadOnlyCommand(command)).toBe(false);
    expect(changedPaths(command, ROOT)).toBeUndefined();
  });

  // Issue 43, class 4: a manual `git bisect` (bisect step, run the tests, bisect step, …) is a change of the working
  // tree between test runs, so the runs do not add up as repeats; nothing outside the repository changes.
  it.each([
    ["git reset --hard", "."],
    ["git bisect good", "."],
    ["git bisect bad HEAD~3", "."],
    ["git stash", "."],
    ["git switch -c fix", "."],
    ["git pull --rebase", "."],
    ["git -C sub checkout main", "sub"],
  ])("%j moves the working tree: a change of the folder it runs in (%s)", (command, folder) => {
    expect(isReadOnlyCommand(command)).toBe(false);
    expect(changedPaths(command, ROOT)).toEqual(resolved(ROOT, [folder]));
  });

  it("a word only known when the shell runs: harmless for a plain reader, anything for a command that can write", () => {
    for (const reader of ["cat $X", "grep -n $P *.py", "head ~/a", "ls {a,b}", "wc $'a\\tb'", 'tail "$F"']) {
      expect(isReadOnlyCommand(reader), reader).toBe(true);
    }
    // `$X` may be `-o out`, a glob may name two files (uniq writes the second), `{a,b}` is two paths.
    for (const writer of [
      "sort $X",
      'sort "$X" in',
      "sort *",
      "uniq a*.txt",
      "rm {a,b}",
      "rm ~/x",
      "rm $'a'",
      "tee $F",
    ]) {
      expect(isReadOnlyCommand(writer), writer).toBe(false);
      expect(changedPaths(writer, ROOT), writer).toBeUndefined();
    }
    expect(isReadOnlyCommand('sort "a$X"')).toBe(true); // one word, not an option
    expect(isReadOnlyCommand("sort src/*.txt")).toBe(true); // file names that start with src/, not options
    expect(isReadOnlyCommand('find . -name "$X" -type f')).toBe(true); // the value of -name, not an option
  });

  it("keeps the earlier answers (the file tools' and the guards' cases)", () => {
    expect(changedPaths("rm -f a.txt && touch b/c.txt", ROOT)).toEqual(["/r/a.txt", "/r/b/c.txt"]);
    expect(changedPaths("rm -f a.txt && echo x > b.txt", "/repo")).toEqual(["/repo/a.txt", "/repo/b.txt"]);
    expect(changedPaths("cat a.txt | grep x", "/repo")).toEqual([]);
    expect(changedPaths("python build.py", "/repo")).toBeUndefined();
    expect(changedPaths("git status", ROOT)).toEqual([]);
    expect(changedPaths("rm $(ls)", ROOT)).toBeUndefined();
    for (const command of [
      "cat a.py",
      "ls -la src && grep -rn TODO src | head -20",
      "sed -n '10,40p' src/app.py | grep -n TODO",
      "git diff HEAD~1 -- src",
      "find . -name '*.py' 2>/dev/null",
      "cd /repo && git log --oneline | head",
      "git status && git diff && git log -3 --stat",
      "head -50 a.py; tail -n 20 b.py",
    ]) {
      expect(isReadOnlyCommand(command), command).toBe(true);
    }
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Properties

const READ_FORMS = SHELL_COMMANDS.flatMap((row) => CASES[row.command]?.reads ?? plainReads(row)).filter(
  (c) => !c.startsWith("cd"), // a cd moves the paths the writer's expectation is resolved against
);
const WRITE_CASES: WriteCase[] = [
  ...Object.values(CASES).flatMap((c) => c.writes),
  ...["> ", ">> ", ">| ", "&> ", "&>> ", "<> ", ">& ", "1> ", "2> ", "2>> "].map((op) =>
    w(op.trim(), (f) => `echo x ${op}${f}`),
  ),
];
const fileName = fc.stringMatching(/^(d\/)?[a-z][a-z0-9_]{0,7}(\.[a-z]{1,3})?$/);
const separator = fc.constantFrom(" | ", " && ", " || ", "; ", "\n");
const readLine = fc.array(fc.tuple(fc.constantFrom(...READ_FORMS), separator), { minLength: 1, maxLength: 4 });
const joined = (parts: [string, string][]) => parts.map(([c, s], i) => (i === 0 ? c : `${s}${c}`)).join("");

describe("properties", () => {
  it("a line of read-only forms is read-only and changes nothing", () => {
    fc.assert(
      fc.property(readLine, (parts) => {
        const line = joined(parts);
        expect(isReadOnlyCommand(line)).toBe(true);
        expect(changedPaths(line, ROOT)).toEqual([]);
      }),
    );
  });

  it("adding any writing form or redirection of the tables is never read-only, and its path is among the changes", () => {
    fc.assert(
      fc.property(
        readLine,
        readLine,
        fc.constantFrom(...WRITE_CASES),
        fileName,
        separator,
        separator,
        (before, after, writer, f, s1, s2) => {
          const line = `${joined(before)}${s1}${writer.command(f)}${s2}${joined(after)}`;
          expect(isReadOnlyCommand(line)).toBe(false);
          const changed = changedPaths(line, ROOT);
          if (writer.paths === "all") expect(changed).toBeUndefined();
          else expect(changed).toEqual(expect.arrayContaining(resolved(ROOT, writer.paths(f))));
        },
      ),
      { numRuns: 500 },
    );
  });
});
