/**
 * A small in-memory project with the demo's tools (`read_file`, `list_files`, `write_to_file`,
 * `search_in_file`, `create_subtask`), so the demo, the tests and the benchmark run offline and deterministically.
 */
import { tool } from "@langchain/core/tools";
import { z } from "zod";

/** Files by path, relative to the project root. */
export type Files = Map<string, string>;

/**
 * Creates the workspace tools over `files` (mutated by `write_to_file`).
 *
 * @example
 * ```ts
 * const files = new Map([["config.py", "DEBUG = True\n"]]);
 * const tools = createWorkspaceTools(files);
 * ```
 */
export function createWorkspaceTools(files: Files) {
  const stripDot = (p: string) => p.replace(/^\.\/+/, "").replace(/\/+$/, "");
  const readFile = tool(
    async ({ path }) => {
      const content = files.get(stripDot(path));
      if (content === undefined) throw new Error(`File not found: ${path}`);
      return content;
    },
    {
      name: "read_file",
      description: "Read a file of the project.",
      schema: z.object({ path: z.string().describe("Path relative to the project root") }),
    },
  );
  const listFiles = tool(
    async ({ path }) => {
      const dir = stripDot(path ?? ".");
      const prefix = dir === "" || dir === "." ? "" : `${dir}/`;
      const names = [...files.keys()].filter((f) => f.startsWith(prefix)).map((f) => f.slice(prefix.length));
      return names.sort().join("\n") || "(empty)";
    },
    {
      name: "list_files",
      description: "List the files under a folder.",
      schema: z.object({ path: z.string().optional() }),
    },
  );
  const writeToFile = tool(
    async ({ path, content }) => {
      files.set(stripDot(path), content);
      return `Wrote ${content.length} characters to ${path}`;
    },
    {
      name: "write_to_file",
      description: "Create or overwrite a file.",
      schema: z.object({ path: z.string(), content: z.string() }),
    },
  );
  const searchInFile = tool(
    async ({ pattern, path }) => {
      const content = files.get(stripDot(path));
      if (content === undefined) throw new Error(`File not found: ${path}`);
      const hits = content
        .split("\n")
        .map((line, i) => ({ line, n: i + 1 }))
        .filter(({ line }) => line.includes(pattern));
      return hits.length ? hits.map(({ line, n }) => `${path}:${n}: ${line}`).join("\n") : "No matches.";
    },
    {
      name: "search_in_file",
      description: "Find the lines of a file that contain a pattern.",
      schema: z.object({ pattern: z.string(), path: z.string() }),
    },
  );
  let subtasks = 0;
  const createSubtask = tool(
    async ({ title }) => {
      subtasks += 1;
      return `Created subtask #${subtasks}: ${title}`;
    },
    {
      name: "create_subtask",
      description: "Record a subtask to do later.",
      schema: z.object({ title: z.string() }),
    },
  );
  return [readFile, listFiles, writeToFile, searchInFile, createSubtask];
}

/**
 * The sample project used by the demo and the tests.
 *
 * @example
 * ```ts
 * const files = sampleProject();
 * ```
 */
export function sampleProject(): Files {
  return new Map([
    ["config.py", "DEBUG = True\nDATABASE_URL = 'sqlite:///app.db'\n"],
    ["app.py", "from config import DEBUG\n# TODO: add routes\n\ndef main():\n    print('hello')\n"],
    ["main.py", "import app\n# TODO: parse arguments\napp.main()\n"],
    ["models.py", "class User:\n    name: str\n    email: str\n"],
  ]);
}
