// The example notebooks' runner (scripts/notebooks.mjs): `npm run notebooks:check` must fail when a committed
// notebook's outputs are stale, and `npm run notebooks` must fail when a cell fails — a thrown error or a TypeScript
// error, which tslab reports on stderr rather than as an "error" output. The runner tests execute small notebooks
// written to the OS temp folder; they need Jupyter and tslab in this checkout's examples/notebooks/kernel (bash
// .ci/notebooks-setup.sh) and are skipped, saying what is missing, only when those are not installed. Whatever `tslab`
// kernelspec the machine has (another checkout's, a stale one) plays no part: the runner uses this checkout's kernel.
import { execFile, execFileSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const script = path.join(repo, "scripts", "notebooks.mjs");
const committed = path.join(repo, "examples", "notebooks");

interface Cell {
  cell_type: string;
  id: string;
  metadata: Record<string, unknown>;
  source: string | string[];
  outputs?: { output_type: string; [key: string]: unknown }[];
  execution_count?: number | null;
}
interface Notebook {
  cells: Cell[];
  metadata: Record<string, unknown>;
  nbformat: number;
  nbformat_minor: number;
}

/** A notebook of code cells on the tslab kernel, never executed. */
function notebook(sources: string[]): Notebook {
  return {
    cells: sources.map((source, i) => ({
      cell_type: "code",
      execution_count: null,
      id: `cell-${i}`,
      metadata: {},
      outputs: [],
      source,
    })),
    metadata: { kernelspec: { display_name: "TypeScript", language: "typescript", name: "tslab" } },
    nbformat: 4,
    nbformat_minor: 5,
  };
}

const temps: string[] = [];
function tempDir(files: Record<string, Notebook> = {}): string {
  const dir = mkdtempSync(path.join(tmpdir(), "notebooks-test-"));
  temps.push(dir);
  for (const [name, nb] of Object.entries(files)) writeFileSync(path.join(dir, name), JSON.stringify(nb, null, 1));
  return dir;
}
afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

/** Runs the script; resolves with its exit code and output (never rejects). */
function runScript(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [script, ...args], { cwd: repo, env, timeout: 240_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** What is missing to execute notebooks here ("" when Jupyter runs and this checkout's kernel folder has tslab). */
function missingJupyter(): string {
  const jupyter = process.env.JUPYTER || "jupyter";
  try {
    execFileSync(jupyter, ["nbconvert", "--version"], { encoding: "utf8", stdio: "pipe" });
  } catch {
    return `\`${jupyter} nbconvert\` does not run`;
  }
  const tslab = path.join(committed, "kernel", "node_modules", "tslab", "package.json");
  return existsSync(tslab) ? "" : "tslab is not installed in examples/notebooks/kernel";
}
const missing = missingJupyter();
const needsJupyter = missing ? ` (skipped: ${missing}; run bash .ci/notebooks-setup.sh)` : "";
if (missing) console.info(`notebooks runner tests skipped: ${missing} (run bash .ci/notebooks-setup.sh)`);

describe("npm run notebooks:check", () => {
  it("passes on the committed notebooks", async () => {
    const { code, stdout, stderr } = await runScript(["--check"]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toContain("01-react-agent-guards.ipynb");
  });

  it("fails on a copy whose code was edited without re-running it, and on other unexecuted notebooks", async () => {
    const dir = tempDir();
    for (const file of readdirSync(committed).filter((f) => f.endsWith(".ipynb"))) {
      copyFileSync(path.join(committed, file), path.join(dir, file));
    }
    const first = path.join(dir, "01-react-agent-guards.ipynb");
    expect((await runScript(["--check", "--dir", dir])).code).toBe(0);

    const edited = JSON.parse(readFileSync(first, "utf8")) as Notebook;
    const cell = edited.cells.find((c) => c.cell_type === "code" && (c.outputs?.length ?? 0) > 0);
    if (cell === undefined) throw new Error("the committed notebook has no code cell with outputs");
    const source = Array.isArray(cell.source) ? cell.source.join("") : cell.source;
    cell.source = `${source}\nconsole.log("edited");`;
    writeFileSync(first, JSON.stringify(edited, null, 1));
    const stale = await runScript(["--check", "--dir", dir]);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain("FAIL  ");
    expect(stale.stderr).toContain("01-react-agent-guards.ipynb");
    expect(stale.stderr).toContain("stale outputs");

    // Never executed; executed with an error output; another kernel.
    const pristine = notebook(['console.log("hi");']);
    const withError = notebook(['console.log("hi");']);
    withError.metadata.langgraph_guards = (edited.metadata as { langgraph_guards?: unknown }).langgraph_guards;
    withError.cells[0]!.outputs = [{ output_type: "error", ename: "Error", evalue: "boom", traceback: [] }];
    const python = notebook(["print(1)"]);
    python.metadata.kernelspec = { display_name: "Python 3", language: "python", name: "python3" };
    const others = tempDir({ "a-pristine.ipynb": pristine, "b-error.ipynb": withError, "c-python.ipynb": python });
    const bad = await runScript(["--check", "--dir", others]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("a-pristine.ipynb");
    expect(bad.stderr).toContain("it was never executed");
    expect(bad.stderr).toContain('cell 1 (console.log("hi");) has no output');
    expect(bad.stderr).toContain("b-error.ipynb");
    expect(bad.stderr).toContain("has an error output: Error: boom");
    expect(bad.stderr).toContain("c-python.ipynb");
    expect(bad.stderr).toContain('its kernelspec is "python3", not "tslab"');
    expect(bad.stderr).toContain("3 of 3 notebooks failed");
  });
});

describe("npm run notebooks", () => {
  it.skipIf(missing !== "")(
    `fails on a thrown error and on a type error, naming the notebook and the cell${needsJupyter}`,
    async () => {
      const dir = tempDir({
        "a-ok.ipynb": notebook(['console.log("fine");']),
        "b-throws.ipynb": notebook(["const a = 1;\nconsole.log(a);", 'throw new Error("deliberate failure");']),
        "c-type-error.ipynb": notebook(['const x: number = "a";\nconsole.log(x);']),
      });
      const { code, stdout, stderr } = await runScript(["--dir", dir, "--timeout", "60"]);
      expect(code).toBe(1);
      expect(stdout).toMatch(/ok {4}.*a-ok\.ipynb {2}\d+\.\ds/);
      expect(stderr).toMatch(/FAIL {2}.*b-throws\.ipynb/);
      expect(stderr).toContain('cell 2 (throw new Error("deliberate failure");)');
      expect(stderr).toContain("Error: deliberate failure");
      expect(stderr).toMatch(/FAIL {2}.*c-type-error\.ipynb/);
      expect(stderr).toContain('cell 1 (const x: number = "a";)');
      expect(stderr).toContain("Type 'string' is not assignable to type 'number'.");
      expect(stderr).toContain("2 of 3 notebooks failed");
    },
    240_000,
  );

  it.skipIf(missing !== "")(
    `--write records the executed code, which --check accepts; it runs on this checkout's kernel, not the machine's${needsJupyter}`,
    async () => {
      // Another checkout's tslab kernelspec, first on JUPYTER_PATH (ahead of the user's and the system's folders), as
      // after `bash .ci/notebooks-setup.sh` in another clone: its launcher does not exist, a run on it would fail.
      const other = tempDir();
      const launcher = path.join(other, "elsewhere", "examples", "notebooks", "kernel", "tslab-kernel.cjs");
      mkdirSync(path.join(other, "kernels", "tslab"), { recursive: true });
      writeFileSync(
        path.join(other, "kernels", "tslab", "kernel.json"),
        JSON.stringify({
          argv: [launcher, "kernel", "--config-path", "{connection_file}"],
          display_name: "TypeScript",
        }),
      );
      const env = { ...process.env, JUPYTER_PATH: other };
      const specs = JSON.parse(
        execFileSync(process.env.JUPYTER || "jupyter", ["kernelspec", "list", "--json"], {
          encoding: "utf8",
          stdio: "pipe",
          env,
        }),
      ) as { kernelspecs: Record<string, { spec: { argv: string[] } }> };
      expect(specs.kernelspecs.tslab?.spec.argv[0]).toBe(launcher);

      const dir = tempDir({
        "ok.ipynb": notebook(['const greeting: string = "hello";\nconsole.log(greeting.toUpperCase());']),
      });
      const run = await runScript(["--dir", dir, "--write"], env);
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      const written = JSON.parse(readFileSync(path.join(dir, "ok.ipynb"), "utf8")) as Notebook;
      const outputs = written.cells[0]!.outputs ?? [];
      expect(outputs.map((o) => o.output_type)).toEqual(["stream"]);
      expect(JSON.stringify(outputs)).toContain("HELLO");
      expect((written.metadata as { langgraph_guards?: { executed?: string } }).langgraph_guards?.executed).toMatch(
        /^sha256:[0-9a-f]{64}$/,
      );
      expect((await runScript(["--check", "--dir", dir])).code).toBe(0);
    },
    240_000,
  );
});
