/**
 * The fingerprint behind the freshness check of shell reads (issue 43, class 2; src/tool-calls/freshness.ts): which calls
 * have one, and what changes it. The scenarios are in test/scenarios/outside-writes.int.test.ts.
 */
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { callFacts } from "../../src/tool-calls/core/facts.js";
import { resolveToolGuardOptions } from "../../src/tool-calls/core/options.js";
import { readsChanged, readsFingerprint, shellReadPaths } from "../../src/tool-calls/freshness.js";

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});
function folder(): string {
  const root = mkdtempSync(join(tmpdir(), "shell-read-freshness-"));
  roots.push(root);
  return root;
}

describe("shellReadPaths: the shell reads whose files are known", () => {
  it("a shell tool's read of absolute paths only", () => {
    expect(shellReadPaths("bash", { kind: "read", paths: ["/r/build.log"] })).toEqual(["/r/build.log"]);
    expect(shellReadPaths("bash", { kind: "read", paths: ["build.log"] })).toBeUndefined();
    expect(shellReadPaths("bash", { kind: "read", paths: ["/r/a", "b"] })).toBeUndefined();
    expect(shellReadPaths("bash", { kind: "read", paths: [] })).toBeUndefined(); // may read anything
    expect(shellReadPaths("bash", { kind: "write", paths: ["/r/a"] })).toBeUndefined();
    expect(shellReadPaths("read_file", { kind: "read", paths: ["/r/a"] })).toBeUndefined(); // not a shell
  });
});

describe("readsFingerprint", () => {
  it("changes when a file is appended to, rewritten with the same size, removed or created", () => {
    const root = folder();
    const log = join(root, "build.log");
    writeFileSync(log, "step 1\n");
    const first = readsFingerprint([log]);
    expect(readsFingerprint([log])).toBe(first);
    appendFileSync(log, "step 2\n");
    const appended = readsFingerprint([log]);
    expect(appended).not.toBe(first);
    // Same size, the times set back: the content of a small file still tells.
    writeFileSync(log, "step 1\nstep 3\n");
    utimesSync(log, 1, 1);
    const rewritten = readsFingerprint([log]);
    writeFileSync(log, "step 1\nstep 4\n");
    utimesSync(log, 1, 1);
    expect(readsFingerprint([log])).not.toBe(rewritten);
    unlinkSync(log);
    const missing = readsFingerprint([log]);
    expect(missing).not.toBe(rewritten);
    writeFileSync(log, "");
    expect(readsFingerprint([log])).not.toBe(missing);
  });

  it("a folder: changes when an entry is added or an entry grows", () => {
    const root = folder();
    mkdirSync(join(root, "logs"));
    writeFileSync(join(root, "logs", "a.log"), "a\n");
    const before = readsFingerprint([join(root, "logs")]);
    appendFileSync(join(root, "logs", "a.log"), "b\n");
    const grown = readsFingerprint([join(root, "logs")]);
    expect(grown).not.toBe(before);
    writeFileSync(join(root, "logs", "b.log"), "");
    expect(readsFingerprint([join(root, "logs")])).not.toBe(grown);
  });
});

describe("readsChanged: what the adapters give DecideContext.readsChanged", () => {
  it("true once the files a recorded shell read read have changed; undefined without a fingerprint", () => {
    const root = folder();
    writeFileSync(join(root, "build.log"), "step 1\n");
    const bash = { name: "bash", args: { command: "tail -n 3 build.log" } };
    const call = callFacts(bash, resolveToolGuardOptions({ rules: { root } }));
    const check = readsChanged;
    const previous = { ok: true, digest: "d", preview: "step 1", reads: readsFingerprint([join(root, "build.log")]) };
    expect(check(call, previous)).toBe(false);
    appendFileSync(join(root, "build.log"), "step 2\n");
    expect(check(call, previous)).toBe(true);
    expect(check(call, { ok: true, digest: "d", preview: "step 1" })).toBeUndefined(); // no fingerprint kept
    // Relative paths without a root: the files are not known.
    expect(readsChanged(callFacts(bash, resolveToolGuardOptions()), previous)).toBeUndefined();
  });
});
