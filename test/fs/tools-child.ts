/**
 * Runs file-tool calls in a process of its own and prints their answers as JSON (issue 35's messages test, which
 * runs it as an unprivileged user, so that a folder without read permission is really unreadable):
 *
 *   node --import tsx test/fs/tools-child.ts <root> '[["list_files", {"path": "locked"}], ...]'
 */
import type { ToolMessage } from "@langchain/core/messages";
import { createFileTools } from "../../src/fs/tools.js";

type Invocable = { name: string; invoke(input: unknown): Promise<unknown> };

async function main(): Promise<void> {
  const [root, json] = process.argv.slice(2);
  if (root === undefined || json === undefined) throw new Error("usage: <root> <calls as JSON>");
  const tools = createFileTools({ root, allowCommands: true }) as unknown as Invocable[];
  const answers: { text: string; status: string | undefined }[] = [];
  let n = 0;
  for (const [name, args] of JSON.parse(json) as [string, Record<string, unknown>][]) {
    const tool = tools.find((t) => t.name === name) as Invocable;
    n += 1;
    const reply = (await tool.invoke({ id: `c${n}`, name, args, type: "tool_call" })) as ToolMessage;
    answers.push({ text: String(reply.content), status: reply.status });
  }
  process.stdout.write(JSON.stringify(answers));
}

await main();
