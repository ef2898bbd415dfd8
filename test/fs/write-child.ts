/**
 * A process that writes one file through `write_to_file` (issue 35's kill -9 and EFBIG tests):
 *
 *   node --import tsx test/fs/write-child.ts once <root> <path> <bytes>   one write; prints the tool's answer
 *   node --import tsx test/fs/write-child.ts loop <root> <path> <bytes>   writes A, B, A, ... until killed
 *
 * The contents are {@link contentOf}'s: `bytes` bytes of lines of one letter.
 */
import { createFileTools } from "../../src/fs/tools.js";

/** `bytes` bytes: lines of 63 copies of `letter` and a newline (the last line cut short). */
export function contentOf(letter: string, bytes: number): string {
  const line = `${letter.repeat(63)}\n`;
  return line.repeat(Math.ceil(bytes / 64)).slice(0, bytes);
}

type Invocable = { name: string; invoke(input: unknown): Promise<unknown> };

async function main(): Promise<void> {
  const [mode, root, path, size] = process.argv.slice(2);
  if (root === undefined || path === undefined) throw new Error("usage: once|loop <root> <path> <bytes>");
  const tools = createFileTools({ root }) as unknown as Invocable[];
  const write = tools.find((t) => t.name === "write_to_file") as Invocable;
  const bytes = Number(size);
  const say = async (content: string) => {
    try {
      return String(await write.invoke({ path, content }));
    } catch (error) {
      return (error as Error).message;
    }
  };
  if (mode === "once") {
    process.stdout.write(`${await say(contentOf("x", bytes))}\n`);
    return;
  }
  const contents = [contentOf("A", bytes), contentOf("B", bytes)];
  process.stdout.write("ready\n");
  for (let i = 0; ; i += 1) {
    const answer = await say(contents[i % 2] as string);
    if (!answer.startsWith("Wrote ")) throw new Error(answer);
  }
}

if (process.argv[1]?.endsWith("write-child.ts")) await main();
