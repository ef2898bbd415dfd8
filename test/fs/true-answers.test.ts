/**
 * Issue 45, item 6: the file tools never tell the model something false. Writing the project root or a path that
 * ends in "/" is refused as a folder (the root did not "change while it was being opened"; `newdir/` is not a file
 * to create).
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { join, sep } from "node:path";
import { describe, expect, it } from "vitest";
import { tempProjects } from "../support/projects.js";
import { directTools } from "./direct.js";

const { project } = tempProjects("lgg-true-");

describe("answers that say what is true", () => {
  it("write_to_file of the root is refused as a folder", async () => {
    const root = project({ "a.txt": "A\n" });
    const { call } = directTools(root);
    for (const path of [".", "./", root, `${root}/`]) {
      const answer = await call("write_to_file", { path, content: "x\n" });
      expect(answer.status, JSON.stringify(path)).toBe("error");
      expect(answer.text, JSON.stringify(path)).not.toMatch(/changed while it was being opened/);
      expect(answer.text, JSON.stringify(path)).toMatch(/is a folder, not a file/);
    }
    expect(statSync(root).isDirectory()).toBe(true);
  });

  it("write_to_file of a path ending in / creates no file: a folder is named", async () => {
    const root = project({ "a.txt": "A\n" });
    const { call } = directTools(root);
    const answer = await call("write_to_file", { path: "newdir/", content: "x\n" });
    expect(answer.status).toBe("error");
    expect(answer.text).toMatch(/newdir\/ names a folder/);
    expect(existsSync(join(root, "newdir"))).toBe(false);
    if (sep === "/") {
      // A backslash is part of a name here, not a separator: such a file is written as before.
      expect((await call("write_to_file", { path: "back\\", content: "x\n" })).status).toBe("success");
      expect(existsSync(join(root, "back\\"))).toBe(true);
    }
    const existing = await call("write_to_file", { path: "a.txt/", content: "x\n" });
    expect(existing.status).toBe("error");
    expect(statSync(join(root, "a.txt")).size).toBe(2);
  });

  it("a diff of line 1 of a file with a byte order mark applies, and the mark is kept", async () => {
    const root = project({ "b.txt": "\uFEFFline1\nline2\n" });
    const { call } = directTools(root);
    const diff = "--- a/b.txt\n+++ b/b.txt\n@@ -1,2 +1,2 @@\n-line1\n+LINE1\n line2\n";
    const answer = await call("apply_source_code_diff", { path: "b.txt", diff });
    expect(answer.status, answer.text).toBe("success");
    expect(readFileSync(join(root, "b.txt"))).toEqual(Buffer.from("\uFEFFLINE1\nline2\n", "utf8"));
  });
});
