/**
 * Issue 35: `denyWrites` protects as a `.gitignore` would (`*.pem`, `.env*`, `secrets/**`), through the tools, and
 * `.git` stays protected whatever the list says, unless `allowGitWrites: true`.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createFileTools } from "../../src/fs/tools.js";
import { tempProjects } from "../support/projects.js";
import { directTools } from "./direct.js";

const { project } = tempProjects("lgg-deny-");

describe("denyWrites as in .gitignore, .git built in", () => {
  it("write_to_file and apply_source_code_diff refuse *.pem, .env*, secrets/**, and .git with a custom list", async () => {
    const root = project({ "certs/key.pem": "KEY\n", ".env.local": "A=1\n", "secrets/db/pass.txt": "pw\n" });
    const { call } = directTools(root, { denyWrites: ["*.pem", ".env*", "secrets/**"] });
    for (const path of ["certs/key.pem", ".env.local", ".env", "secrets/db/pass.txt", ".git/hooks/pre-commit"]) {
      const answer = await call("write_to_file", { path, content: "PWNED\n" });
      expect(answer.status, path).toBe("error");
      expect(answer.text).toMatch(/^Writing to .* is not allowed\.$/);
    }
    const diff = "--- a/certs/key.pem\n+++ b/certs/key.pem\n@@ -1 +1 @@\n-KEY\n+PWNED\n";
    expect((await call("apply_source_code_diff", { path: "certs/key.pem", diff })).status).toBe("error");
    expect(readFileSync(join(root, "certs/key.pem"), "utf8")).toBe("KEY\n");
    expect((await call("write_to_file", { path: "src/keys.ts", content: "ok\n" })).status).toBe("success");
  });

  it("allowGitWrites is validated, and opens .git to the tools", async () => {
    const root = project();
    expect(() => createFileTools({ root, allowGitWrites: "yes" as never })).toThrow(/allowGitWrites/);
    expect(() => createFileTools({ root, denyWrites: [5] as never })).toThrow(/denyWrites/);
    const { call } = directTools(root, { allowGitWrites: true });
    expect((await call("write_to_file", { path: ".git/info/exclude", content: "*.log\n" })).status).toBe("success");
  });
});
