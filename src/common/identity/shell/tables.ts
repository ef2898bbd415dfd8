// The shell model's data: the commands, the forms in which they write, the redirections, what the readers read.

/** One way a command writes: with an option, by its operands, or by its script. */
export type WriteForm =
  | { option: string; writes: "value" } // the option's value is a file it writes (`sort -o out`)
  | { option: string; writes: "all" } // it may change anything (`find -exec`, `git grep -O`)
  | { option: string; writes: "operands"; value?: "optional" } // writes its operands (`sed -i`); `optional`: `-i.bak`
  | { operand: number | "all" | "last" | "afterDashes" } // that one (1-based), all, last, after `--` (else anything)
  | { script: string }; // a command of its script writes or runs a program (`sed`'s `w FILE`, `e`)

/** A command the guards understand. */
export interface CommandRow {
  /** The program (`sort`), or `git <subcommand>` (`git diff`). */
  command: string;
  /** `true`: it only reads unless one of `writes` is used. `false`: it always changes something. */
  readOnly: boolean;
  writes?: readonly WriteForm[];
  /** Options that take a value (the next word, or attached: `-f1`, `--skip-fields=1`). */
  valueOptions?: readonly string[];
  /** Every flag it accepts: when given, any other option is beyond the model (a value could shift the operands). */
  flags?: readonly string[];
  /** Options are whole words after one dash (`find -name`, `xxd -cols`), never bundled letters. */
  singleDash?: boolean;
  /** Options end at the first operand (`xxd in -r` has two operands). */
  optionsFirst?: boolean;
}

const value = (option: string): WriteForm => ({ option, writes: "value" });
const anything = (option: string): WriteForm => ({ option, writes: "all" });

/** The words of space-separated lists. */
export const words = (...lists: string[]): string[] => lists.flatMap((list) => list.split(" "));

/** git subcommands that only read; `--output=<file>` (a diff option, accepted by all of them) writes. */
const READ_ONLY_GIT = words("status diff log show blame ls-files ls-tree rev-parse shortlog describe cat-file");

/**
 * The commands the guards understand and how they write; any other may change anything. `date`, `ps` and friends are
 * left out: they only read, but answer anew each time (unknown = mutating = never redundant).
 */
