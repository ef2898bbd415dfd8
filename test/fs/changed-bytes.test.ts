/**
 * Issue 45, item 5: the changed-on-disk refusal sees every change of the bytes. A Latin-1 file edited outside the
 * tools (`café` → `cafè`: one byte, both invalid UTF-8, so both read as `caf\uFFFD`) is refused, not overwritten.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempProjects } from "../support/projects.js";
import { directTools } from "./direct.js";

const { project } = tempProjects("lgg-bytes-");

describe("the changed-on-disk refusal compares bytes", () => {
  it("an outside edit of a Latin-1 file that reads the same as UTF-8 is refused", async () => {
    const root = project();
    const file = join(root, "menu.txt");
    writeFileSync(file, Buffer.from("caf\xe9\nprice 3\n", "latin1"));
    const { call } = directTools(root);
    expect((await call("read_file", { path: "menu.txt" })).status).toBe("success");
    writeFileSync(file, Buffer.from("caf\xe8\nprice 3\n", "latin1")); // someone else's edit
    const write = await call("write_to_file", { path: "menu.txt", content: "tea\n" });
    expect(write.status).toBe("error");
    expect(write.text).toMatch(/changed on disk since you last read or wrote it/);
    const diff = "--- a/menu.txt\n+++ b/menu.txt\n@@ -2 +2 @@\n-price 3\n+price 4\n";
    expect((await call("apply_source_code_diff", { path: "menu.txt", diff })).status).toBe("success"); // now seen
    expect(readFileSync(file)).toEqual(Buffer.from("caf\xe8\nprice 4\n", "latin1"));
  });

  it("the file's own bytes unchanged: a repeat read is still served, a write still goes through", async () => {
    const root = project();
    writeFileSync(join(root, "menu.txt"), Buffer.from("caf\xe9\n", "latin1"));
    const { call } = directTools(root);
    await call("read_file", { path: "menu.txt" });
    expect((await call("write_to_file", { path: "menu.txt", content: "tea\n" })).status).toBe("success");
  });
});
