/**
 * The ignore rules of the directory tree: the default names and the `.gitignore` files of every level, each read at
 * most once a scan and only when it is a regular file inside the root.
 */
import { lstatSync, type Stats } from "node:fs";
import ignore, { type Ignore } from "ignore";
import { type IoProblem, kindOf, readRegularFileSync } from "./io.js";
import { realPathInside } from "./sandbox.js";
import { below, nameOf, parentOf } from "./tree-paths.js";

/** A stat as a signature: what changes when the file is replaced, rewritten or touched. */
const signature = (s: Stats) => `${kindOf(s)}:${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`;

/** What a folder's `.gitignore` is now (`sig` null: none), when it last changed, and its real path inside the root. */
interface GitignoreProbe {
  sig: string | null;
  changedAt: number;
  real?: string;
}

/** Probes `folder/.gitignore` (and, for a symlink, its target inside the root) without following it outside. */
function probeGitignore(root: string, folder: string): GitignoreProbe {
  const path = below(folder, ".gitignore");
  const link = lstatSync(path, { throwIfNoEntry: false });
  if (link === undefined) return { sig: null, changedAt: 0 };
  if (!link.isSymbolicLink())
    return { sig: signature(link), changedAt: Math.max(link.mtimeMs, link.ctimeMs), real: path };
  const real = realPathInside(root, path);
  const target = real === undefined ? undefined : lstatSync(real, { throwIfNoEntry: false });
  const changedAt = Math.max(link.mtimeMs, link.ctimeMs, target?.mtimeMs ?? 0, target?.ctimeMs ?? 0);
  const sig = `${signature(link)}>${real === undefined ? "outside" : `${real}:${target ? signature(target) : "missing"}`}`;
  return real === undefined ? { sig, changedAt } : { sig, changedAt, real };
}

function ignoreNote(dir: string, problem: IoProblem | "outside"): string | undefined {
  const file = dir === "" ? ".gitignore" : `${dir}/.gitignore`;
  const why = (() => {
    if (problem === "outside") return "it links outside the project root";
    switch (problem.kind) {
      case "missing":
        return undefined; // a dangling link: as git, no rules
      case "folder":
        return "it is a folder";
      case "special":
        return `it is a ${problem.what}, not a regular file`;
      case "too-large":
        return `it has ${problem.size} bytes, over the limit of ${problem.limit} (limits.maxIgnoreFileBytes)`;
      case "outside":
        return "it is no longer inside the project root";
      default:
        return "it cannot be read";
    }
  })();
  return why === undefined ? undefined : `${file} is not applied: ${why}.`;
}

/** The characters of a name part that no `.gitignore` pattern gives a meaning: a literal run of them stays literal. */
const LITERAL = /^[A-Za-z0-9._-]+$/;
const LITERAL_RUNS = /[A-Za-z0-9._-]+/g;
const escapeLiteral = (s: string) => s.replaceAll(".", "\\.");

/**
 * A necessary condition on an entry's name for one `.gitignore` line to match it, as a regex source (tested with `i`,
 * as the `ignore` package matches): `undefined` for no rule (blank, a comment), `null` when any name may match.
 *
 * A pattern matches a path only through its last segment (git's rules and the `ignore` package's), so the condition
 * comes from it: a literal name must be equal, `*.log` is a suffix, `tmp*` a prefix, else its longest literal run
 * must occur. What this does not understand only weakens the condition: the `ignore` package still decides.
 */
function nameCondition(line: string, first: boolean): string | null | undefined {
  let body = first && line.charCodeAt(0) === 0xfeff ? line.slice(1) : line;
  if (body.startsWith("#")) return undefined;
  if (body.startsWith("!")) body = body.slice(1);
  let end = body.length;
  while (end > 0 && body[end - 1] === " ") end -= 1;
  body = body.slice(0, end);
  if (body === "") return undefined;
  if (body.endsWith("/")) body = body.slice(0, -1);
  const last = body.slice(body.lastIndexOf("/") + 1);
  if (last.includes("[")) return null;
  if (LITERAL.test(last)) return `^${escapeLiteral(last)}$`;
  if (last.startsWith("*") && LITERAL.test(last.slice(1))) return `${escapeLiteral(last.slice(1))}$`;
  if (last.endsWith("*") && LITERAL.test(last.slice(0, -1))) return `^${escapeLiteral(last.slice(0, -1))}`;
  let longest = "";
  for (const run of last.match(LITERAL_RUNS) ?? []) if (run.length > longest.length) longest = run;
  return longest === "" ? null : escapeLiteral(longest);
}

/**
 * The condition of a whole `.gitignore` (see {@link nameCondition}): a source no name matches when it has no rule,
 * `null` when any name may match.
 */
function fileCondition(text: string): string | null {
  const sources: string[] = [];
  // Lines as the ignore package splits them: one CR before each LF, and at the very end, is dropped.
  const lines = (text.endsWith("\r") ? text.slice(0, -1) : text).split(/\r?\n/);
  for (const [i, line] of lines.entries()) {
    const source = nameCondition(line, i === 0);
    if (source === null) return null;
    if (source !== undefined) sources.push(source);
  }
  return sources.length === 0 ? "(?!)" : sources.join("|");
}

/** One applied `.gitignore`: its folder, its rules, and what a name must be like for a rule to match it (null: any). */
interface Matcher {
  dir: string;
  matcher: Ignore;
  condition: RegExp | null;
  source: string | null;
}

/** The `.gitignore` files that apply inside a folder, deepest first, and one condition for them all. */
interface Chain {
  matchers: Matcher[];
  /** A name that fails it is matched by no rule of any of them; null when every name must be matched. */
  condition: RegExp | null;
}

