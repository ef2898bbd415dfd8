// The shell lexer: words (after quote removal, what only the running shell knows marked), separators, redirections.
import { words } from "./tables.js";

/** One word of a command, after quote removal. */
export interface Word {
  text: string; // what the program receives when `exact`; else as written
  exact: boolean; // false: its value is only known when the shell runs (`$VAR`, a glob, `~`)
  many: boolean; // it may become several words or none (unquoted `$VAR`, a glob, a brace expansion)
  optionLike: boolean; // it may start with `-`
  /** When its only unknown parts are patterns and brace expansions, the text before the first (`src/*.py`: `src/`). */
  glob: string | undefined;
}

type Separator = "|" | "|&" | "&&" | "||" | ";" | "\n" | "&" | "(" | ")" | ";;";

export type Token =
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
interface WordState extends Omit<Word, "glob"> {
  empty: boolean; // nothing read yet (so an unknown part here makes the word option-like)
  quoted: boolean; // some part was quoted (a heredoc delimiter with quotes keeps its body unexpanded)
  prefix: string | undefined; // the text before the first unknown part
  dynamic: boolean; // some unknown part is neither a pattern nor a brace expansion (`$X`, `~`)
}

/**
 * Adds `part` as written and marks the word's value unknown: `many`: it may become several words or none; `splits`:
 * a part may become a word of its own, so an option (unquoted `$VAR`); `dash`: its value may start with `-` (all but
 * `~`); `glob`: a pattern or brace expansion (the words it becomes start with the text before it).
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

/** A redirection's fd number: digits right before `<` or `>` (`2>`). */
const FD = /\d+(?=[<>])/y;
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

/** Splits a command line into tokens as bash would; `undefined` beyond the model (a substitution, an open quote). */
export function lex(s: string): Token[] | undefined {
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
      FD.lastIndex = i;
      const fd = FD.exec(s)?.[0];
      if (fd !== undefined) i += fd.length;
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
          tokens.push({ kind: "redir", op, fd });
          if (op === "<<" || op === "<<-") heredocNext = { stripTabs: op === "<<-" };
        }
        continue;
      }
      const { word, end } = readWord(s, i);
      i = end;
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
