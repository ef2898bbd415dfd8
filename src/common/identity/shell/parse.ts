// The shell parser: tokens into pipelines of simple commands; the program a command runs; where `cd` leads.
import { isAbsolute, resolve } from "node:path";
import type { Token, Word } from "./lexer.js";

/** Folders a bare program name may be spelled with (`/usr/bin/cat` is `cat`; `./cat` is a local program). */
const BIN_DIR = /^\/(usr\/(local\/)?)?s?bin\/[^/]+$/;
/** A redirection of one simple command: its operator, fd number and target (for a heredoc, its delimiter). */
export interface Redirect {
  op: string;
  fd: string | undefined;
  target: Word;
}

/** One simple command: its leading `NAME=value` assignments, its words, its redirections. */
export interface SimpleCommand {
  assignments: Word[];
  words: Word[];
  redirects: Redirect[];
}

/** A command line: pipelines joined by `&&`, `||`, `;` (or a newline), each with the operator before it. */
type CommandLine = { op: ";" | "&&" | "||"; pipeline: SimpleCommand[] }[];

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*\+?=/;

/** Groups tokens into pipelines of simple commands; `undefined` beyond the model (subshells, groups, `&`, `case`). */
export function parse(tokens: Token[]): CommandLine | undefined {
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

/** The program a command word names: `cat`, `/usr/bin/cat`; `undefined` for `./cat` or an unknown word. */
export function programName(w: Word): string | undefined {
  if (!w.exact) return undefined;
  if (!w.text.includes("/")) return w.text;
  return BIN_DIR.test(w.text) ? w.text.slice(w.text.lastIndexOf("/") + 1) : undefined;
}

/** Where `cd` leads from `cwd`: `null` when not known (`cd`, `cd -`, `cd $DIR`, an unknown folder). */
export function cdTarget(args: readonly Word[], cwd: string | null): string | null {
  let i = 0;
  while (args[i]?.exact && /^-[LPe@]+$/.test(args[i]?.text ?? "")) i += 1;
  if (args[i]?.exact && args[i]?.text === "--") i += 1;
  const dir = args[i];
  if (dir === undefined || dir.many || !dir.exact || dir.text === "-" || dir.text === "") return null;
  if (isAbsolute(dir.text)) return resolve(dir.text);
  return cwd === null ? null : resolve(cwd, dir.text);
}
