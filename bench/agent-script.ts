/**
 * The scripted agent that `bench/overhead.ts` and `bench/parts.ts` run: turn after turn one tool call, five tools
 * of the example workspace in rotation, each call distinct (nothing is repeated or redundant, so guarded and plain
 * runs run the same tools), then a final answer: the model, the person's message that starts the run, and the
 * recursion limit the run needs.
 */
import { ScriptedChatModel, type ScriptedToolCall, type ScriptStep } from "../src/testing/index.js";

/** Turn `i` of the script. */
export function scriptedCall(i: number): ScriptedToolCall {
  const k = Math.floor(i / 5);
  const file = `pkg${k}/module.py`;
  switch (i % 5) {
    case 0:
      return { name: "write_to_file", args: { path: file, content: `# module ${k}\nVALUE_${k} = ${k}\n` } };
    case 1:
      return { name: "read_file", args: { path: file } };
    case 2:
      return { name: "list_files", args: { path: `pkg${k}` } };
    case 3:
      return { name: "search_in_file", args: { pattern: `VALUE_${k}`, path: file } };
    default:
      return { name: "create_subtask", args: { title: `Review pkg${k}` } };
  }
}

/** The scripted model: `turns` turns of one call each, then `finalAnswer` (it throws if asked for more). */
export function agentModel(turns: number, finalAnswer: string): ScriptedChatModel {
  const steps: ScriptStep[] = [];
  for (let i = 0; i < turns; i += 1) steps.push({ toolCalls: [scriptedCall(i)] });
  steps.push(finalAnswer);
  return new ScriptedChatModel(steps, { whenExhausted: "throw" });
}

/** The input that starts a run of `turns` turns. */
export function agentInput(turns: number): { messages: { role: "user"; content: string }[] } {
  return { messages: [{ role: "user", content: `Create, check and review the ${turns / 5} packages.` }] };
}

/** The recursion limit of a run of `turns` turns (two steps a turn, with room to spare). */
export function agentRecursionLimit(turns: number): number {
  return 4 * turns + 10;
}

/** The file that turn `i` of the read-file script reads: five modules a package, each read once. */
export function readPath(i: number): string {
  return `pkg${Math.floor(i / 5)}/module_${i % 5}.py`;
}

/** A small module of the sample project `readFileProject` writes (about 300 bytes). */
export function moduleText(i: number): string {
  const k = Math.floor(i / 5);
  return [
    `"""Module ${i % 5} of package ${k}."""`,
    `from pkg${k} import config`,
    "",
    `VALUE_${i} = ${i}`,
    "",
    `def step_${i}(value: int) -> int:`,
    `    """Add this module's value."""`,
    `    return value + VALUE_${i}`,
    "",
    `def check_${i}() -> bool:`,
    `    return step_${i}(0) == ${i}`,
    "",
  ].join("\n");
}

/**
 * The user's shape of a run: turn after turn one `read_file` call of a file not read before (`readPath(i)`), then a
 * final answer. Nothing is repeated or redundant, so guarded and plain runs run the same tool.
 */
export function readFileModel(turns: number, finalAnswer: string): ScriptedChatModel {
  const steps: ScriptStep[] = [];
  for (let i = 0; i < turns; i += 1) steps.push({ toolCalls: [{ name: "read_file", args: { path: readPath(i) } }] });
  steps.push(finalAnswer);
  return new ScriptedChatModel(steps, { whenExhausted: "throw" });
}

/** The input that starts a run of `turns` reads. */
export function readFileInput(turns: number): { messages: { role: "user"; content: string }[] } {
  return { messages: [{ role: "user", content: `Read the ${turns} modules and summarize what they do.` }] };
}
