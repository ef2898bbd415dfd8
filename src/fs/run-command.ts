/**
 * How `execute_command` runs a command so that it always ends: `bash -c` in its own process group, stdin closed, each
 * process marked by an environment variable (kept through `setsid`, `nohup`, double forks); output holders left after
 * the shell exits are stopped after a grace period, and a timeout stops the group and every marked process.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { cutEnd } from "../common/texts/format.js";
import { errorCode } from "./sandbox.js";

/** Marks the processes of one command (its value is the command's id). */
const MARK = "LANGGRAPH_GUARDS_COMMAND";

/** How long output is still read after the shell exited, while something else holds it open (ms). */
const EXIT_GRACE_MS = 500;

/** How a command ended. */
export interface CommandResult {
  /** The shell's exit code; null when it was killed (see `signal`) or could not start. */
  code: number | null;
  signal: NodeJS.Signals | null;
  /** stdout and stderr interleaved, cut to the limit with a note. */
  output: string;
  timedOut: boolean;
  /** Background processes held the output after the shell exited: they were stopped, later output is not shown. */
  heldOpen: boolean;
  /** Why the shell could not be started (the error's code). */
  startError?: string;
}

/** The pids of the processes that carry the mark of command `id` (Linux, `/proc/N/environ`); empty without `/proc`. */
function markedProcesses(id: string): number[] {
  const needle = Buffer.from(`${MARK}=${id}\0`);
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const pids: number[] = [];
  for (const entry of entries) {
    const first = entry.charCodeAt(0);
    if (first < 48 || first > 57) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`).includes(needle)) pids.push(Number(entry));
    } catch {
      // ended meanwhile, or another user's
    }
  }
  return pids;
}

function kill(target: number): void {
  try {
    process.kill(target, "SIGKILL");
  } catch {
    // gone already
  }
}

/** Kills the command's process group and every process that carries its mark. */
function stopAll(pid: number | undefined, id: string): void {
  if (pid !== undefined) kill(-pid);
  for (const marked of markedProcesses(id)) kill(marked);
}

/**
 * The shell's stdout and stderr as its processes hold them (`socket:[inode]`: Node gives a child one end of a socket
 * pair); undefined where they cannot be read (no `/proc`, or the shell is gone already).
 */
function outputEnds(pid: number | undefined): Set<string> | undefined {
  try {
    return new Set([1, 2].map((fd) => readlinkSync(`/proc/${pid}/fd/${fd}`)));
  } catch {
    return undefined;
  }
}

/**
 * After the shell exited: kills the marked processes still holding its output (one of `ends`; without them, a socket
 * as stdout or stderr), and only those, so `nohup server >log 2>&1 &` keeps running. Without `/proc`: all of them.
 */
function stopHolders(pid: number | undefined, id: string, ends: Set<string> | undefined): void {
  const marked = markedProcesses(id);
  if (marked.length === 0) {
    stopAll(pid, id);
    return;
  }
  for (const other of marked) {
    try {
      const fds = ends === undefined ? ["1", "2"] : readdirSync(`/proc/${other}/fd`);
      const holds = (link: string) => (ends === undefined ? link.startsWith("socket:") : ends.has(link));
      if (fds.some((fd) => holds(linkOf(`/proc/${other}/fd/${fd}`)))) kill(other);
    } catch {
      // ended meanwhile, or another user's
    }
  }
}

function linkOf(path: string): string {
  try {
    return readlinkSync(path);
  } catch {
    return "";
  }
}

/** At most `maxChars` characters of the output's start, then only counted. */
function outputCollector(maxChars: number) {
  let output = "";
  let cut = 0;
  return {
    take: (text: string) => {
      const end = cut > 0 ? 0 : cutEnd(text, maxChars - output.length);
      output += text.slice(0, end);
      cut += text.length - end;
    },
    text: () => (cut > 0 ? `${output}\n... [${cut} more characters cut]` : output),
  };
}

/**
 * Runs `bash -c command` in `cwd`: stdout and stderr interleaved in one output of at most `maxChars` characters (the
 * rest cut with a note), everything it started killed after `timeoutMs`.
 */
export function runCommand(command: string, cwd: string, timeoutMs: number, maxChars: number): Promise<CommandResult> {
  return new Promise((done) => {
    const id = randomBytes(12).toString("hex");
    const env = { ...process.env, [MARK]: id };
    const child = spawn("bash", ["-c", command], { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    const output = outputCollector(maxChars);
    const ends = outputEnds(child.pid);
    // Decoded per stream, so a character whose bytes arrive in two chunks stays one character.
    child.stdout.setEncoding("utf8").on("data", output.take);
    child.stderr.setEncoding("utf8").on("data", output.take);
    const state = { timedOut: false, heldOpen: false, finished: false, startError: undefined as string | undefined };
    let grace: NodeJS.Timeout | undefined;
    const finish = () => {
      if (state.finished) return;
      state.finished = true;
      clearTimeout(timer);
      clearTimeout(grace);
      child.stdout.destroy();
      child.stderr.destroy();
      const { timedOut, heldOpen, startError } = state;
      const code = child.exitCode;
      const result = { code, signal: child.signalCode, output: output.text(), timedOut, heldOpen };
      done(startError === undefined ? result : { ...result, startError });
    };
    const afterExit = () => {
      clearTimeout(grace);
      grace = setTimeout(() => {
        state.heldOpen = !state.timedOut;
        if (state.timedOut) stopAll(child.pid, id);
        else stopHolders(child.pid, id, ends);
        finish();
      }, EXIT_GRACE_MS);
    };
    const timer = setTimeout(() => {
      state.timedOut = true;
      stopAll(child.pid, id);
      afterExit();
    }, timeoutMs);
    child.on("exit", afterExit);
    child.on("close", finish);
    child.on("error", (error) => {
      state.startError = errorCode(error) ?? "error";
      finish();
    });
  });
}
