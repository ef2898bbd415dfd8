/**
 * What the guards understand of a shell command line: which lines only read ({@link isReadOnlyCommand}), which
 * paths a line may change ({@link changedPaths}) and which paths a read-only line may read ({@link readPaths}). All
 * read one analysis of the line, so they always agree. The commands, the forms in which they write and what they
 * read are data ({@link SHELL_COMMANDS}, {@link SHELL_READS}); anything not understood (an unknown program, a
 * subshell, a command substitution, an argument whose value is only known when the shell runs and that could be a
 * writing option) may change anything. No LangGraph import.
 */
import { isAbsolute, posix, resolve } from "node:path";

/**
 * One way a command writes.
 * - `{ option, writes: "value" }`: the option's value is a file it writes (`sort -o out`, `--output=out`).
 * - `{ option, writes: "all" }`: with the option the command may change anything (it runs a program, or writes
 *   files it does not name: `git grep -O`, `find -exec`).
 * - `{ option, writes: "operands" }`: the option makes it write its operands (`sed -i` its files, `find -delete`
 *   its starting points and everything below them). `value: "optional"`: the rest of the word is the option's
 *   value (`-i.bak`, `--in-place=.bak`).
 * - `{ operand }`: it writes that operand (1-based), every operand (`"all"`), the last one (`"last"`), or the
 *   ones after `--` (`"afterDashes"`; without `--` it may change anything).
 * - `{ script }`: a command of its script writes (`sed`'s `w FILE`) or runs a program (`sed`'s `e`).
 *
 * @example
 * ```ts
 * const output: WriteForm = { option: "-o", writes: "value" };
 * ```
 */
export type WriteForm =
  | { option: string; writes: "value" }
  | { option: string; writes: "all" }
  | { option: string; writes: "operands"; value?: "optional" }
  | { operand: number | "all" | "last" | "afterDashes" }
  | { script: string };

/**
 * A command the guards understand.
 *
 * @example
 * ```ts
 * const sort: CommandRow = { command: "sort", readOnly: true, writes: [{ option: "-o", writes: "value" }] };
 * ```
 */
export interface CommandRow {
  /** The program (`sort`), or `git <subcommand>` (`git diff`). */
  command: string;
  /** `true`: it only reads unless one of `writes` is used. `false`: it always changes something. */
  readOnly: boolean;
  /** The forms in which it writes. */
  writes?: readonly WriteForm[];
  /** Options that take a value (the next word, or attached: `-f1`, `--skip-fields=1`). */
  valueOptions?: readonly string[];
  /**
   * Every option without a value it accepts. When given, an option in none of the lists makes the command
   * beyond the model (it could take a value and shift the operands a write form counts).
   */
  flags?: readonly string[];
  /** Options are whole words after one dash (`find -name`, `xxd -cols`), never bundled letters. */
  singleDash?: boolean;
  /** Options end at the first operand (`xxd in -r` has two operands). */
  optionsFirst?: boolean;
}

const value = (option: string): WriteForm => ({ option, writes: "value" });
const anything = (option: string): WriteForm => ({ option, writes: "all" });

/** The words of space-separated lists. */
const words = (...lists: string[]): string[] => lists.flatMap((list) => list.split(" "));

/** git subcommands that only read; `--output=<file>` (a diff option, accepted by all of them) writes. */
const READ_ONLY_GIT = words("status diff log show blame ls-files ls-tree rev-parse shortlog describe cat-file");

/**
 * The commands the guards understand, and the forms in which they write. A command not in the table may change
 * anything. `date`, `ps` and friends only read too, but their whole point is a new answer each time, so they are
 * left out (unknown = mutating = never redundant).
 *
 * @example
 * ```ts
 * SHELL_COMMANDS.find((row) => row.command === "uniq")?.writes; // [{ operand: 2 }]
 * ```
 */
export const SHELL_COMMANDS: readonly CommandRow[] = [
  ...words(
    "cat ls ll grep egrep fgrep head tail wc nl pwd echo printf stat du which type whereis basename dirname realpath",
    "readlink cut tr diff cmp md5sum sha1sum sha256sum true cd column more od hexdump strings",
  ).map((command): CommandRow => ({ command, readOnly: true })),
  { command: "rg", readOnly: true, writes: [anything("--pre")] },
  { command: "ag", readOnly: true, writes: [anything("--pager")] },
  { command: "file", readOnly: true, writes: [anything("-C"), anything("--compile")] },
  {
    command: "tree",
    readOnly: true,
    writes: [value("-o"), anything("-R")],
    valueOptions: ["-L", "-P", "-I", "-H", "-T"],
  },
  {
    command: "less",
    readOnly: true,
    writes: [value("-o"), value("--log-file"), value("-O"), value("--LOG-FILE"), anything("+")],
  },
  {
    command: "sort",
    readOnly: true,
    writes: [value("-o"), value("--output"), anything("--compress-program")],
  },
  {
    command: "uniq",
    readOnly: true,
    writes: [{ operand: 2 }],
    valueOptions: ["-f", "-s", "-w", "--skip-fields", "--skip-chars", "--check-chars"],
    flags: [
      ...["-c", "-d", "-D", "-i", "-u", "-z", "--count", "--repeated", "--ignore-case", "--unique"],
      ...["--zero-terminated", "--all-repeated", "--group", "--help", "--version"],
    ],
  },
  {
    command: "xxd",
    readOnly: true,
    writes: [{ operand: 2 }],
    singleDash: true,
    optionsFirst: true,
    valueOptions: words("-c -cols -g -groupsize -l -len -o -offset -s -seek -n -name -R"),
    flags: [
      ...["-a", "-autoskip", "-b", "-bits", "-C", "-capitalize", "-E", "-EBCDIC", "-e", "-i", "-include", "-p", "-ps"],
      ...["-postscript", "-plain", "-r", "-revert", "-u", "-d", "-h", "-help", "-v", "-version"],
    ],
  },
  {
    command: "sed",
    readOnly: true,
    writes: [
      { option: "-i", writes: "operands", value: "optional" },
      { option: "--in-place", writes: "operands", value: "optional" },
      anything("-f"),
      anything("--file"),
      { script: "w FILE" },
      { script: "W FILE" },
      { script: "s///w FILE" },
      { script: "e COMMAND" },
      { script: "s///e" },
    ],
    valueOptions: ["-e", "--expression", "-l", "--line-length"],
  },
  {
    command: "find",
    readOnly: true,
    singleDash: true,
    writes: [
      { option: "-delete", writes: "operands" },
      ...["-exec", "-execdir", "-ok", "-okdir"].map(anything),
      ...["-fprint", "-fprint0", "-fprintf", "-fls"].map(value),
    ],
    valueOptions: [
      ...["-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex", "-lname", "-ilname"],
      ...["-type", "-xtype", "-maxdepth", "-mindepth", "-newer", "-anewer", "-cnewer", "-size", "-mtime", "-atime"],
      ...["-ctime", "-mmin", "-amin", "-cmin", "-user", "-group", "-uid", "-gid", "-perm", "-inum", "-links"],
      ...["-samefile", "-printf", "-fstype", "-used", "-context", "-regextype", "-files0-from", "-D"],
    ],
  },
  {
    command: "tee",
    readOnly: true,
    writes: [{ operand: "all" }],
    flags: ["-a", "-i", "-p", "--append", "--ignore-interrupts", "--output-error", "--help", "--version"],
  },
  ...READ_ONLY_GIT.map((sub): CommandRow => ({ command: `git ${sub}`, readOnly: true, writes: [value("--output")] })),
  {
    command: "git grep",
    readOnly: true,
    writes: [value("--output"), anything("-O"), anything("--open-files-in-pager")],
    valueOptions: ["-e", "-f", "-A", "-B", "-C", "-m"],
  },
  { command: "git checkout", readOnly: false, writes: [{ operand: "afterDashes" }] },
  { command: "git restore", readOnly: false, writes: [{ operand: "all" }], valueOptions: ["-s", "--source"] },
  ...["rm", "rmdir"].map((command): CommandRow => ({ command, readOnly: false, writes: [{ operand: "all" }] })),
  {
    command: "mkdir",
    readOnly: false,
    writes: [{ operand: "all" }],
    valueOptions: ["-m", "--mode"],
  },
  {
    command: "touch",
    readOnly: false,
    writes: [{ operand: "all" }],
    valueOptions: ["-r", "-d", "-t", "--reference", "--date"],
  },
  {
    command: "mv",
    readOnly: false,
    writes: [{ operand: "all" }, value("-t"), value("--target-directory")],
    valueOptions: ["-S", "--suffix"],
  },
  {
    command: "cp",
    readOnly: false,
    writes: [{ operand: "last" }, value("-t"), value("--target-directory")],
    valueOptions: ["-S", "--suffix", "--no-preserve", "--sparse"],
    flags: [
      ...["-a", "-b", "-d", "-f", "-i", "-H", "-l", "-L", "-n", "-P", "-p", "-R", "-r", "-s", "-T", "-u", "-v", "-x"],
      ...["--archive", "--attributes-only", "--backup", "--copy-contents", "--dereference", "--force", "--debug"],
      ...["--interactive", "--link", "--no-clobber", "--no-dereference", "--parents", "--recursive", "--update"],
      ...["--remove-destination", "--strip-trailing-slashes", "--symbolic-link", "--verbose", "--one-file-system"],
      ...["--preserve", "--no-target-directory", "--reflink", "--keep-directory-symlink", "--context", "-Z"],
    ],
  },
];

