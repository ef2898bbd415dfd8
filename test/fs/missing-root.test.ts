/**
 * Issue 61, item 12f: a project root that does not exist gave a raw `ENOENT: no such file or directory, realpath`
 * from deep in the sandbox. The file tools now refuse it when they are made, as every other bad option is refused:
 * a `GuardOptionsError` that names `root`, the path, and what is wrong (missing, or not a folder).
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createFileTools, createSandbox } from "../../src/fs/index.js";
import { GuardOptionsError } from "../../src/index.js";
import { fileToolsMiddleware } from "../../src/middleware/index.js";
import { tempProjects } from "../support/projects.js";

const { project } = tempProjects("lgg-root-");

/** The error `make` throws (undefined when it throws none). */
function thrownBy(make: () => unknown): unknown {
  try {
    make();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe("a file-tools root that is not a folder is refused when the tools are made", () => {
  const makers = {
    createFileTools: (root: string) => createFileTools({ root }),
    fileToolsMiddleware: (root: string) => fileToolsMiddleware({ root }),
    createSandbox: (root: string) => createSandbox({ root }),
  };
  for (const [name, make] of Object.entries(makers)) {
    it(`${name}: a root that does not exist is a GuardOptionsError saying so`, () => {
      const root = join(project(), "nowhere");
      const error = thrownBy(() => make(root));
      expect(error).toBeInstanceOf(GuardOptionsError);
      expect((error as Error).message).toBe(
        `Invalid file-tool options:\n- root: ${JSON.stringify(root)} does not exist; the file tools need the project's folder.`,
      );
    });

    it(`${name}: a root that is a file is a GuardOptionsError saying so`, () => {
      const root = join(project({ "a.txt": "x\n" }), "a.txt");
      const error = thrownBy(() => make(root));
      expect(error).toBeInstanceOf(GuardOptionsError);
      expect((error as Error).message).toMatch(/^Invalid file-tool options:\n- root: ".*a\.txt" is not a folder/);
    });
  }

  it("a root below a file, or given relative, is judged as the OS resolves it", () => {
    const file = join(project({ "a.txt": "x\n" }), "a.txt");
    expect((thrownBy(() => createFileTools({ root: join(file, "sub") })) as Error).message).toMatch(/does not exist/);
    expect(thrownBy(() => createFileTools({ root: "." }))).toBeUndefined();
  });
});