/** How one folder's entries are judged (see {@link IgnoreRules.folder}). */
interface FolderRules {
  chain: Chain;
  /** The folder relative to each matcher's folder (`""` for its own), in the chain's order. */
  subs: string[];
  /** Whether each matcher excludes the folder itself (by a rule, or one excluding a folder above it). */
  excluded: boolean[];
  /** Whether any does: then every entry that no rule matches by itself is excluded too. */
  anyExcluded: boolean;
}

/**
 * Which paths the ignore rules exclude, for one scan or refresh (each `.gitignore` probed and read once): the defaults
 * by name, else the nearest `.gitignore` with an opinion (the `ignore` package's `test`; deeper files, `!` included,
 * override shallower ones). Only names that can match a rule ({@link nameCondition}) are tested: any other is
 * excluded exactly when a file of the chain excludes the folder itself.
 */
export class IgnoreRules {
  private readonly chains = new Map<string, Chain>();
  private readonly folders = new Map<string, FolderRules>();
  private readonly probes = new Map<string, GitignoreProbe>();
  private readonly notes = new Map<string, string>();
  private readonly defaults: ReadonlySet<string>;

  constructor(
    private readonly root: string,
    defaults: readonly string[],
    private readonly maxBytes: number,
  ) {
    this.defaults = new Set(defaults);
  }

  isDefault(name: string): boolean {
    return this.defaults.has(name);
  }

  probe(dir: string): GitignoreProbe {
    let probe = this.probes.get(dir);
    if (probe === undefined) {
      probe = probeGitignore(this.root, dir === "" ? this.root : below(this.root, dir));
      this.probes.set(dir, probe);
    }
    return probe;
  }

  /** Records that the folder has no `.gitignore` (its entries hold none; one added later changes its ctime). */
  absent(dir: string): void {
    if (!this.probes.has(dir)) this.probes.set(dir, { sig: null, changedAt: 0 });
  }

  note(dir: string): string | undefined {
    this.chain(dir);
    return this.notes.get(dir);
  }

  /** The folder's rules: its `.gitignore` read, when it is a regular file inside the root and under the cap. */
  private rules(dir: string): Matcher | undefined {
    const probe = this.probe(dir); // taken before the read: a change made while reading is seen by the next check
    if (probe.sig === null) return undefined;
    if (probe.real === undefined) {
      const note = ignoreNote(dir, "outside");
      if (note !== undefined) this.notes.set(dir, note);
      return undefined;
    }
    const read = readRegularFileSync(probe.real, this.root, this.maxBytes);
    if (!read.ok) {
      const note = ignoreNote(dir, read.problem);
      if (note !== undefined) this.notes.set(dir, note);
      return undefined;
    }
    const text = read.bytes.toString("utf8");
    const source = fileCondition(text);
    if (source === "(?!)") return undefined; // no rule: it never has an opinion
    const condition = source === null ? null : new RegExp(source, "i");
    return { dir, matcher: ignore().add(text), condition, source };
  }

  /** The `.gitignore` matchers that apply inside `dir`, deepest first (memoised per folder). */
  private chain(dir: string): Chain {
    let chain = this.chains.get(dir);
    if (chain === undefined) {
      const inherited = dir === "" ? { matchers: [], condition: null } : this.chain(parentOf(dir));
      const own = this.rules(dir);
      if (own === undefined) chain = inherited;
      else {
        const matchers = [own, ...inherited.matchers];
        const sources = matchers.map((m) => m.source);
        const condition = sources.includes(null) ? null : new RegExp(sources.join("|"), "i");
        chain = { matchers, condition };
      }
      this.chains.set(dir, chain);
    }
    return chain;
  }

  /** How the entries of `dir` are judged (memoised per folder). */
  folder(dir: string): FolderRules {
    let rules = this.folders.get(dir);
    if (rules !== undefined) return rules;
    const chain = this.chain(dir);
    const above = dir === "" || chain.matchers.length === 0 ? undefined : this.folder(parentOf(dir));
    const name = nameOf(dir);
    const subs: string[] = [];
    const excluded: boolean[] = [];
    for (const m of chain.matchers) {
      const sub = m.dir === dir ? "" : m.dir === "" ? dir : dir.slice(m.dir.length + 1);
      subs.push(sub);
      if (sub === "") {
        excluded.push(false);
        continue;
      }
      // As the ignore package decides it (a folder excluded by a rule, or below an excluded one), with the test
      // left out where no rule can match the folder's name: then it is excluded as its parent is.
      const fromAbove = above?.excluded[above.chain.matchers.indexOf(m)];
      const test = fromAbove === undefined || m.condition === null || m.condition.test(name);
      excluded.push(test ? m.matcher.test(`${sub}/`).ignored : fromAbove);
    }
    rules = { chain, subs, excluded, anyExcluded: excluded.includes(true) };
    this.folders.set(dir, rules);
    return rules;
  }

  /** Whether the entry `name` (a folder with `isDir`) is excluded by the `.gitignore` files (not the defaults). */
  ignores(folder: FolderRules, name: string, isDir: boolean): boolean {
    const { chain } = folder;
    if (chain.condition !== null && !chain.condition.test(name)) return folder.anyExcluded;
    for (const [i, { matcher }] of chain.matchers.entries()) {
      const sub = folder.subs[i] as string;
      const path = sub === "" ? name : `${sub}/${name}`;
      const verdict = matcher.test(isDir ? `${path}/` : path);
      if (verdict.ignored) return true;
      if (verdict.unignored) return false;
    }
    return false;
  }
}