export const SHELL_COMMANDS: readonly CommandRow[] = [
  ...words(
    "cat ls ll grep egrep fgrep head tail wc nl pwd echo printf stat du which type whereis basename dirname realpath",
    "readlink cut tr diff cmp md5sum sha1sum sha256sum true cd column more od hexdump strings",
  ).map((command): CommandRow => ({ command, readOnly: true })),
  { command: "rg", readOnly: true, writes: [anything("--pre")] },
  { command: "ag", readOnly: true, writes: [anything("--pager")] },
  { command: "file", readOnly: true, writes: [anything("-C"), anything("--compile")] },
  { command: "tree", readOnly: true, writes: [value("-o"), anything("-R")], valueOptions: words("-L -P -I -H -T") },
  {
    command: "less",
    readOnly: true,
    writes: [value("-o"), value("--log-file"), value("-O"), value("--LOG-FILE"), anything("+")],
  },
  { command: "sort", readOnly: true, writes: [value("-o"), value("--output"), anything("--compress-program")] },
  {
    command: "uniq",
    readOnly: true,
    writes: [{ operand: 2 }],
    valueOptions: words("-f -s -w --skip-fields --skip-chars --check-chars"),
    flags: words(
      "-c -d -D -i -u -z --count --repeated --ignore-case --unique --zero-terminated --all-repeated --group --help",
      "--version",
    ),
  },
  {
    command: "xxd",
    readOnly: true,
    writes: [{ operand: 2 }],
    singleDash: true,
    optionsFirst: true,
    valueOptions: words("-c -cols -g -groupsize -l -len -o -offset -s -seek -n -name -R"),
    flags: words(
      "-a -autoskip -b -bits -C -capitalize -E -EBCDIC -e -i -include -p -ps -postscript -plain -r -revert -u -d -h",
      "-help -v -version",
    ),
  },
  {
    command: "sed",
    readOnly: true,
    writes: [
      { option: "-i", writes: "operands", value: "optional" },
      { option: "--in-place", writes: "operands", value: "optional" },
      anything("-f"),
      anything("--file"),
      ...["w FILE", "W FILE", "s///w FILE", "e COMMAND", "s///e"].map((script) => ({ script })),
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
    valueOptions: words(
      "-name -iname -path -ipath -wholename -iwholename -regex -iregex -lname -ilname -type -xtype -maxdepth -mindepth",
      "-newer -anewer -cnewer -size -mtime -atime -ctime -mmin -amin -cmin -user -group -uid -gid -perm -inum -links",
      "-samefile -printf -fstype -used -context -regextype -files0-from -D",
    ),
  },
  {
    command: "tee",
    readOnly: true,
    writes: [{ operand: "all" }],
    flags: words("-a -i -p --append --ignore-interrupts --output-error --help --version"),
  },
  ...READ_ONLY_GIT.map((sub): CommandRow => ({ command: `git ${sub}`, readOnly: true, writes: [value("--output")] })),
  {
    command: "git grep",
    readOnly: true,
    writes: [value("--output"), anything("-O"), anything("--open-files-in-pager")],
    valueOptions: words("-e -f -A -B -C -m"),
  },
  { command: "git checkout", readOnly: false, writes: [{ operand: "afterDashes" }] },
  { command: "git restore", readOnly: false, writes: [{ operand: "all" }], valueOptions: ["-s", "--source"] },
  ...["rm", "rmdir"].map((command): CommandRow => ({ command, readOnly: false, writes: [{ operand: "all" }] })),
  { command: "mkdir", readOnly: false, writes: [{ operand: "all" }], valueOptions: ["-m", "--mode"] },
  {
    command: "touch",
    readOnly: false,
    writes: [{ operand: "all" }],
    valueOptions: words("-r -d -t --reference --date"),
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
    valueOptions: words("-S --suffix --no-preserve --sparse"),
    flags: words(
      "-a -b -d -f -i -H -l -L -n -P -p -R -r -s -T -u -v -x --archive --attributes-only --backup --copy-contents",
      "--dereference --force --debug --interactive --link --no-clobber --no-dereference --parents --recursive",
      "--update --remove-destination --strip-trailing-slashes --symbolic-link --verbose --one-file-system --preserve",
      "--no-target-directory --reflink --keep-directory-symlink --context -Z",
    ),
  },
];

/** The redirections (with or without an fd number: `2>`, `1>>`) and what they write; a `/dev` target writes nothing. */
export const REDIRECTIONS: readonly { op: string; writes: "target" | "target unless fd" | "nothing" }[] = [
  ...words("> >> >| &> &>> <>").map((op) => ({ op, writes: "target" as const })), // `<>` creates the file too
  { op: ">&", writes: "target unless fd" },
  ...words("< <& << <<- <<<").map((op) => ({ op, writes: "nothing" as const })), // a heredoc's body is the input
];

/** How a read-only command reads one of its options ({@link ReadForm}). */
export type ReadOption =
  | "value" // a value that names no file (`head -n 5`)
  | "optional" // a value only when attached (`--color=auto`, `od -w16`)
  | "file" // its value is a file it reads (`grep --exclude-from=x`)
  | "pattern" // its value is the pattern or script (`grep -e x`), so the first operand is a file
  | "patternFile" // its value is a file holding the pattern (`grep -f pats.txt`)
  | "noPattern" // no pattern at all (`rg --files`)
  | "recursive" // without a file operand it reads its working folder (`grep -r`)
  | "directories" // a value; any but `read` or `skip` makes it recursive (`grep -d recurse`)
  | "unknown"; // it reads files the line does not name (`md5sum -c sums`: those listed in `sums`)

/** What a read-only command reads. */
export interface ReadForm {
  /** Files or folders it reads; a pattern, then files, unless an option gave it (`afterPattern`); none (`echo`). */
  operands: "files" | "afterPattern" | "none";
  /** With no file operand it reads its working folder (`cwd`: `ls`), unless its input is fed (`search`: `rg`). */
  bare?: "cwd" | "search";
  /** Its options that take a value or change what it reads; any other is a flag. */
  options?: Readonly<Record<string, ReadOption>>;
  /** Files it reads in every folder above what it searches (`.gitignore`). */
  ignoreFiles?: readonly string[];
  /** An operand `@file` is a file of more options (binutils). */
  responseFiles?: boolean;
}

/** A command's options by how it reads them ({@link ReadOption}): each reading's options space-separated. */
type OptionLists = { readonly [K in ReadOption]?: string | readonly string[] };

function optionKinds(lists: OptionLists): Record<string, ReadOption> {
  const options: Record<string, ReadOption> = {};
  for (const [kind, list] of Object.entries(lists) as [ReadOption, string | readonly string[]][])
    for (const option of words(...(typeof list === "string" ? [list] : list))) options[option] = kind;
  return options;
}

/** A reader whose operands are files (`files`) or a pattern, then files (`afterPattern`), with its options. */
const reader =
  (operands: ReadForm["operands"]) =>
  (lists: OptionLists, form: Omit<ReadForm, "operands" | "options"> = {}): ReadForm => ({
    operands,
    ...form,
    options: optionKinds(lists),
  });
const files = reader("files");
const afterPattern = reader("afterPattern");

const GREP = afterPattern({
  pattern: "-e --regexp",
  patternFile: "-f --file",
  file: "--exclude-from",
  recursive: "-r -R --recursive --dereference-recursive",
  directories: "-d --directories",
  value: [
    "-A -B -C -m -D --after-context --before-context --context --max-count --devices --label",
    "--include --exclude --exclude-dir --binary-files --group-separator",
  ],
  optional: "--color --colour",
});

const LS = files(
  {
    value: [
      "-I -w -T --ignore --hide --width --tabsize --block-size --format --sort --time --time-style",
      "--quoting-style --indicator-style",
    ],
    optional: "--color --classify --hyperlink",
  },
  { bare: "cwd" },
);

const CHECKSUM = files({ unknown: "-c --check" });
const FILES: ReadForm = { operands: "files" };
const NONE: ReadForm = { operands: "none" };

/**
 * What the read-only commands of {@link SHELL_COMMANDS} read. Any other reads what the line does not say (`which`
 * reads `$PATH`'s folders, every `git` subcommand the repository).
 */
export const SHELL_READS: Readonly<Record<string, ReadForm>> = {
  ...Object.fromEntries(words("echo printf true pwd basename dirname tr tee cd").map((c) => [c, NONE] as const)),
  ...Object.fromEntries(words("cat readlink").map((c) => [c, FILES] as const)),
  ...Object.fromEntries(words("md5sum sha1sum sha256sum").map((c) => [c, CHECKSUM] as const)),
  ...{ grep: GREP, egrep: GREP, fgrep: GREP, ls: LS, ll: LS },
  head: files({ value: "-n -c --lines --bytes" }),
  tail: files({ value: "-n -c -s --lines --bytes --sleep-interval --pid --max-unchanged-stats", optional: "--follow" }),
  wc: files({ unknown: "--files0-from" }),
  nl: files({
    value: [
      "-b -d -f -h -i -l -n -s -v -w --body-numbering --section-delimiter --footer-numbering --header-numbering",
      "--line-increment --join-blank-lines --number-format --number-separator --starting-line-number --number-width",
    ],
  }),
  cut: files({ value: "-b -c -d -f --bytes --characters --delimiter --fields" }),
  // Not -n: a flag in the BSD column, a value in util-linux's.
  column: files({
    value: [
      "-c -s -o -O -N -l -E -H -R -T -W -r -i -p --output-width --separator --output-separator --table-name",
      "--table-order --table-columns --table-columns-limit --table-noextreme --table-hide --table-right",
      "--table-truncate --table-wrap --tree --tree-id --tree-parent",
    ],
  }),
  more: files({ value: "-n --lines" }),
  od: files({
    value: "-A -j -N -S -t --address-radix --skip-bytes --read-bytes --format --endian",
    optional: "-w --width --strings",
  }),
  hexdump: files({ value: "-e -n -s --format --length --skip", file: "-f --format-file", optional: "-L --color" }),
  strings: files(
    { value: "-n -t -T -e -U -s --bytes --radix --target --encoding --unicode --output-separator" },
    { responseFiles: true },
  ),
  cmp: files({ value: "-i -n --ignore-initial --bytes" }),
  diff: files({
    value: [
      "-C -U -D -F -I -L -S -W -x --ifdef --show-function-line --ignore-matching-lines --label",
      "--starting-file --width --exclude --line-format --horizon-lines --tabsize --palette",
      "--old-line-format --new-line-format --unchanged-line-format --old-group-format",
      "--new-group-format --changed-group-format --unchanged-group-format",
    ],
    optional: "--context --unified --color",
    file: "-X --exclude-from --from-file --to-file",
  }),
  stat: files({ value: "-c --format --printf --cached" }),
  realpath: files({ file: "--relative-to --relative-base" }),
  du: files(
    {
      value: "-B -d -t --block-size --max-depth --threshold --exclude --time-style",
      optional: "--time",
      file: "-X --exclude-from",
      unknown: "--files0-from",
    },
    { bare: "cwd" },
  ),
  tree: files(
    { value: "--filelimit --timefmt --charset --sort --hintro --houtro", file: "--infofile" },
    { bare: "cwd", ignoreFiles: [".gitignore", ".git/info/exclude"] }, // with --gitignore
  ),
  file: files({
    value: "-F -P -e --separator --parameter --exclude --exclude-quiet",
    unknown: "-f -m --files-from --magic-file",
  }),
  less: files({
    value: [
      "-b -h -j -p -P -x -y -z -# -D --buffers --max-back-scroll --jump-target --pattern --prompt",
      "--tabs --max-forw-scroll --window --shift --color",
    ],
    file: "-k -T --lesskey-file --tag-file --lesskey-src",
    unknown: "-t --tag", // the tags file of the working folder, and the file it names
  }),
  sort: files({
    value: [
      "-k -t -S -T --key --field-separator --buffer-size --temporary-directory --parallel",
      "--batch-size --sort",
    ],
    file: "--random-source",
    unknown: "--files0-from",
  }),
  uniq: FILES,
  xxd: FILES,
  sed: afterPattern({ pattern: "-e --expression", patternFile: "-f --file" }),
  find: { operands: "files", bare: "cwd" },
  rg: afterPattern(
    {
      pattern: "-e --regexp",
      patternFile: "-f --file",
      file: "--ignore-file",
      noPattern: "--files --type-list",
      unknown: "--hostname-bin", // runs a program
      value: [
        "-A -B -C -m -M -d -j -E -g -t -T -r --after-context --before-context --context --max-count",
        "--max-columns --max-depth --maxdepth --threads --encoding --glob --iglob --type --type-not",
        "--type-add --type-clear --replace --color --colors --context-separator --path-separator",
        "--field-context-separator --field-match-separator --sort --sortr --pre-glob --engine",
        "--max-filesize --dfa-size-limit --regex-size-limit --hyperlink-format --generate",
      ],
    },
    { bare: "search", ignoreFiles: [".gitignore", ".ignore", ".rgignore", ".git/info/exclude"] },
  ),
  ag: afterPattern(
    {
      pattern: "-g",
      file: "-p --path-to-ignore",
      value: [
        "-G -m -W --file-search-regex --ignore --ignore-dir --max-count --width --depth --workers",
        "--color-line-number --color-match --color-path",
      ],
      optional: "-A -B -C --after --before --context",
    },
    { bare: "search", ignoreFiles: [".gitignore", ".ignore", ".agignore", ".hgignore", ".git/info/exclude"] },
  ),
};

/** The rows of {@link SHELL_COMMANDS} by command (`sort`, `git diff`). */
export const ROWS = new Map(SHELL_COMMANDS.map((row) => [row.command, row]));