/**
 * The redirections, with or without a file descriptor number before them (`2>`, `1>>`), and what they write: their
 * target file, or nothing. A target under `/dev` (`/dev/null`, `/dev/stderr`) writes nothing we track.
 *
 * @example
 * ```ts
 * REDIRECTIONS.find((r) => r.op === ">&")?.writes; // "target unless fd" (`2>&1` writes nothing, `>& out` writes out)
 * ```
 */
export const REDIRECTIONS: readonly { op: string; writes: "target" | "target unless fd" | "nothing" }[] = [
  { op: ">", writes: "target" },
  { op: ">>", writes: "target" },
  { op: ">|", writes: "target" },
  { op: "&>", writes: "target" },
  { op: "&>>", writes: "target" },
  { op: "<>", writes: "target" }, // opens for reading and writing: creates the file
  { op: ">&", writes: "target unless fd" },
  { op: "<", writes: "nothing" },
  { op: "<&", writes: "nothing" },
  { op: "<<", writes: "nothing" }, // a heredoc: its body is the input
  { op: "<<-", writes: "nothing" },
  { op: "<<<", writes: "nothing" },
];

/**
 * How a read-only command reads one of its options ({@link ReadForm}):
 * - `value`: it takes a value that names no file (`head -n 5`); `optional`: a value only when attached
 *   (`--color=auto`, `od -w16`);
 * - `file`: its value is a file it reads (`grep --exclude-from=x`);
 * - `pattern`: its value is the pattern or script (`grep -e x`), so the first operand is a file; `patternFile`: its
 *   value is a file it reads that holds the pattern (`grep -f pats.txt`); `noPattern`: no pattern at all
 *   (`rg --files`);
 * - `recursive`: without a file operand it reads its working folder (`grep -r`); `directories`: a value, and any
 *   but `read` or `skip` makes it recursive (`grep -d recurse`);
 * - `unknown`: it reads files the line does not name (`md5sum -c sums`: the files listed in `sums`).
 *
 * @example
 * ```ts
 * const exclude: ReadOption = "file"; // grep --exclude-from=FILE
 * ```
 */
export type ReadOption =
  | "value"
  | "optional"
  | "file"
  | "pattern"
  | "patternFile"
  | "noPattern"
  | "recursive"
  | "directories"
  | "unknown";

/**
 * What a read-only command reads.
 *
 * @example
 * ```ts
 * const head: ReadForm = { operands: "files", options: { "-n": "value", "--lines": "value" } };
 * ```
 */
export interface ReadForm {
  /**
   * Its operands: files or folders it reads (`"files"`); a pattern or script, then files, unless an option gave the
   * pattern (`"afterPattern"`); nothing it reads (`"none"`: `echo`, `tr`). `-` is its standard input.
   */
  operands: "files" | "afterPattern" | "none";
  /**
   * What it reads with no file operand: its working folder (`"cwd"`: `ls`); its working folder unless its standard
   * input is piped or redirected (`"search"`: `rg`). Not given: nothing on disk (its standard input, or an error).
   */
  bare?: "cwd" | "search";
  /** Its options that take a value or change what it reads; any other is a flag. */
  options?: Readonly<Record<string, ReadOption>>;
  /** Files it reads in every folder above what it searches (`.gitignore`). */
  ignoreFiles?: readonly string[];
  /** An operand `@file` is a file of more options (binutils). */
  responseFiles?: boolean;
}

/** The options of `lists` (space-separated), all read as `kind`. */
const kinds = (kind: ReadOption, ...lists: string[]): Record<string, ReadOption> =>
  Object.fromEntries(words(...lists).map((option) => [option, kind]));

const GREP: ReadForm = {
  operands: "afterPattern",
  options: {
    ...kinds("pattern", "-e --regexp"),
    ...kinds("patternFile", "-f --file"),
    ...kinds("file", "--exclude-from"),
    ...kinds("recursive", "-r -R --recursive --dereference-recursive"),
    ...kinds("directories", "-d --directories"),
    ...kinds("value", "-A -B -C -m -D --after-context --before-context --context --max-count --devices --label"),
    ...kinds("value", "--include --exclude --exclude-dir --binary-files --group-separator"),
    ...kinds("optional", "--color --colour"),
  },
};

const LS: ReadForm = {
  operands: "files",
  bare: "cwd",
  options: {
    ...kinds("value", "-I -w -T --ignore --hide --width --tabsize --block-size --format --sort --time --time-style"),
    ...kinds("value", "--quoting-style --indicator-style"),
    ...kinds("optional", "--color --classify --hyperlink"),
  },
};

const CHECKSUM: ReadForm = { operands: "files", options: kinds("unknown", "-c --check") };
const FILES: ReadForm = { operands: "files" };
const NONE: ReadForm = { operands: "none" };

/**
 * What the read-only commands of {@link SHELL_COMMANDS} read. A command not here (`which`, `type` and `whereis`
 * read the folders of `$PATH`; every `git` subcommand reads the repository) reads what the line does not say.
 * `find` reads its starting points (the working folder without one) and the files of `-newer` and friends.
 *
 * @example
 * ```ts
 * SHELL_READS.grep?.options?.["-f"]; // "patternFile": grep -f pats.txt reads pats.txt
 * ```
 */
export const SHELL_READS: Readonly<Record<string, ReadForm>> = {
  ...Object.fromEntries(words("echo printf true pwd basename dirname tr tee cd").map((c) => [c, NONE] as const)),
  ...Object.fromEntries(words("cat readlink").map((c) => [c, FILES] as const)),
  ...Object.fromEntries(words("md5sum sha1sum sha256sum").map((c) => [c, CHECKSUM] as const)),
  ...{ grep: GREP, egrep: GREP, fgrep: GREP, ls: LS, ll: LS },
  head: { operands: "files", options: kinds("value", "-n -c --lines --bytes") },
  tail: {
    operands: "files",
    options: {
      ...kinds("value", "-n -c -s --lines --bytes --sleep-interval --pid --max-unchanged-stats"),
      ...kinds("optional", "--follow"),
    },
  },
  wc: { operands: "files", options: kinds("unknown", "--files0-from") },
  nl: {
    operands: "files",
    options: kinds(
      "value",
      "-b -d -f -h -i -l -n -s -v -w --body-numbering --section-delimiter --footer-numbering --header-numbering",
      "--line-increment --join-blank-lines --number-format --number-separator --starting-line-number --number-width",
    ),
  },
  cut: { operands: "files", options: kinds("value", "-b -c -d -f --bytes --characters --delimiter --fields") },
  column: {
    operands: "files",
    // Not -n: a flag in the BSD column, a value in util-linux's.
    options: kinds(
      "value",
      "-c -s -o -O -N -l -E -H -R -T -W -r -i -p --output-width --separator --output-separator --table-name",
      "--table-order --table-columns --table-columns-limit --table-noextreme --table-hide --table-right",
      "--table-truncate --table-wrap --tree --tree-id --tree-parent",
    ),
  },
  more: { operands: "files", options: kinds("value", "-n --lines") },
  od: {
    operands: "files",
    options: {
      ...kinds("value", "-A -j -N -S -t --address-radix --skip-bytes --read-bytes --format --endian"),
      ...kinds("optional", "-w --width --strings"),
    },
  },
  hexdump: {
    operands: "files",
    options: {
      ...kinds("value", "-e -n -s --format --length --skip"),
      ...kinds("file", "-f --format-file"),
      ...kinds("optional", "-L --color"),
    },
  },
  strings: {
    operands: "files",
    responseFiles: true,
    options: kinds("value", "-n -t -T -e -U -s --bytes --radix --target --encoding --unicode --output-separator"),
  },
  cmp: { operands: "files", options: kinds("value", "-i -n --ignore-initial --bytes") },
  diff: {
    operands: "files",
    options: {
      ...kinds("value", "-C -U -D -F -I -L -S -W -x --ifdef --show-function-line --ignore-matching-lines --label"),
      ...kinds("value", "--starting-file --width --exclude --line-format --horizon-lines --tabsize --palette"),
      ...kinds("value", "--old-line-format --new-line-format --unchanged-line-format --old-group-format"),
      ...kinds("value", "--new-group-format --changed-group-format --unchanged-group-format"),
      ...kinds("optional", "--context --unified --color"),
      ...kinds("file", "-X --exclude-from --from-file --to-file"),
    },
  },
  stat: { operands: "files", options: kinds("value", "-c --format --printf --cached") },
  realpath: { operands: "files", options: kinds("file", "--relative-to --relative-base") },
  du: {
    operands: "files",
    bare: "cwd",
    options: {
      ...kinds("value", "-B -d -t --block-size --max-depth --threshold --exclude --time-style"),
      ...kinds("optional", "--time"),
      ...kinds("file", "-X --exclude-from"),
      ...kinds("unknown", "--files0-from"),
    },
  },
  tree: {
    operands: "files",
    bare: "cwd",
    ignoreFiles: [".gitignore", ".git/info/exclude"], // with --gitignore
    options: {
      ...kinds("value", "--filelimit --timefmt --charset --sort --hintro --houtro"),
      ...kinds("file", "--infofile"),
    },
  },
  file: {
    operands: "files",
    options: {
      ...kinds("value", "-F -P -e --separator --parameter --exclude --exclude-quiet"),
      ...kinds("unknown", "-f -m --files-from --magic-file"),
    },
  },
  less: {
    operands: "files",
    options: {
      ...kinds("value", "-b -h -j -p -P -x -y -z -# -D --buffers --max-back-scroll --jump-target --pattern --prompt"),
      ...kinds("value", "--tabs --max-forw-scroll --window --shift --color"),
      ...kinds("file", "-k -T --lesskey-file --tag-file --lesskey-src"),
      ...kinds("unknown", "-t --tag"), // the tags file of the working folder, and the file it names
    },
  },
  sort: {
    operands: "files",
    options: {
      ...kinds("value", "-k -t -S -T --key --field-separator --buffer-size --temporary-directory --parallel"),
      ...kinds("value", "--batch-size --sort"),
      ...kinds("file", "--random-source"),
      ...kinds("unknown", "--files0-from"),
    },
  },
  uniq: FILES,
  xxd: FILES,
  sed: {
    operands: "afterPattern",
    options: { ...kinds("pattern", "-e --expression"), ...kinds("patternFile", "-f --file") },
  },
  find: { operands: "files", bare: "cwd" },
  rg: {
    operands: "afterPattern",
    bare: "search",
    ignoreFiles: [".gitignore", ".ignore", ".rgignore", ".git/info/exclude"],
    options: {
      ...kinds("pattern", "-e --regexp"),
      ...kinds("patternFile", "-f --file"),
      ...kinds("file", "--ignore-file"),
      ...kinds("noPattern", "--files --type-list"),
      ...kinds("unknown", "--hostname-bin"), // runs a program
      ...kinds("value", "-A -B -C -m -M -d -j -E -g -t -T -r --after-context --before-context --context --max-count"),
      ...kinds("value", "--max-columns --max-depth --maxdepth --threads --encoding --glob --iglob --type --type-not"),
      ...kinds("value", "--type-add --type-clear --replace --color --colors --context-separator --path-separator"),
      ...kinds("value", "--field-context-separator --field-match-separator --sort --sortr --pre-glob --engine"),
      ...kinds("value", "--max-filesize --dfa-size-limit --regex-size-limit --hyperlink-format --generate"),
    },
  },
  ag: {
    operands: "afterPattern",
    bare: "search",
    ignoreFiles: [".gitignore", ".ignore", ".agignore", ".hgignore", ".git/info/exclude"],
    options: {
      ...kinds("pattern", "-g"),
      ...kinds("file", "-p --path-to-ignore"),
      ...kinds("value", "-G -m -W --file-search-regex --ignore --ignore-dir --max-count --width --depth --workers"),
      ...kinds("value", "--color-line-number --color-match --color-path"),
      ...kinds("optional", "-A -B -C --after --before --context"),
    },
  },
};

