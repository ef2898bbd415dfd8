/**
 * Issue 61, item 8: the shell-read fingerprint (src/tool-calls/freshness.ts) reads at most 64 KiB + 1 of a path and
 * never blocks. `/proc` files say size 0: `head -n 3 /proc/kallsyms` read 5.4 MB first, `head -c 64
 * /proc/self/pagemap` grew to gigabytes, and as root `head -n 2 /proc/kmsg` blocked the whole process before the
 * command's own timeout could run. Kernel and device files (`/proc`, `/sys`, `/dev`, by their real path after
 * links) and anything not a regular file are fingerprinted by their stat alone. Each case runs in a child process
 * with a timeout: a fingerprint that blocks must fail the test, not hang it.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const KiB64 = 64 * 1024;
const root = process.getuid?.() === 0;
const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});
function folder(): string {
  const path = mkdtempSync(join(tmpdir(), "shell-read-special-"));
  folders.push(path);
  return path;
}

/** The child: fingerprints `paths` and says how long it took and how many bytes it read (`rchar` of /proc/self/io). */
const CHILD = `
const { readFileSync } = await import("node:fs");
const rchar = () => Number(/rchar: (\\d+)/.exec(readFileSync("/proc/self/io", "utf8"))[1]);
const { readsFingerprint } = await import("./src/tool-calls/freshness.ts");
const paths = JSON.parse(process.argv[1]);
const before = rchar();
const start = performance.now();
const fingerprint = readsFingerprint(paths);
const ms = performance.now() - start;
console.log(JSON.stringify({ ms, read: rchar() - before, fingerprint, again: readsFingerprint(paths) }));
`;

/** Fingerprints `paths` in a child process killed after 10 s (a blocked or runaway read fails, never hangs). */
function fingerprintInChild(paths: string[]): { ms: number; read: number; fingerprint: string; again: string } {
  const child = spawnSync(
    process.execPath,
    ["--import", "tsx", "--input-type=module", "-e", CHILD, JSON.stringify(paths)],
    {
      encoding: "utf8",
      timeout: 10_000,
      killSignal: "SIGKILL",
    },
  );
  expect(child.signal, `killed after 10 s: the fingerprint blocked or ran away (${child.stderr})`).toBeNull();
  expect(child.status, child.stderr).toBe(0);
  return JSON.parse(child.stdout.trim().split("\n").at(-1) ?? "");
}

describe.runIf(process.platform === "linux")("readsFingerprint on kernel and device files", () => {
  it("reads none of /proc/kallsyms, which says size 0 and holds megabytes", () => {
    const out = fingerprintInChild(["/proc/kallsyms"]);
    expect(out.read).toBeLessThan(KiB64 + 1);
    expect(out.again).toBe(out.fingerprint); // its stat alone: stable, so the rules judge a repeat
  });

  it("is done at once on /proc/self/pagemap, which grows to gigabytes when read to its end", () => {
    const out = fingerprintInChild(["/proc/self/pagemap"]);
    expect(out.read).toBeLessThan(KiB64 + 1);
    expect(out.ms).toBeLessThan(1_000);
  });

  it.runIf(root)("never blocks on /proc/kmsg (as root, a read waits for the kernel's next message)", () => {
    const out = fingerprintInChild(["/proc/kmsg"]);
    expect(out.ms).toBeLessThan(1_000);
  });

  it("judges a link by its real path: links into /proc, a FIFO, /dev/stdin and /proc/self/fd/0 are not opened", () => {
    const dir = folder();
    execFileSync("mkfifo", [join(dir, "fifo")]);
    symlinkSync(join(dir, "fifo"), join(dir, "to-fifo"));
    symlinkSync("/proc/self/pagemap", join(dir, "to-pagemap"));
    symlinkSync("/proc/kallsyms", join(dir, "to-kallsyms"));
    const paths = ["fifo", "to-fifo", "to-pagemap", "to-kallsyms"].map((name) => join(dir, name));
    const out = fingerprintInChild([...paths, "/dev/stdin", "/proc/self/fd/0"]);
    expect(out.read).toBeLessThan(KiB64 + 1);
    expect(out.ms).toBeLessThan(1_000);
  });
});
