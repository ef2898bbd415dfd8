/**
 * What the multi-agent scenarios share: small tools that count their runs, and readers of a run's messages.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { z } from "zod";

/** A tool that answers `answer(args, n)` (n: its runs so far) and counts its runs. */
export function countingTool(name: string, answer: (args: { q: string }, n: number) => string) {
  const runs: string[] = [];
  const made = tool(
    async (args: { q: string }) => {
      runs.push(args.q);
      return answer(args, runs.length);
    },
    { name, description: `${name}: answers a question`, schema: z.object({ q: z.string() }) },
  );
  return { tool: made, runs };
}

/** The ToolMessages of a run answering calls of `name`. */
export function answersOf(messages: readonly BaseMessage[], name: string): ToolMessage[] {
  const ids = new Set(
    messages.flatMap((m) =>
      AIMessage.isInstance(m) ? (m.tool_calls ?? []).filter((c) => c.name === name).map((c) => c.id) : [],
    ),
  );
  return messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m) && ids.has(m.tool_call_id));
}

/** The run's last message, when it is an AI message in words (no tool calls): the run ended in words. */
export function finalWords(messages: readonly BaseMessage[]): string | undefined {
  const last = messages.at(-1);
  if (!AIMessage.isInstance(last) || (last.tool_calls ?? []).length > 0) return undefined;
  return typeof last.content === "string" ? last.content : JSON.stringify(last.content);
}

/** The tool calls the run's AI messages made, by name, in order. */
export function callsMade(messages: readonly BaseMessage[]): string[] {
  return messages.flatMap((m) => (AIMessage.isInstance(m) ? (m.tool_calls ?? []).map((c) => c.name) : []));
}
