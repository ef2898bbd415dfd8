/**
 * Issue 44, item 5: a test file that starts processes is named `*.int.test.ts`, so that `npm run test:unit` (every
 * other file) stays fast. A file not so named, and the test/ modules it imports, must not import a module that
 * starts processes (child_process, worker_threads, cluster, or test/support/postgres.ts's server), and must not
 * call the file tools' `execute_command` (a real `bash -c`).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");
const testDir = join(root, "test");

/** The module specifiers that start processes or reach a server started for the tests. */
const SPAWNING_MODULES = /^(node:)?(child_process|worker_threads|cluster)$|support\/postgres(\.js)?$/;
/** A call of the real `execute_command` tool through a harness's `call` or `tools.call`, name first. */
const COMMAND_CALL = /\bcall\(\s*["']execute_command["']/;
const IMPORT = /(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/g;

/** Every `*.test.ts` under test/, relative to the repository. */
function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith(".test.ts") ? [relative(root, path)] : [];
  });
}

/** The module specifiers a file imports (static, re-exports and dynamic with a literal). */
function importsOf(text: string): string[] {
  return [...text.matchAll(IMPORT)].map((m) => m[1] ?? m[2] ?? "");
}

/** A relative `.js` specifier as the `.ts` file under test/ it names, or undefined (src/, packages, elsewhere). */
function localModule(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  const path = resolve(dirname(from), specifier).replace(/\.js$/, ".ts");
  return path.startsWith(`${testDir}/`) && existsSync(path) ? path : undefined;
}

/** Why `file` (absolute) or a test/ module it imports starts processes: one line per reason, none when it does not. */
function spawningReasons(file: string, seen = new Set<string>()): string[] {
  if (seen.has(file)) return [];
  seen.add(file);
  const text = readFileSync(file, "utf8");
  const name = relative(root, file);
  const reasons = importsOf(text)
    .filter((specifier) => SPAWNING_MODULES.test(specifier))
    .map((specifier) => `${name} imports ${specifier}`);
  if (COMMAND_CALL.test(text)) reasons.push(`${name} calls execute_command`);
  for (const specifier of importsOf(text)) {
    const local = localModule(file, specifier);
    if (local !== undefined) reasons.push(...spawningReasons(local, seen));
  }
  return reasons;
}

describe("process-spawning test files are named *.int.test.ts", () => {
  const files = testFiles(testDir);

  it("finds the test files and tells the spawning ones", () => {
    expect(files.length).toBeGreaterThan(100);
    // The checks see what they look for: a known integration file and a support module that starts PostgreSQL.
    expect(spawningReasons(join(root, "test/fs/write-kill.int.test.ts"))).toContain(
      "test/fs/write-kill.int.test.ts imports node:child_process",
    );
    expect(spawningReasons(join(root, "test/fs/commands-end.int.test.ts"))).toContain(
      "test/fs/commands-end.int.test.ts calls execute_command",
    );
    expect(spawningReasons(join(root, "test/postgres/persistence.int.test.ts")).join("\n")).toMatch(
      /imports \.\.\/support\/postgres\.js|test\/support\/postgres\.ts imports node:child_process/,
    );
  });

  it("no other test file starts a process", () => {
    const unit = files.filter((file) => !file.endsWith(".int.test.ts"));
    expect(unit.flatMap((file) => spawningReasons(join(root, file)))).toEqual([]);
  });
});