const ROWS = new Map(SHELL_COMMANDS.map((row) => [row.command, row]));

/** git options before the subcommand that change nothing we track (`-C <dir>` is handled apart). */
const GIT_GLOBAL_FLAGS = new Set(
  words("--no-pager -P -p --paginate --no-optional-locks --literal-pathspecs --glob-pathspecs --noglob-pathspecs"),
);

/** Environment settings that cannot make a known reader write (`LC_ALL=C sort`, `GIT_PAGER=cat git log`). */
const SAFE_ASSIGNMENT = /^(LC_[A-Z]+|LANG|LANGUAGE|TZ|COLUMNS|LINES|TERM|NO_COLOR|FORCE_COLOR|GREP_COLORS?)$/;
const PAGER_ASSIGNMENT = /^(PAGER|GIT_PAGER)$/;

/** Files a write to changes nothing we track. */
const DEVICE = /^\/dev\/(null|stdout|stderr|tty|fd\/\d+)$/;

/** Folders a bare program name may be spelled with (`/usr/bin/cat` is `cat`; `./cat` is a local program). */
const BIN_DIR = /^\/(usr\/(local\/)?)?s?bin\/[^/]+$/;

// ---------------------------------------------------------------------------------------------------------------
// Lexing

/**
 * One word of a command, after quote removal. `exact`: `text` is what the program receives. Otherwise `text` is
 * the word as written and its value is only known when the shell runs (`$VAR`, a glob, `~`); `many`: it may become
 * several words or none (unquoted `$VAR`, a glob, a brace expansion); `optionLike`: it may start with `-`.
 */
interface Word {
  text: string;
  exact: boolean;
  many: boolean;
  optionLike: boolean;
  /**
   * For a word whose only unknown parts are patterns and brace expansions (`src/*.py`), the text before the first
   * of them (`src/`): every word it becomes starts with it. `undefined` otherwise.
   */
  glob: string | undefined;
}

type Separator = "|" | "|&" | "&&" | "||" | ";" | "\n" | "&" | "(" | ")" | ";;";

type Token =
  | { kind: "word"; word: Word }
  | { kind: "sep"; op: Separator }
  /** A redirection, with its fd number (`2>`) and its target word (for `<<`, the delimiter; the body is dropped). */
  | { kind: "redir"; op: string; fd: string | undefined };

