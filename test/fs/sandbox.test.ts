import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createSandbox } from "../../src/fs/sandbox.js";

const base = realpathSync(mkdtempSync(join(tmpdir(), "lgg-sandbox-")));
afterAll(() => rmSync(base, { recursive: true, force: true }));
const root = join(base, "proj");
const sibling = join(base, "proj2");
const outside = join(base, "outside");
for (const dir of [root, sibling, outside, join(root, "src"), join(root, ".git"), join(root, "pages")]) {
  mkdirSync(dir, { recursive: true });
}
writeFileSync(join(root, "src", "app.ts"), "export {};\n");
writeFileSync(join(sibling, "secret.txt"), "no\n");
writeFileSync(join(outside, "secret.txt"), "no\n");
writeFileSync(join(root, "pages", "[...slug].tsx"), "export default 1;\n");
symlinkSync(outside, join(root, "link-out")); // a symlink inside root pointing outside
symlinkSync(join(root, "src"), join(root, "link-in")); // a symlink inside root pointing inside
symlinkSync(join(outside, "missing.txt"), join(root, "dangling-out")); // a dangling symlink pointing outside
symlinkSync(join(root, "loop-b"), join(root, "loop-a"));
symlinkSync(join(root, "loop-a"), join(root, "loop-b"));
const sandbox = createSandbox({ root });

