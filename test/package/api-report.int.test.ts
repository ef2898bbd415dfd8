// The API report check (scripts/api-report.mjs; `npm run api:check` in CI) must fail when the public surface changes
// without the checked-in report being updated. These tests run it on a copy of the package built from src/ into the
// OS temp folder, with reports generated there: the real dist/, api/ and src/ are not touched, and the outcome does not
// depend on whether api/ is up to date (CI's `npm run api:check` checks that).
import { execFile } from "node:child_process";
import {
  appendFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, it } from "vitest";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const script = path.join(repo, "scripts", "api-report.mjs");

type PackageJson = { name: string; exports: Record<string, unknown> };
const packageJson = JSON.parse(readFileSync(path.join(repo, "package.json"), "utf8")) as PackageJson;

/** The entry points the script reports on: entries of "exports" with a `types` path (as the script finds them). */
function entryPoints(exportsField: Record<string, unknown>): { subpath: string; types: string; report: string }[] {
  const list = [];
  for (const [subpath, target] of Object.entries(exportsField)) {
    const types = findTypes(target);
    if (types === undefined) continue;
    const suffix = subpath === "." ? "" : `-${subpath.replace(/^\.\//, "").replace(/[^A-Za-z0-9_.-]+/g, "-")}`;
    list.push({ subpath, types, report: `${packageJson.name}${suffix}.api.md` });
  }
  return list;
}

function findTypes(target: unknown): string | undefined {
  if (target === null || typeof target !== "object") return undefined;
  for (const [condition, value] of Object.entries(target)) {
    if (condition === "types" && typeof value === "string") return value;
    const found = findTypes(value);
    if (found) return found;
  }
  return undefined;
}

function runScript(args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [script, ...args],
      { cwd: repo, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === "number" ? error.code : -1) : 0, out: `${stdout}${stderr}` });
      },
    );
  });
}

const entries = entryPoints(packageJson.exports);
let tmp: string;
let base: string;
const links: string[] = [];

/** A copy of the built package (dist/, package.json, reports in api/) that a test may change. */
function copyPackage(name: string): string {
  const dir = path.join(tmp, name);
  mkdirSync(dir);
  cpSync(path.join(base, "dist"), path.join(dir, "dist"), { recursive: true });
  cpSync(path.join(base, "api"), path.join(dir, "api"), { recursive: true });
  cpSync(path.join(base, "package.json"), path.join(dir, "package.json"));
  linkNodeModules(dir);
  return dir;
}

// The .d.ts import @langchain/core, zod, ...: resolve them from this repository's node_modules.
function linkNodeModules(dir: string): void {
  const link = path.join(dir, "node_modules");
  symlinkSync(path.join(repo, "node_modules"), link, "junction");
  links.push(link);
}

beforeAll(async () => {
  tmp = mkdtempSync(path.join(tmpdir(), "api-report-"));
  base = path.join(tmp, "base");
  mkdirSync(base);
  const tsc = path.join(repo, "node_modules", "typescript", "bin", "tsc");
  const build = await new Promise<{ code: number; out: string }>((resolve) => {
    execFile(
      process.execPath,
      [tsc, "-p", path.join(repo, "tsconfig.build.json"), "--outDir", path.join(base, "dist"), "--emitDeclarationOnly"],
      { cwd: repo, encoding: "utf8" },
      (error, stdout, stderr) => resolve({ code: error ? -1 : 0, out: `${stdout}${stderr}` }),
    );
  });
  if (build.code !== 0) throw new Error(`building src/ into ${base} failed:\n${build.out}`);
  writeFileSync(path.join(base, "package.json"), JSON.stringify(packageJson, null, 2));
  linkNodeModules(base);
  const update = await runScript(["update", "--package-dir", base]);
  if (update.code !== 0) throw new Error(`api-report update failed:\n${update.out}`);
});

afterAll(() => {
  if (!tmp) return;
  for (const link of links) if (existsSync(link)) unlinkSync(link); // the links, never what they point to
  rmSync(tmp, { recursive: true, force: true });
});

describe.concurrent("API report check", () => {
  it("writes one report per entry point with types, and passes when nothing changed", async ({ expect }) => {
    expect(entries.map((e) => e.subpath)).toEqual(expect.arrayContaining([".", "./core", "./testing"]));
    expect(readdirSync(path.join(base, "api")).sort()).toEqual(entries.map((e) => e.report).sort());

    const check = await runScript(["check", "--package-dir", base]);
    expect(check.out).toContain("matches");
    expect(check.code).toBe(0);
  });

  it("fails, naming the entry point and showing the diff, when a .d.ts gains an unreported export", async ({
    expect,
  }) => {
    const dir = copyPackage("added-export");
    const target = entries.find((e) => e.subpath === "./core") ?? entries[0]!;
    appendFileSync(path.join(dir, target.types), "\nexport declare function apiReportProbe(input: string): number;\n");

    const check = await runScript(["check", "--package-dir", dir]);
    expect(check.code).toBe(1);
    expect(check.out).toContain(`entry point "${target.subpath}"`);
    expect(check.out).toContain(`the public API differs from ${path.join(dir, "api", target.report)}`);
    expect(check.out).toContain("+export function apiReportProbe(input: string): number;");
    expect(check.out).toContain("npm run build && npm run api:update");
  });

  it("fails when an entry point has no report or a report has no entry point; update fixes both", async ({
    expect,
  }) => {
    const dir = copyPackage("renamed-entry");
    const renamed = entries.filter((e) => e.subpath !== ".").at(-1)!;
    const newSubpath = `${renamed.subpath}-renamed`;
    const pkg = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as PackageJson;
    pkg.exports = Object.fromEntries(
      Object.entries(pkg.exports).map(([key, value]) => [key === renamed.subpath ? newSubpath : key, value]),
    );
    writeFileSync(path.join(dir, "package.json"), JSON.stringify(pkg, null, 2));
    const newReport = entryPoints(pkg.exports).find((e) => e.subpath === newSubpath)!.report;

    const check = await runScript(["check", "--package-dir", dir]);
    expect(check.code).toBe(1);
    expect(check.out).toContain(`entry point "${newSubpath}"`);
    expect(check.out).toContain(`has no API report: ${path.join(dir, "api", newReport)} is missing`);
    expect(check.out).toContain(`${path.join(dir, "api", renamed.report)} belongs to no entry point`);

    const update = await runScript(["update", "--package-dir", dir]);
    expect(update.code).toBe(0);
    const reports = readdirSync(path.join(dir, "api"));
    expect(reports).toContain(newReport);
    expect(reports).not.toContain(renamed.report);
    expect(readFileSync(path.join(dir, "api", newReport), "utf8")).toBe(
      readFileSync(path.join(base, "api", renamed.report), "utf8"),
    );
  });
});