/** Characters that end an unquoted word. */
const META = new Set([" ", "\t", "\n", ";", "&", "|", "<", ">", "(", ")"]);
const NAME_START = /[A-Za-z_]/;
const NAME_CHAR = /[A-Za-z0-9_]/;
const SPECIAL_PARAM = /[0-9@*#?$!-]/;

/** Thrown inside the lexer for what is beyond the model; {@link lex} turns it into `undefined`. */
class Beyond extends Error {}

/** The lexer's view of one word being read. */
interface WordState {
  text: string;
  exact: boolean;
  many: boolean;
  optionLike: boolean;
  /** Nothing read yet (so an unknown part here makes the word option-like). */
  empty: boolean;
  /** Some part was quoted (a heredoc delimiter with quotes keeps its body unexpanded). */
  quoted: boolean;
  /** The text before the first unknown part. */
  prefix: string | undefined;
  /** Some unknown part is neither a pattern nor a brace expansion (`$X`, `~`). */
  dynamic: boolean;
}

/**
 * Adds `part` (as written) to the word and marks its value unknown from here on: `many` when it may become several
 * words or none (a glob, a brace expansion, an unquoted `$VAR`); `splits` when a part of it may become a word of its
 * own, so an option (an unquoted `$VAR`); `dash` when its value may start with `-` (all but `~`); `glob` when it is
 * a pattern or a brace expansion (the words it becomes start with the text before it).
 */
function unknownPart(w: WordState, part: string, many: boolean, splits: boolean, dash = true, glob = false): void {
  if (w.prefix === undefined) w.prefix = w.text;
  if (!glob) w.dynamic = true;
  w.text += part;
  if ((w.empty && dash) || splits) w.optionLike = true;
  if (many) w.many = true;
  w.exact = false;
  w.empty = false;
}

function literal(w: WordState, text: string): void {
  if (w.empty && text.startsWith("-")) w.optionLike = true;
  w.text += text;
  if (text !== "") w.empty = false;
}

/** Reads `$...` at `s[i]` (inside double quotes when `quoted`); returns the index after it. */
function readDollar(s: string, i: number, w: WordState, quoted: boolean): number {
  const next = s[i + 1];
  if (next === "(") throw new Beyond("command substitution");
  if (next === "{") {
    const end = s.indexOf("}", i + 2);
    if (end < 0) throw new Beyond("unterminated ${");
    const inner = s.slice(i + 2, end);
    if (/`|\$\(/.test(inner)) throw new Beyond("command substitution");
    unknownPart(w, s.slice(i, end + 1), !quoted, !quoted);
    return end + 1;
  }
  if (next !== undefined && (NAME_START.test(next) || SPECIAL_PARAM.test(next))) {
    let j = i + 2;
    if (NAME_START.test(next)) while (j < s.length && NAME_CHAR.test(s[j] as string)) j += 1;
    unknownPart(w, s.slice(i, j), !quoted, !quoted);
    return j;
  }
  literal(w, "$");
  return i + 1;
}

/** Reads a double-quoted part starting after the opening `"`; returns the index after the closing `"`. */
function readDoubleQuoted(s: string, start: number, w: WordState): number {
  let i = start;
  w.quoted = true;
  while (i < s.length) {
    const c = s[i] as string;
    if (c === '"') {
      if (w.empty) w.empty = false; // `""` is an (empty) word
      return i + 1;
    }
    if (c === "`") throw new Beyond("command substitution");
    if (c === "$") {
      i = readDollar(s, i, w, true);
      continue;
    }
    if (c === "\\" && i + 1 < s.length) {
      const n = s[i + 1] as string;
      if (n === "\n") i += 2;
      else if ('$`"\\'.includes(n)) {
        literal(w, n);
        i += 2;
      } else {
        literal(w, "\\");
        i += 1;
      }
      continue;
    }
    literal(w, c);
    i += 1;
  }
  throw new Beyond("unterminated double quote");
}

/** The rest of the word from `i`, quotes and all (quoted metacharacters do not end it). */
function restOfWord(s: string, i: number): string {
  let j = i;
  while (j < s.length && !META.has(s[j] as string)) {
    const c = s[j] as string;
    if (c === "\\") j += 2;
    else if (c === "'" || c === '"') {
      const end = s.indexOf(c, j + 1);
      j = end < 0 ? s.length : end + 1;
    } else j += 1;
  }
  return s.slice(i, j);
}

/** The unquoted rest of a word from `i`: up to a metacharacter or a quote. */
function unquotedAhead(s: string, i: number): string {
  let j = i;
  while (j < s.length && !META.has(s[j] as string) && !"'\"\\$`".includes(s[j] as string)) j += 1;
  return s.slice(i, j);
}

/** Reads one word starting at `s[start]` (not a metacharacter); returns it and the index after it. */
function readWord(s: string, start: number): { word: WordState; end: number } {
  const w: WordState = {
    text: "",
    exact: true,
    many: false,
    optionLike: false,
    empty: true,
    quoted: false,
    prefix: undefined,
    dynamic: false,
  };
  let i = start;
  while (i < s.length) {
    const c = s[i] as string;
    if (META.has(c)) break;
    if (c === "\\") {
      if (s[i + 1] === "\n") i += 2;
      else if (i + 1 < s.length) {
        w.quoted = true;
        literal(w, s[i + 1] as string);
        i += 2;
      } else {
        literal(w, "\\");
        i += 1;
      }
    } else if (c === "'") {
      const end = s.indexOf("'", i + 1);
      if (end < 0) throw new Beyond("unterminated single quote");
      w.quoted = true;
      literal(w, s.slice(i + 1, end));
      w.empty = false;
      i = end + 1;
    } else if (c === '"') i = readDoubleQuoted(s, i + 1, w);
    else if (c === "`") throw new Beyond("command substitution");
    else if (c === "$" && s[i + 1] === "'") {
      // ANSI-C quoting: its escapes are not decoded, so its value is unknown (but one word).
      let j = i + 2;
      while (j < s.length && s[j] !== "'") j += s[j] === "\\" ? 2 : 1;
      if (j >= s.length) throw new Beyond("unterminated $'");
      w.quoted = true;
      unknownPart(w, s.slice(i, j + 1), false, false);
      i = j + 1;
    } else if (c === "$" && s[i + 1] === '"') i = readDoubleQuoted(s, i + 2, w);
    else if (c === "$") i = readDollar(s, i, w, false);
    else if (c === "*" || c === "?" || (c === "[" && restOfWord(s, i + 1).includes("]"))) {
      unknownPart(w, c, true, false, true, true); // its file names start with what comes before it
      i += 1;
    } else if (c === "{" && /(,|\.\.).*\}/s.test(restOfWord(s, i + 1))) {
      unknownPart(w, c, true, false, true, true);
      i += 1;
    } else if (c === "~" && w.empty && /^($|\/|[A-Za-z0-9_.-]*(\/|$))/.test(unquotedAhead(s, i + 1))) {
      unknownPart(w, c, false, false, false);
      i += 1;
    } else {
      literal(w, c);
      i += 1;
    }
  }
  return { word: w, end: i };
}

/** The operator at `s[i]`, longest first. */
const OPERATORS = [...words("<<< <<- &>> ;;& << <> <& >> >| >& &> && || |& ;; ;& < > | & ; ( )"), "\n"];

/** A heredoc whose body starts after the next newline. */
interface PendingHeredoc {
  delimiter: string;
  stripTabs: boolean;
  expands: boolean;
}

/** Skips the bodies of the pending heredocs, starting at `i` (just after a newline); returns where the line resumes. */
function skipHeredocs(s: string, start: number, pending: PendingHeredoc[]): number {
  let i = start;
  for (const doc of pending) {
    for (;;) {
      if (i >= s.length) return i; // bash reads to the end, with a warning
      const nl = s.indexOf("\n", i);
      const end = nl < 0 ? s.length : nl;
      const line = s.slice(i, end);
      i = end + 1;
      if ((doc.stripTabs ? line.replace(/^\t+/, "") : line) === doc.delimiter) break;
      if (doc.expands && /`|\$\(/.test(line)) throw new Beyond("command substitution in a heredoc");
    }
  }
  pending.length = 0;
  return i;
}

/**
 * Splits a command line into words, separators and redirections, as bash would; `undefined` for what is beyond
 * the model (command or process substitution, an unterminated quote).
 */
function lex(s: string): Token[] | undefined {
  const tokens: Token[] = [];
  const pending: PendingHeredoc[] = [];
  let heredocNext: { stripTabs: boolean } | undefined;
  let i = 0;
  try {
    while (i < s.length) {
      const c = s[i] as string;
      if (c === " " || c === "\t") {
        i += 1;
        continue;
      }
      if (c === "\\" && s[i + 1] === "\n") {
        i += 2;
        continue;
      }
      if (c === "#") {
        while (i < s.length && s[i] !== "\n") i += 1;
        continue;
      }
      const op = OPERATORS.find((o) => s.startsWith(o, i));
      if (op !== undefined) {
        if ((op === "<" || op === ">") && s[i + 1] === "(") throw new Beyond("process substitution");
        i += op.length;
        if (op === "\n") {
          tokens.push({ kind: "sep", op });
          i = skipHeredocs(s, i, pending);
        } else if ("|&;()".includes(op[0] as string) && !op.includes(">")) {
          tokens.push({ kind: "sep", op: op as Separator });
        } else {
          tokens.push({ kind: "redir", op, fd: undefined });
          if (op === "<<" || op === "<<-") heredocNext = { stripTabs: op === "<<-" };
        }
        continue;
      }
      const { word, end } = readWord(s, i);
      const raw = s.slice(i, end);
      i = end;
      if (/^\d+$/.test(raw) && (s[i] === "<" || s[i] === ">")) {
        const redirect = OPERATORS.find((o) => s.startsWith(o, i)) as string;
        if (s[i + 1] === "(") throw new Beyond("process substitution");
        i += redirect.length;
        tokens.push({ kind: "redir", op: redirect, fd: raw });
        if (redirect === "<<" || redirect === "<<-") heredocNext = { stripTabs: redirect === "<<-" };
        continue;
      }
      if (heredocNext !== undefined) {
        pending.push({ delimiter: word.text, stripTabs: heredocNext.stripTabs, expands: !word.quoted });
        heredocNext = undefined;
      }
      const { text, exact, many, optionLike, prefix, dynamic } = word;
      const glob = dynamic ? undefined : prefix;
      tokens.push({ kind: "word", word: { text, exact, many, optionLike, glob } });
    }
  } catch (e) {
    if (e instanceof Beyond) return undefined;
    throw e;
  }
  return tokens;
}

// ---------------------------------------------------------------------------------------------------------------
// Parsing

/** A redirection of one simple command: its operator, fd number and target (for a heredoc, its delimiter). */
interface Redirect {
  op: string;
  fd: string | undefined;
  target: Word;
}

/** One simple command: its leading `NAME=value` assignments, its words, its redirections. */
interface SimpleCommand {
  assignments: Word[];
  words: Word[];
  redirects: Redirect[];
}

/** A command line: pipelines joined by `&&`, `||`, `;` (or a newline), each with the operator before it. */
type CommandLine = { op: ";" | "&&" | "||"; pipeline: SimpleCommand[] }[];

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*\+?=/;

/**
 * Groups tokens into pipelines and simple commands; `undefined` for what is beyond the model: subshells and
 * groups, background jobs, `case` arms.
 */
function parse(tokens: Token[]): CommandLine | undefined {
  const newCommand = (): SimpleCommand => ({ assignments: [], words: [], redirects: [] });
  let command = newCommand();
  let pipeline: SimpleCommand[] = [command];
  const line: CommandLine = [{ op: ";", pipeline }];
  let continuation = false; // after `|`, `&&`, `||` a newline continues the line
  for (let i = 0; i < tokens.length; i += 1) {
    const token = tokens[i] as Token;
    if (token.kind === "word") {
      const w = token.word;
      if (command.words.length === 0 && ASSIGNMENT.test(w.text)) command.assignments.push(w);
      else command.words.push(w);
      continuation = false;
    } else if (token.kind === "redir") {
      const target = tokens[i + 1];
      if (target?.kind !== "word") return undefined;
      command.redirects.push({ op: token.op, fd: token.fd, target: target.word });
      i += 1;
      continuation = false;
    } else if (token.op === "|" || token.op === "|&") {
      command = newCommand();
      pipeline.push(command);
      continuation = true;
    } else if (token.op === "&&" || token.op === "||" || token.op === ";" || token.op === "\n") {
      if (token.op === "\n" && continuation) continue;
      command = newCommand();
      pipeline = [command];
      line.push({ op: token.op === "\n" ? ";" : token.op, pipeline });
      continuation = token.op === "&&" || token.op === "||";
    } else return undefined; // `&`, `(`, `)`, `;;`, ...
  }
  return line;
}

// ---------------------------------------------------------------------------------------------------------------
// What one command writes

/** What one simple command does: only reads, writes these paths (as written), or may change anything. */
type Effect = { kind: "read" } | { kind: "write"; paths: string[] } | { kind: "all" };

const ALL: Effect = { kind: "all" };

/** The long option `name` (`--out`) stands for in `row`: an exact one, a writing one it abbreviates, a unique one. */
function longOption(row: CommandRow, name: string): string | undefined {
  const names = [...optionNames(row)].filter((o) => o.startsWith("--"));
  if (names.includes(name)) return name;
  if (name.length < 3) return undefined;
  const candidates = names.filter((o) => o.startsWith(name));
  // An abbreviation that may stand for a writing option counts as it (getopt_long accepts unique abbreviations).
  return (
    candidates.find((o) => writeFormOf(row, o) !== undefined) ?? (candidates.length === 1 ? candidates[0] : undefined)
  );
}

function optionNames(row: CommandRow): Set<string> {
  const names = new Set([...(row.valueOptions ?? []), ...(row.flags ?? [])]);
  for (const form of row.writes ?? []) if ("option" in form) names.add(form.option);
  return names;
}

function writeFormOf(row: CommandRow, option: string): Extract<WriteForm, { option: string }> | undefined {
  for (const form of row.writes ?? []) if ("option" in form && form.option === option) return form;
  return undefined;
}

/** The arguments of a command, read with its row: the writing options used, the operands, option values. */
interface ParsedArgs {
  hits: { form: Extract<WriteForm, { option: string }>; value: Word | undefined }[];
  operands: Word[];
  /** How many operands came before `--`, when there was one. */
  dashes: number | undefined;
  values: { option: string; value: Word | undefined }[];
}

/** Reads a command's arguments with its row (getopt's rules); `undefined` when they are beyond the model. */
function parseArgs(row: CommandRow, args: readonly Word[]): ParsedArgs | undefined {
  const parsed: ParsedArgs = { hits: [], operands: [], dashes: undefined, values: [] };
  const takesValue = new Set(row.valueOptions ?? []);
  const strict = row.flags !== undefined;
  let optionsEnded = false;
  for (let i = 0; i < args.length; i += 1) {
    const w = args[i] as Word;
    const next = (): Word | undefined => {
      i += 1;
      return args[i];
    };
    if (optionsEnded) {
      parsed.operands.push(w);
      continue;
    }
    if (!w.exact && w.optionLike) return undefined; // it could be any option, a writing one included
    const t = w.text;
    if (!w.exact || t === "-" || !(t.startsWith("-") || (t.startsWith("+") && writeFormOf(row, "+")))) {
      parsed.operands.push(w);
      if (row.optionsFirst) optionsEnded = true;
      continue;
    }
    if (t === "--") {
      optionsEnded = true;
      parsed.dashes = parsed.operands.length;
      continue;
    }
    if (t.startsWith("+")) {
      parsed.hits.push({ form: writeFormOf(row, "+") as ParsedArgs["hits"][number]["form"], value: w });
      continue;
    }
    if (t.startsWith("--")) {
      const eq = t.indexOf("=");
      const name = longOption(row, eq < 0 ? t : t.slice(0, eq));
      const attached: Word | undefined = eq < 0 ? undefined : { ...w, text: t.slice(eq + 1), optionLike: false };
      if (name === undefined) {
        if (strict) return undefined;
        continue;
      }
      const form = writeFormOf(row, name);
      if (form !== undefined) {
        const v = attached ?? (form.writes === "value" ? next() : undefined);
        parsed.hits.push({ form, value: v });
      } else if (takesValue.has(name)) parsed.values.push({ option: name, value: attached ?? next() });
      continue;
    }
    if (row.singleDash) {
      const form = writeFormOf(row, t);
      if (form !== undefined) parsed.hits.push({ form, value: form.writes === "value" ? next() : undefined });
      else if (takesValue.has(t)) parsed.values.push({ option: t, value: next() });
      else if (takesValue.has(t.slice(0, 2)))
        parsed.values.push({ option: t.slice(0, 2), value: { ...w, text: t.slice(2) } });
      else if (strict && !(row.flags ?? []).includes(t)) return undefined;
      continue;
    }
    // A bundle of one-letter options: `-nr`, `-o out`, `-oout`, `-ni.bak`.
    for (let j = 1; j < t.length; j += 1) {
      const option = `-${t[j]}`;
      const rest = t.slice(j + 1);
      const restWord: Word | undefined = rest === "" ? undefined : { ...w, text: rest, optionLike: false };
      const form = writeFormOf(row, option);
      if (form !== undefined) {
        if (form.writes === "value") {
          parsed.hits.push({ form, value: restWord ?? next() });
          break;
        }
        if (form.writes === "operands" && form.value === "optional") {
          parsed.hits.push({ form, value: restWord });
          break;
        }
        parsed.hits.push({ form, value: undefined });
      } else if (takesValue.has(option)) {
        parsed.values.push({ option, value: restWord ?? next() });
        break;
      } else if (strict && !(row.flags ?? []).includes(option)) return undefined;
    }
  }
  return parsed;
}

/** sed commands without an argument. */
const SED_PLAIN = new Set(["{", "=", "d", "D", "g", "G", "h", "H", "n", "N", "p", "P", "x", "z", "F"]);

/** A path as written, or `undefined` when it is not known before the shell runs. */
function pathOf(w: Word | undefined): string | undefined {
  return w?.exact && w.text !== "" ? w.text : undefined;
}

/** The paths `list` names, or `undefined` when one is not known before the shell runs. */
function pathsOf(list: readonly Word[]): string[] | undefined {
  const paths: string[] = [];
  for (const w of list) {
    const p = pathOf(w);
    if (p === undefined) return undefined;
    paths.push(p);
  }
  return paths;
}

/** The paths the operand forms of `row` write, or `undefined` when they are not known. */
function operandWrites(row: CommandRow, parsed: ParsedArgs): string[] | undefined {
  const { operands, dashes } = parsed;
  const counted = operands.some((w) => w.many);
  const out: string[] = [];
  for (const form of row.writes ?? []) {
    if (!("operand" in form)) continue;
    let written: Word[];
    if (form.operand === "all") written = operands;
    else if (form.operand === "afterDashes") {
      if (dashes === undefined || dashes === operands.length) return undefined;
      written = operands.slice(dashes);
    } else if (counted)
      return undefined; // how many operands there are is only known when the shell runs
    else if (form.operand === "last") written = operands.slice(-1);
    else written = operands.slice(form.operand - 1, form.operand);
    const paths = pathsOf(written.filter((w) => !(w.exact && w.text === "-")));
    if (paths === undefined) return undefined;
    out.push(...paths);
  }
  return out;
}

/**
 * The files a `sed` script writes (`w FILE`, `W FILE`, `s/a/b/w FILE`) and reads (`r FILE`, `R FILE`), or
 * `undefined` when it may change anything (`e`, `s///e`) or is not understood. GNU sed's grammar: addresses, `!`, a
 * command, its arguments.
 */
function sedScript(script: string): { writes: string[]; reads: string[] } | undefined {
  const writes: string[] = [];
  const reads: string[] = [];
  let i = 0;
  const s = script;
  const toEndOfLine = (): string => {
    const nl = s.indexOf("\n", i);
    const end = nl < 0 ? s.length : nl;
    const text = s.slice(i, end);
    i = end;
    return text;
  };
  const skipSpace = () => {
    while (i < s.length && (s[i] === " " || s[i] === "\t")) i += 1;
  };
  /** Skips a delimited part (`/re/`, a replacement) from just after its opening delimiter. */
  const delimited = (delim: string): boolean => {
    while (i < s.length && s[i] !== delim) {
      if (s[i] === "\\") i += 1;
      i += 1;
    }
    if (i >= s.length) return false;
    i += 1;
    return true;
  };
  const address = (): boolean => {
    const c = s[i];
    if (c === undefined) return true;
    if (/[0-9]/.test(c)) {
      while (/[0-9~]/.test(s[i] ?? "")) i += 1;
    } else if (c === "$") i += 1;
    else if (c === "/" || c === "\\") {
      const delim = c === "/" ? "/" : s[i + 1];
      if (delim === undefined || delim === "\n" || delim === "\\") return false;
      i += c === "/" ? 1 : 2;
      if (!delimited(delim)) return false;
      while (s[i] === "I" || s[i] === "M") i += 1;
    } else if ((c === "+" || c === "~") && /[0-9]/.test(s[i + 1] ?? "")) {
      i += 1;
      while (/[0-9]/.test(s[i] ?? "")) i += 1;
    }
    return true;
  };
  const fileArgument = (): string => {
    skipSpace();
    return toEndOfLine();
  };
  while (i < s.length) {
    const c = s[i] as string;
    if (c === ";" || c === "\n" || c === " " || c === "\t" || c === "}") {
      i += 1;
      continue;
    }
    if (c === "#") {
      toEndOfLine();
      continue;
    }
    if (!address()) return undefined;
    skipSpace();
    if (s[i] === ",") {
      i += 1;
      skipSpace();
      if (!address()) return undefined;
      skipSpace();
    }
    while (s[i] === "!" || s[i] === " " || s[i] === "\t") i += 1;
    const command = s[i];
    i += 1;
    if (command === undefined) return undefined;
    if (SED_PLAIN.has(command)) continue;
    if ("lLqQ".includes(command)) {
      skipSpace();
      while (/[0-9]/.test(s[i] ?? "")) i += 1;
    } else if (":btTv".includes(command)) {
      while (i < s.length && s[i] !== "\n" && s[i] !== ";") i += 1; // a label
    } else if ("aic".includes(command)) {
      while (i < s.length && s[i] !== "\n") i += s[i] === "\\" ? 2 : 1; // text; a `\` at the end continues it
    } else if ("rR".includes(command)) {
      const file = fileArgument();
      if (file !== "") reads.push(file);
    } else if ("wW".includes(command)) {
      const file = fileArgument();
      if (file === "") return undefined;
      writes.push(file);
    } else if (command === "s" || command === "y") {
      const delim = s[i];
      if (delim === undefined || delim === "\n" || delim === "\\") return undefined;
      i += 1;
      if (!delimited(delim) || !delimited(delim)) return undefined;
      while (command === "s" && i < s.length) {
        const flag = s[i] as string;
        if (flag === "e") return undefined; // runs the pattern space as a command
        if (flag === "w") {
          i += 1;
          const file = fileArgument();
          if (file === "") return undefined;
          writes.push(file);
        } else if (/[gpiImM0-9]/.test(flag)) i += 1;
        else break;
      }
    } else return undefined; // `e` runs a command; anything else is not understood
  }
  return { writes, reads };
}

/** What a `sed` command writes: its `-i` files, its script's `w` files. */
function sedEffect(row: CommandRow, parsed: ParsedArgs): Effect {
  if (parsed.hits.some(({ form }) => form.writes === "all")) return ALL; // `-f script.sed`: a script we do not read
  const scripts = parsed.values.filter((v) => v.option === "-e" || v.option === "--expression").map((v) => v.value);
  const operands = [...parsed.operands];
  if (scripts.length === 0) scripts.push(operands.shift());
  const scriptText: string[] = [];
  for (const w of scripts) {
    if (w === undefined) return { kind: "read" }; // no script: sed only prints its usage
    if (!w.exact) return ALL;
    scriptText.push(w.text);
  }
  const paths = sedScript(scriptText.join("\n"))?.writes;
  if (paths === undefined) return ALL;
  if (parsed.hits.some(({ form }) => form.writes === "operands")) {
    const files = pathsOf(operands);
    if (files === undefined) return ALL;
    return { kind: "write", paths: [...paths, ...files] }; // in place, even when it names no file (an error)
  }
  return writeOrRead(row, paths);
}

/** What a `find` command writes: its `-fprint` files; `-delete` its starting points. */
function findEffect(row: CommandRow, args: readonly Word[], parsed: ParsedArgs): Effect {
  const paths: string[] = [];
  for (const { form, value: v } of parsed.hits) {
    if (form.writes === "all") return ALL;
    if (form.writes === "value") {
      const p = pathOf(v);
      if (p === undefined) return ALL;
      paths.push(p);
    } else {
      // The starting points: the words before the expression (after -H, -L, -P, -D x, -Olevel).
      let i = 0;
      while (i < args.length && /^-([HLP]|O\d*|D)$/.test(args[i]?.text ?? "")) i += args[i]?.text === "-D" ? 2 : 1;
      const starts: Word[] = [];
      for (; i < args.length; i += 1) {
        const w = args[i] as Word;
        if (w.optionLike || ["(", ")", "!", ","].includes(w.text)) break;
        starts.push(w);
      }
      if (starts.some((w) => w.many)) return ALL;
      const roots = pathsOf(starts);
      if (roots === undefined) return ALL;
      paths.push(...(roots.length > 0 ? roots : ["."]));
    }
  }
  return writeOrRead(row, paths);
}

/** Read when a read-only command writes nothing we track (`/dev/null` is not a file we track), else a write. */
function writeOrRead(row: CommandRow, paths: string[]): Effect {
  const tracked = paths.filter((p) => !DEVICE.test(p));
  return row.readOnly && tracked.length === 0 ? { kind: "read" } : { kind: "write", paths: tracked };
}

/** What a command with a row writes, from its arguments. */
function rowEffect(row: CommandRow, args: readonly Word[]): Effect {
  if (row.writes === undefined && row.readOnly) return { kind: "read" }; // a plain reader: no argument makes it write
  const parsed = parseArgs(row, args);
  if (parsed === undefined) return ALL;
  if (row.command === "sed") return sedEffect(row, parsed);
  if (row.command === "find") return findEffect(row, args, parsed);
  const paths: string[] = [];
  for (const { form, value: v } of parsed.hits) {
    if (form.writes !== "value") return ALL;
    const p = pathOf(v);
    if (p === undefined) return ALL;
    paths.push(p);
  }
  const operands = operandWrites(row, parsed);
  if (operands === undefined) return ALL;
  paths.push(...operands);
  return writeOrRead(row, paths);
}

/** What a `git` command writes: its subcommand's row, with paths relative to `-C <dir>`. */
function gitEffect(args: readonly Word[]): Effect {
  let base: string | undefined;
  let i = 0;
  for (; i < args.length; i += 1) {
    const w = args[i] as Word;
    if (!w.exact) return ALL;
    if (w.text === "-C") {
      const dir = pathOf(args[i + 1]);
      if (dir === undefined || args[i + 1]?.many) return ALL;
      base = base === undefined || isAbsolute(dir) ? dir : posix.join(base, dir);
      i += 1;
    } else if (GIT_GLOBAL_FLAGS.has(w.text)) continue;
    // `-c name=value` can set a pager or an external diff; `--git-dir` and the rest are beyond the model.
    else if (w.text.startsWith("-")) return ALL;
    else break;
  }
  const row = ROWS.get(`git ${args[i]?.text}`);
  if (row === undefined) return ALL;
  const effect = rowEffect(row, args.slice(i + 1));
  if (effect.kind !== "write" || base === undefined) return effect;
  const dir = base;
  return { kind: "write", paths: effect.paths.map((p) => (isAbsolute(p) ? p : posix.join(dir, p))) };
}

/** The program a command word names: `cat`, `/usr/bin/cat`; `undefined` for `./cat` or an unknown word. */
function programName(w: Word): string | undefined {
  if (!w.exact) return undefined;
  if (!w.text.includes("/")) return w.text;
  return BIN_DIR.test(w.text) ? w.text.slice(w.text.lastIndexOf("/") + 1) : undefined;
}

/** Whether a leading `NAME=value` cannot make a known reader write. */
function safeAssignment(w: Word): boolean {
  const eq = w.text.indexOf("=");
  const name = w.text.slice(0, eq).replace(/\+$/, "");
  if (SAFE_ASSIGNMENT.test(name)) return true;
  return PAGER_ASSIGNMENT.test(name) && w.exact && ["", "cat"].includes(w.text.slice(eq + 1));
}

/** What one simple command does, its redirections apart. */
function commandEffect(command: SimpleCommand): Effect {
  if (!command.assignments.every(safeAssignment)) return ALL;
  const [program, ...args] = command.words;
  if (program === undefined) return { kind: "read" };
  const name = programName(program);
  if (name === undefined) return ALL;
  if (name === "git") return gitEffect(args);
  const row = ROWS.get(name);
  return row === undefined ? ALL : rowEffect(row, args);
}

/** The file a redirection writes, `null` for none (`2>&1`, `< in`, a heredoc), `undefined` when unknown. */
function redirectWrites(redirect: Redirect): string | null | undefined {
  const { op, target } = redirect;
  const row = REDIRECTIONS.find((r) => r.op === op);
  if (row === undefined || row.writes === "nothing") return row === undefined ? undefined : null;
  if (row.writes === "target unless fd" && target.exact && /^(\d+|-)$/.test(target.text)) return null; // `2>&1`, `>&-`
  if (target.many) return undefined;
  const path = pathOf(target);
  if (path === undefined) return undefined;
  return DEVICE.test(path) ? null : path;
}

// ---------------------------------------------------------------------------------------------------------------
// What one command reads

const READS = new Map(Object.entries(SHELL_READS));

/** Devices: reading one reads no file a write could change. */
const READ_DEVICE = /^\/dev\/(null|zero|u?random|full|stdin|stdout|stderr|tty|fd\/\d+)$/;

/** Option readings that take a value (the next word when none is attached). */
const TAKES_VALUE = new Set<ReadOption>(["value", "file", "pattern", "patternFile", "directories"]);

/** How an abbreviated long option that may stand for several is read: the widest reading first. */
const READ_PRIORITY: readonly ReadOption[] = [
  "unknown",
  "file",
  "patternFile",
  "pattern",
  "noPattern",
  "recursive",
  "directories",
  "optional",
  "value",
];

/**
 * Whether a part of a glob's path may stand for `..`: a name's leading dot is only matched by a `.` (or, to be
 * safe, a `[...]`), and the rest must match `.` (`.*`, `.?`, `..`); a brace expansion whose alternative may start
 * with a dot.
 */
function mayClimb(part: string): boolean {
  if (part.includes("{")) return /(^|[{,])[.[]/.test(part);
  const first = /^(\.|\[[^\]]*\])/.exec(part)?.[0];
  if (first === undefined || first === part) return false;
  const rest = part.slice(first.length).replaceAll("*", "");
  return rest === "" || rest === "." || rest === "?" || /^\[[^\]]*\]$/.test(rest);
}

/**
 * The folder the files of a glob word are in: the folder of the text before its first pattern (`src` for
 * `src/a*.py`, the working folder for `*.py`), one level up for each later part that may be `..` (`.*`).
 */
function globFolder(text: string, prefix: string): string {
  const slash = prefix.lastIndexOf("/");
  const folder = slash < 0 ? "." : slash === 0 ? "/" : prefix.slice(0, slash);
  const ups = text
    .slice(slash + 1)
    .split("/")
    .filter(mayClimb).length;
  return posix.join(folder, ...Array<string>(ups).fill(".."));
}

/** The path a word names, as written (a glob: its folder); `null` for none (`""`); `undefined` when unknown. */
function readPath(w: Word | undefined): string | null | undefined {
  if (w === undefined) return null;
  if (w.exact) return w.text === "" ? null : w.text;
  return w.glob === undefined ? undefined : globFolder(w.text, w.glob);
}

/** The part of `w` from `start` on (an option's attached value). */
function wordFrom(w: Word, start: number): Word {
  const glob = w.glob !== undefined && w.glob.length >= start ? w.glob.slice(start) : undefined;
  return { text: w.text.slice(start), exact: w.exact, many: w.many, optionLike: false, glob };
}

/**
 * What a read-only command's arguments name, read with its {@link ReadForm} (getopt's rules): the paths it reads, as
 * written, and its pattern or script words; `undefined` when what it reads is not known. `fed`: its standard input
 * is piped or redirected.
 */
function argReads(
  row: CommandRow,
  form: ReadForm,
  args: readonly Word[],
  fed: boolean,
): { paths: string[]; patterns: Word[] } | undefined {
  const paths: string[] = [];
  const patterns: Word[] = [];
  if (form.operands === "none") return { paths, patterns };
  const options = new Map<string, ReadOption>((row.valueOptions ?? []).map((o) => [o, "value"]));
  for (const f of row.writes ?? []) if ("option" in f && f.writes === "value") options.set(f.option, "value");
  for (const [o, kind] of Object.entries(form.options ?? {})) options.set(o, kind);
  const longKind = (name: string): ReadOption | undefined => {
    const exact = options.get(name);
    if (exact !== undefined) return exact;
    const found = new Set([...options].filter(([o]) => o.startsWith("--") && o.startsWith(name)).map(([, k]) => k));
    return READ_PRIORITY.find((k) => found.has(k)); // getopt_long takes abbreviations
  };
  const operands: Word[] = [];
  let patternGiven = false;
  let recursive = false;
  let ended = false;
  /** Reads an option used with its value; `false` when what it reads is not known. */
  const take = (kind: ReadOption, v: Word | undefined): boolean => {
    if (kind === "unknown") return false;
    if (kind === "recursive") recursive = true;
    if (kind === "noPattern" || kind === "pattern" || kind === "patternFile") patternGiven = true;
    if (v === undefined) return true; // no value: an error
    if (kind === "pattern") patterns.push(v);
    if (kind === "directories" && !(v.exact && ["read", "skip"].includes(v.text))) recursive = true;
    if (kind !== "file" && kind !== "patternFile") return true;
    const p = readPath(v);
    if (p !== null && p !== undefined) paths.push(p);
    return p !== undefined;
  };
  for (let i = 0; i < args.length; i += 1) {
    const w = args[i] as Word;
    const next = (): Word | undefined => {
      i += 1;
      return args[i];
    };
    const t = w.text;
    const known = w.exact ? t : (w.glob ?? ""); // the text before the first pattern
    if (ended || t === "-" || !known.startsWith("-")) {
      operands.push(w); // a glob that may become options too: see below
      if (row.optionsFirst) ended = true;
      continue;
    }
    if (t === "--") {
      ended = true;
      continue;
    }
    if (t.startsWith("--")) {
      const eq = t.indexOf("=");
      if (!w.exact && (eq < 0 || eq >= known.length)) return undefined; // an option only known when the shell runs
      const kind = longKind(eq < 0 ? t : t.slice(0, eq));
      const attached = eq < 0 ? undefined : wordFrom(w, eq + 1);
      if (kind === undefined) {
        const p = readPath(attached); // an option it may not know: its value may be a file
        if (p === undefined) return undefined;
        if (p !== null) paths.push(p);
      } else if (!take(kind, attached ?? (TAKES_VALUE.has(kind) ? next() : undefined))) return undefined;
      continue;
    }
    if (row.singleDash) {
      if (!w.exact) return undefined;
      const whole = options.get(t);
      const short = options.get(t.slice(0, 2));
      if (whole !== undefined && !take(whole, TAKES_VALUE.has(whole) ? next() : undefined)) return undefined;
      if (whole === undefined && short !== undefined && t.length > 2 && !take(short, wordFrom(w, 2))) return undefined;
      continue;
    }
    // A bundle of one-letter options: `-rn`, `-A3`, `-fpats.txt`.
    for (let j = 1; j < t.length; j += 1) {
      if (j >= known.length) return undefined; // an option only known when the shell runs
      const kind = options.get(`-${t[j]}`);
      if (kind === undefined) continue;
      if (!TAKES_VALUE.has(kind) && kind !== "optional") {
        if (!take(kind, undefined)) return undefined;
        continue;
      }
      const attached = j + 1 < t.length ? wordFrom(w, j + 1) : undefined;
      if (!take(kind, attached ?? (kind === "optional" ? undefined : next()))) return undefined;
      break;
    }
  }
  let files = operands;
  if (form.operands === "afterPattern" && !patternGiven) {
    const [pattern, ...rest] = operands;
    if (pattern !== undefined) patterns.push(pattern);
    files = rest;
  }
  if (form.responseFiles && files.some((f) => f.text.startsWith("@"))) return undefined;
  for (const f of files) {
    if (f.exact && f.text === "-") continue; // its standard input
    const p = readPath(f);
    if (p === undefined) return undefined;
    if (p !== null) paths.push(p);
  }
  if (files.length === 0 && (form.bare === "cwd" || recursive || (form.bare === "search" && !fed))) paths.push(".");
  // A glob may become several words, options among them: then a pattern or an option's value may be a file.
  if (args.some((a) => !a.exact)) paths.push(...args.filter((a) => a.exact && /^[^-]/.test(a.text)).map((a) => a.text));
  return { paths, patterns };
}

/** The paths a `find` command reads, as written: its starting points (`.` without one), the files its tests name. */
function findReads(args: readonly Word[]): string[] | undefined {
  let i = 0;
  while (i < args.length && /^-([HLP]|O\d*|D)$/.test(args[i]?.text ?? "")) i += args[i]?.text === "-D" ? 2 : 1;
  const paths: string[] = [];
  let starts = 0;
  for (; i < args.length; i += 1) {
    const w = args[i] as Word;
    if (w.optionLike || ["(", ")", "!", ","].includes(w.text)) break;
    const p = readPath(w);
    if (p === undefined) return undefined;
    if (p !== null) paths.push(p);
    starts += 1;
  }
  if (starts === 0) paths.push(".");
  for (; i < args.length; i += 1) {
    const t = args[i]?.text;
    if (t === "-files0-from") return undefined; // its starting points are in a file
    // Every word is looked at (a value that looks like a test only adds a path).
    if (!/^-([ac]?newer|newer[aBcm][aBcmt]|samefile)$/.test(t ?? "")) continue;
    const p = readPath(args[i + 1]);
    if (p === undefined) return undefined;
    if (p !== null) paths.push(p);
  }
  return paths;
}

/** The paths a command named `name` reads, from its arguments, as written; `undefined` when not known. */
function namedReads(
  name: string,
  row: CommandRow,
  form: ReadForm,
  args: readonly Word[],
  fed: boolean,
): string[] | undefined {
  if (name === "find") return findReads(args);
  const found = argReads(row, form, args, fed);
  if (found === undefined || name !== "sed") return found?.paths;
  if (found.patterns.some((w) => !w.exact)) return undefined;
  const reads = sedScript(found.patterns.map((w) => w.text).join("\n"))?.reads; // `r FILE`, `R FILE`
  return reads === undefined ? undefined : [...found.paths, ...reads];
}

/** The folders above `path`, nearest first, up to `/`. */
function ancestors(path: string): string[] {
  const out: string[] = [];
  for (let dir = posix.dirname(path); ; dir = posix.dirname(dir)) {
    out.push(dir);
    if (dir === posix.dirname(dir)) return out;
  }
}

/**
 * The absolute paths one simple command of a read-only line reads, run in `cwd` (`null`: not known); `undefined`
 * when not known. `piped`: its standard input is the output of the command before it. `cd`: the folder a `cd`
 * moves to (whether it exists is read).
 */
function commandReads(
  command: SimpleCommand,
  piped: boolean,
  cwd: string | null,
): { paths: string[]; cd?: string } | undefined {
  const named: string[] = [];
  let fed = piped;
  for (const { op, fd, target } of command.redirects) {
    if (["<", "<<", "<<-", "<<<"].includes(op) && (fd === undefined || fd === "0")) fed = true;
    if (op !== "<") continue; // a heredoc is no file; the targets of a read-only line's other redirections are devices
    const p = readPath(target);
    if (p === undefined) return undefined;
    if (p !== null) named.push(p);
  }
  const redirected = named.length;
  const [program, ...args] = command.words;
  let cd: string | undefined;
  let ignores: readonly string[] = [];
  if (program !== undefined) {
    const name = programName(program);
    const row = name === undefined ? undefined : ROWS.get(name);
    const form = name === undefined ? undefined : READS.get(name);
    if (name === undefined || row === undefined || form === undefined) return undefined; // `git`, `which`, ...
    if (args.some((w) => !w.exact && w.glob === undefined)) return undefined; // `$X`, `~`: only the shell knows
    for (const w of args) if (!w.exact && w.glob !== undefined) named.push(globFolder(w.text, w.glob)); // it lists
    ignores = form.ignoreFiles ?? [];
    if (name === "cd") {
      const target = cdTarget(args, cwd);
      if (target === null) return undefined;
      cd = target;
    } else {
      const found = namedReads(name, row, form, args, fed);
      if (found === undefined) return undefined;
      named.push(...found);
    }
  }
  const paths: string[] = [];
  for (const [i, p] of named.entries()) {
    let path: string;
    if (isAbsolute(p)) path = resolve(p);
    else if (cwd === null) return undefined;
    else path = resolve(cwd, p);
    if (READ_DEVICE.test(path)) continue;
    paths.push(path);
    if (i < redirected) continue; // ignore files count for what it searches, not for its input
    for (const dir of ancestors(path)) for (const file of ignores) paths.push(posix.join(dir, file));
  }
  return cd === undefined ? { paths } : { paths, cd };
}

/** Whether `path` is `folder` or below it. */
function within(path: string, folder: string): boolean {
  return path === folder || path.startsWith(folder.endsWith("/") ? folder : `${folder}/`);
}

// ---------------------------------------------------------------------------------------------------------------
// The whole line

/**
 * The analysis of a line: whether it only reads, the absolute paths it may change (`undefined`: anything), and for
 * a line that only reads, the absolute paths it may read (`undefined`: not known, or a line that writes).
 */
interface LineEffect {
  readOnly: boolean;
  paths: string[] | undefined;
  reads: string[] | undefined;
}

/** Where `cd` leads from `cwd`: `null` when not known (`cd`, `cd -`, `cd $DIR`, an unknown folder). */
function cdTarget(args: readonly Word[], cwd: string | null): string | null {
  let i = 0;
  while (args[i]?.exact && /^-[LPe@]+$/.test(args[i]?.text ?? "")) i += 1;
  if (args[i]?.exact && args[i]?.text === "--") i += 1;
  const dir = args[i];
  if (dir === undefined || dir.many || !dir.exact || dir.text === "-" || dir.text === "") return null;
  if (isAbsolute(dir.text)) return resolve(dir.text);
  return cwd === null ? null : resolve(cwd, dir.text);
}

/**
 * Follows a command line through the folders it may be in (`root`: where it starts, `null` when not known). A state
 * is a folder and whether the last pipeline succeeded: `&&` runs the next pipeline only in the states that
 * succeeded, `||` in those that failed, `;` in all; `cd` moves the states where it succeeds; a pipeline runs each
 * command in a subshell, so a `cd` in one moves nothing. Each command's reads are taken in every folder it may run in.
 */
function analyze(command: string, root: string | null): LineEffect {
  const anything: LineEffect = { readOnly: false, paths: undefined, reads: undefined };
  if (command.trim() === "") return anything;
  const tokens = lex(command);
  const line = tokens === undefined ? undefined : parse(tokens);
  if (line === undefined) return anything;
  let readOnly = true;
  const paths = new Set<string>();
  let reads: Set<string> | undefined = new Set<string>();
  const cds: string[] = []; // the folders a cd moved to: whether they exist is read
  let states: { cwd: string | null; ok: boolean }[] = [{ cwd: root, ok: true }];
  for (const { op, pipeline } of line) {
    const runs = (s: { ok: boolean }) => (op === "&&" ? s.ok : op === "||" ? !s.ok : true);
    const cwds = [...new Set(states.filter(runs).map((s) => s.cwd))];
    const next = states.filter((s) => !runs(s));
    for (const [index, simple] of pipeline.entries()) {
      const written: string[] = [];
      for (const redirect of simple.redirects) {
        const target = redirectWrites(redirect);
        if (target === undefined) return anything;
        if (target !== null) written.push(target);
      }
      const effect = commandEffect(simple);
      if (effect.kind === "all") return anything;
      if (effect.kind === "write") written.push(...effect.paths);
      if (effect.kind === "write" || written.length > 0) readOnly = false;
      for (const p of written) {
        for (const cwd of cwds) {
          if (!isAbsolute(p) && cwd === null) return anything;
          paths.add(isAbsolute(p) ? resolve(p) : resolve(cwd as string, p));
        }
      }
      for (const cwd of readOnly ? cwds : []) {
        if (reads === undefined) break;
        const read = commandReads(simple, index > 0, cwd);
        if (read === undefined) reads = undefined;
        else {
          for (const p of read.paths) reads.add(p);
          if (read.cd !== undefined) cds.push(read.cd);
        }
      }
    }
    const [program, ...args] = pipeline.length === 1 ? (pipeline[0]?.words ?? []) : [];
    const cd = program !== undefined && programName(program) === "cd";
    for (const cwd of cwds) {
      next.push({ cwd: cd ? cdTarget(args, cwd) : cwd, ok: true });
      next.push({ cwd, ok: false });
    }
    states = [...new Map(next.map((s) => [`${s.ok}\u0000${s.cwd}`, s])).values()];
  }
  if (!readOnly || reads === undefined) return { readOnly, paths: readOnly ? [] : [...paths], reads: undefined };
  // A write that creates or removes a folder is at it or above it: a read below the folder stands for it too.
  const read = [...reads];
  for (const dir of cds) if (!read.some((p) => within(p, dir))) read.push(dir);
  return { readOnly, paths: [], reads: read };
}

/**
 * Whether a shell command line only reads: every command in it (split at `|`, `&&`, `||`, `;`, newlines) is a
 * known reader used in none of its writing forms (`SHELL_COMMANDS`) and nothing is redirected into a file
 * (`2>/dev/null` is fine). Command substitution, subshells, background jobs and anything not understood count as
 * mutating: a wrong "read-only" could block real progress, a wrong "mutating" only lets a call through.
 *
 * @example
 * ```ts
 * isReadOnlyCommand("sed -n '10,40p' src/app.py | grep -n TODO"); // true
 * isReadOnlyCommand("sed -n '1w out.txt' src/app.py");            // false
 * isReadOnlyCommand("python reproduce.py");                        // false (unknown)
 * ```
 */
export function isReadOnlyCommand(command: string): boolean {
  return analyze(command, "/").readOnly;
}

/**
 * The paths a shell command line may change, absolute (relative ones resolved against `cwd`, or against the folder
 * an earlier `cd` of the line moved to; `cwd` null: relative paths are not known); `[]` for a line that only reads; `undefined` when it may change anything
 * (an unknown program, a path only known when the shell runs). The file tools use it to drop only what
 * `execute_command` may have touched from their cache; a path stands for itself and everything below it.
 *
 * @example
 * ```ts
 * changedPaths("rm -f a.txt && echo x > b.txt", "/repo"); // ["/repo/a.txt", "/repo/b.txt"]
 * changedPaths("cd sub && sort -o out.txt in.txt", "/repo"); // ["/repo/sub/out.txt"]
 * changedPaths("cat a.txt | grep x", "/repo");            // []
 * changedPaths("python build.py", "/repo");               // undefined
 * ```
 */
export function changedPaths(command: string, cwd: string | null): string[] | undefined {
  return analyze(command, cwd === null ? null : resolve(cwd)).paths;
}

/**
 * One analysis of a command line: whether it only reads, the paths it may change ({@link changedPaths}) and the
 * paths it may read ({@link readPaths}); `cwd` null when the working folder is not known (a relative path is then
 * beyond the model).
 *
 * @example
 * ```ts
 * commandPaths("sed -i 's/a/b/' x.py", "/repo"); // { readOnly: false, changed: ["/repo/x.py"], reads: undefined }
 * commandPaths("cat x.py", "/repo");             // { readOnly: true, changed: [], reads: ["/repo/x.py"] }
 * ```
 */
export function commandPaths(
  command: string,
  cwd: string | null,
): { readOnly: boolean; changed: string[] | undefined; reads: string[] | undefined } {
  const line = analyze(command, cwd === null ? null : resolve(cwd));
  return { readOnly: line.readOnly, changed: line.paths, reads: line.reads };
}

/**
 * The paths a read-only shell command line may read, absolute and normalized (relative ones resolved against `cwd`,
 * or against the folder an earlier `cd` of the line moved to); a path stands for itself and everything below it (a
 * folder a command lists or searches, the folder a glob lists). A superset: a write to none of them leaves the
 * line's output as it was. The working folder counts only when a command reads it (`ls`, `grep -r x`, `rg x`,
 * `find`, a glob like `*.py`). `undefined` when the line is not read-only ({@link isReadOnlyCommand}) or what it
 * reads is not known: a relative path with `cwd` `null`, a word only known when the shell runs (`$X`, `~`), a
 * command that reads what it does not name (every `git` subcommand reads the repository; `which`; `md5sum -c`).
 * The guards use it to forget only the reads a write touches.
 *
 * @example
 * ```ts
 * readPaths("cat a.txt | grep -n x && head -5 /etc/hosts", "/repo"); // ["/repo/a.txt", "/etc/hosts"]
 * readPaths("cd src && grep -rn TODO", "/repo");                    // ["/repo/src"]
 * readPaths("head src/*.py; sort < in.txt", "/repo");               // ["/repo/src", "/repo/in.txt"]
 * readPaths("cat a.txt", null);                                     // undefined (the working folder is not known)
 * readPaths("git status", "/repo");                                 // undefined (it reads the repository)
 * readPaths("sort -o out.txt a.txt", "/repo");                      // undefined (it writes)
 * ```
 */
export function readPaths(command: string, cwd: string | null): string[] | undefined {
  return analyze(command, cwd === null ? null : resolve(cwd)).reads;
}