describe("sandbox: paths stay inside the root", () => {
  it.each([
    ["a parent step", "../outside/secret.txt", "outside-root"],
    ["an absolute path outside root", "/etc/passwd", "outside-root"],
    ["a prefix sibling (/proj2 for /proj)", join(sibling, "secret.txt"), "outside-root"],
    ["a prefix sibling, relative", "../proj2/secret.txt", "outside-root"],
    ["a symlink inside root pointing outside", "link-out/secret.txt", "outside-root"],
    ["the symlink itself", "link-out", "outside-root"],
    ["a symlink in an intermediate folder, to a file that does not exist", "link-out/new/file.txt", "outside-root"],
    ["a dangling symlink pointing outside", "dangling-out", "outside-root"],
    ["a NUL byte", "src/app.ts\0.png", "nul-byte"],
    ["a symlink loop", "loop-a/x", "symlink-loop"],
    ["an empty path", "", "invalid"],
  ])("refuses %s", (_what, input, reason) => {
    const result = sandbox.resolve(input);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.reason).toBe(reason);
      expect(result.message.length).toBeGreaterThan(10);
    }
  });

  it.each([
    ["a relative path", "src/app.ts", "src/app.ts"],
    ["an absolute path inside", join(root, "src/app.ts"), "src/app.ts"],
    ["a name with dots that is not a parent step", "pages/[...slug].tsx", "pages/[...slug].tsx"],
    ["a parent step that stays inside", "src/../pages/[...slug].tsx", "pages/[...slug].tsx"],
    ["a file that does not exist yet", "src/new/deep/file.ts", "src/new/deep/file.ts"],
    ["a symlink to a place inside root (resolved to its real path)", "link-in/app.ts", "src/app.ts"],
    ["the root itself", ".", "."],
  ])("allows %s", (_what, input, rel) => {
    const result = sandbox.resolve(input);
    expect(result).toEqual({ ok: true, path: join(root, rel === "." ? "" : rel), relative: rel });
  });

  it("the deny list refuses writes (default: .git internals) and allows reads", () => {
    expect(sandbox.resolve(".git/config", { write: true })).toMatchObject({ ok: false, reason: "denied" });
    expect(sandbox.resolve(".git", { write: true })).toMatchObject({ ok: false, reason: "denied" });
    expect(sandbox.resolve(".git/config")).toMatchObject({ ok: true });
    expect(sandbox.resolve(".github/workflows/ci.yml", { write: true })).toMatchObject({ ok: true });
    const custom = createSandbox({ root, denyWrites: ["secrets/", "package-lock.json"] });
    expect(custom.resolve("package-lock.json", { write: true })).toMatchObject({ ok: false, reason: "denied" });
    expect(custom.resolve(".git/config", { write: true })).toMatchObject({ ok: false, reason: "denied" }); // built in
  });

  it("glob entries protect as in .gitignore: *.pem, .env*, secrets/** (issue 35)", () => {
    const custom = createSandbox({ root, denyWrites: ["*.pem", ".env*", "secrets/**"] });
    const denied = (path: string) => !custom.resolve(path, { write: true }).ok;
    for (const path of ["key.pem", "certs/deep/server.PEM", ".env", ".env.local", "config/.env.production"]) {
      expect(denied(path), path).toBe(true);
    }
    for (const path of ["secrets/a.txt", "secrets/x/y/z.json"]) expect(denied(path), path).toBe(true);
    for (const path of ["key.pem.txt", "env", "src/secrets/a.txt", "secretsx/a.txt", "src/app.ts", "my.env"]) {
      expect(denied(path), path).toBe(false);
    }
    expect(custom.resolve("key.pem")).toMatchObject({ ok: true }); // reads stay allowed
  });

  it("a custom list cannot drop the built-in .git protection, not even with a negation (issue 35)", () => {
    for (const denyWrites of [[], ["*.pem"], ["!.git/", "!.git/**", "!**/.git/**"]]) {
      const custom = createSandbox({ root, denyWrites });
      for (const path of [".git/hooks/pre-commit", ".git/config", "sub/.git/HEAD", "vendor/lib/.git"]) {
        expect(custom.resolve(path, { write: true }), `${denyWrites} ${path}`).toMatchObject({ reason: "denied" });
      }
    }
  });

  it("allowGitWrites: true is the one way to write inside .git; the deny list still applies (issue 35)", () => {
    const open = createSandbox({ root, denyWrites: ["*.pem"], allowGitWrites: true });
    expect(open.resolve(".git/hooks/pre-commit", { write: true })).toMatchObject({ ok: true });
    expect(open.resolve(".git/key.pem", { write: true })).toMatchObject({ ok: false, reason: "denied" });
  });

  it("the path as given is judged too: a link named .env to an allowed file is not written (issue 35)", () => {
    writeFileSync(join(root, "src", "env.txt"), "A=1\n");
    symlinkSync(join(root, "src", "env.txt"), join(root, ".env"));
    const custom = createSandbox({ root, denyWrites: [".env*"] });
    expect(custom.resolve(".env", { write: true })).toMatchObject({ ok: false, reason: "denied" });
    expect(custom.resolve("src/env.txt", { write: true })).toMatchObject({ ok: true });
  });

  it("deny entries match as in .gitignore: a bare name at any depth, one with a slash anchored (issue 15)", () => {
    for (const path of ["sub/.git/hooks/pre-commit", "a/b/.git", ".GIT/config", "vendor/x/.git/HEAD"]) {
      expect(sandbox.resolve(path, { write: true }), path).toMatchObject({ ok: false, reason: "denied" });
    }
    for (const path of [".github/x", "sub/.gitignore", "my.git/x", "git/x", "src/.gitkeep"]) {
      expect(sandbox.resolve(path, { write: true }), path).toMatchObject({ ok: true });
    }
    const custom = createSandbox({ root, denyWrites: ["/dist/", "src/gen/", "package-lock.json", "./top.lock"] });
    const denied = (path: string) => !custom.resolve(path, { write: true }).ok;
    expect(denied("dist/a.js")).toBe(true);
    expect(denied("pkg/dist/a.js")).toBe(false);
    expect(denied("src/gen/x.ts")).toBe(true);
    expect(denied("lib/src/gen/x.ts")).toBe(false);
    expect(denied("a/b/package-lock.json")).toBe(true);
    expect(denied("top.lock")).toBe(true);
    expect(denied("sub/top.lock")).toBe(false);
  });

  it("a path too long to open is refused at once, and echoed capped (issue 15)", () => {
    // Refused as too long before any part of it is resolved (no timing here: the machine's load is not the code's).
    const result = sandbox.resolve("a/".repeat(500_000));
    expect(result).toMatchObject({ ok: false, reason: "invalid" });
    if (!result.ok) {
      expect(result.message).toMatch(/is too long \(the limit is 4096 bytes\)\.$/);
      expect(result.message.length).toBeLessThan(400);
    }
  });

  it("a root given through a symlink is resolved first", () => {
    const alias = join(base, "alias");
    symlinkSync(root, alias);
    const viaAlias = createSandbox({ root: alias });
    expect(viaAlias.root).toBe(root);
    expect(viaAlias.resolve("src/app.ts")).toMatchObject({ ok: true, path: join(root, "src/app.ts") });
    expect(viaAlias.resolve(join(alias, "src/app.ts"))).toMatchObject({ ok: true, relative: "src/app.ts" });
  });
});
