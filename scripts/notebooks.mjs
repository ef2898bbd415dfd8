// The example notebooks (examples/notebooks/*.ipynb, tslab TypeScript kernel): execute them, or check committed ones.
//
//   node scripts/notebooks.mjs            (npm run notebooks)        executes every notebook with
//                                         `jupyter nbconvert --to notebook --execute` (kernel tslab, a timeout per
//                                         cell) into a temporary folder; fails when a cell fails — an exception, a
//                                         TypeScript error (tslab reports both on stderr, with an "error" reply) —
//                                         or an output is of type "error". Prints the time of each notebook.
//   node scripts/notebooks.mjs --write    the same, then writes the executed notebooks over the committed ones
//                                         (outputs refreshed) with the digest of their code cells in
//                                         metadata.langgraph_guards.executed
//   node scripts/notebooks.mjs --check    (npm run notebooks:check; no Jupyter needed) fails when a notebook's code
//                                         no longer matches the digest recorded when it was executed (stale outputs),
//                                         a code cell has no output (unless tagged "no-output"), an output is an
//                                         error, or the kernelspec is not tslab
//
// Executing needs Jupyter and tslab installed in this checkout's examples/notebooks/kernel (both by bash
// .ci/notebooks-setup.sh) and, for notebooks that import langgraph-guards, a build (`npm run build`: the notebooks
// import the package through package.json "exports" → dist/). After changing a notebook: `npm run build && npm run
// notebooks -- --write`, then commit the notebook.
//
// The kernel is always this checkout's: the runner writes a `tslab` kernelspec that starts this checkout's
// examples/notebooks/kernel/tslab-kernel.cjs (with this Node) into its temporary folder and puts that folder first on
// JUPYTER_PATH for nbconvert, so a `tslab` kernelspec registered on the machine (by another checkout's setup, or a
// plain `tslab install`) is never used.
//
// Options:
//   --dir <folder>      the notebooks' folder (default examples/notebooks); every *.ipynb in it, not recursive
//   --timeout <s>       per-cell timeout in seconds (default 120)
// Environment: JUPYTER, the jupyter command (default `jupyter` on PATH).
import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const KERNEL = "tslab";
const KERNEL_DIR = path.join(repoRoot, "examples", "notebooks", "kernel");
const LAUNCHER = path.join(KERNEL_DIR, "tslab-kernel.cjs");
const NO_OUTPUT_TAG = "no-output";
const WRITE_HINT = "npm run build && npm run notebooks -- --write";
/** Marks, in the executed copy, a cell whose execute reply was an error (set by the nbconvert config below). */
const ERROR_MARK = "notebooks_runner_error";

const { values } = parseArgs({
  options: {
    dir: { type: "string", default: path.join(repoRoot, "examples", "notebooks") },
    check: { type: "boolean", default: false },
    write: { type: "boolean", default: false },
    timeout: { type: "string", default: "120" },
  },
});
const dir = path.resolve(values.dir);
const timeout = Number(values.timeout);
const jupyter = process.env.JUPYTER || "jupyter";

/** The text of a cell's source or of a stream output (a string or a list of lines in .ipynb). */
const text = (value) => (Array.isArray(value) ? value.join("") : (value ?? ""));

/** sha256 of the sources of the code cells, in order: what `--write` records and `--check` compares. */
function codeDigest(notebook) {
  const sources = notebook.cells.filter((c) => c.cell_type === "code").map((c) => text(c.source));
  return `sha256:${createHash("sha256").update(JSON.stringify(sources)).digest("hex")}`;
}

/** How tslab reports a failed cell on stderr: `line:col - message` (TypeScript) or a stack from the vm. */
const TSLAB_ERROR = /^\d+:\d+ - |evalmachine\.<anonymous>|^Error: |^\w*Error: /m;

/** The errors of one output, as text (empty when it is not one). */
function outputError(output) {
  if (output.output_type === "error") return `${output.ename}: ${output.evalue}`;
  if (output.output_type === "stream" && output.name === "stderr" && TSLAB_ERROR.test(text(output.text))) {
    return text(output.text).trim();
  }
  return "";
}

const cellLabel = (index, cell) => {
  const first =
    text(cell.source)
      .split("\n")
      .find((l) => l.trim() !== "") ?? "";
  return `cell ${index + 1} (${first.length > 60 ? `${first.slice(0, 59)}…` : first})`;
};

function notebooksIn(folder) {
  if (!existsSync(folder)) fail(`notebooks: ${folder} does not exist`);
  const files = readdirSync(folder)
    .filter((f) => f.endsWith(".ipynb"))
    .sort();
  if (files.length === 0) fail(`notebooks: no .ipynb in ${folder}`);
  return files.map((f) => path.join(folder, f));
}

function fail(message) {
  console.error(message);
  process.exit(1);
}

const readNotebook = (file) => JSON.parse(readFileSync(file, "utf8"));
const rel = (file) => path.relative(process.cwd(), file) || file;

/** What is wrong with a committed notebook (empty when nothing is). */
function checkNotebook(notebook) {
  const problems = [];
  const kernel = notebook.metadata?.kernelspec?.name;
  if (kernel !== KERNEL)
    problems.push(`its kernelspec is ${kernel === undefined ? "missing" : `"${kernel}"`}, not "${KERNEL}"`);
  const recorded = notebook.metadata?.langgraph_guards?.executed;
  if (recorded === undefined) problems.push(`it was never executed with \`${WRITE_HINT}\` (no digest in its metadata)`);
  else if (recorded !== codeDigest(notebook)) {
    problems.push(`its code changed since it was executed (stale outputs): run \`${WRITE_HINT}\``);
  }
  notebook.cells.forEach((cell, i) => {
    if (cell.cell_type !== "code" || text(cell.source).trim() === "") return;
    const outputs = cell.outputs ?? [];
    if (outputs.length === 0 && !(cell.metadata?.tags ?? []).includes(NO_OUTPUT_TAG)) {
      problems.push(`${cellLabel(i, cell)} has no output (tag it "${NO_OUTPUT_TAG}" if that is intended)`);
    }
    for (const output of outputs) {
      const error = outputError(output);
      if (error) problems.push(`${cellLabel(i, cell)} has an error output: ${error.split("\n")[0]}`);
    }
  });
  return problems;
}

function check(files) {
  let failed = 0;
  for (const file of files) {
    const problems = checkNotebook(readNotebook(file));
    if (problems.length === 0) {
      console.log(`ok    ${rel(file)}`);
      continue;
    }
    failed += 1;
    console.error(`FAIL  ${rel(file)}`);
    for (const p of problems) console.error(`      - ${p}`);
  }
  if (failed > 0) fail(`notebooks:check: ${failed} of ${files.length} notebooks failed`);
  console.log(`notebooks:check: ${files.length} notebooks ok`);
}

/** Fails with one line when Jupyter cannot run, or tslab is not installed in this checkout's kernel folder. */
function requireJupyter() {
  try {
    execFileSync(jupyter, ["nbconvert", "--version"], { encoding: "utf8", stdio: "pipe" });
  } catch (e) {
    fail(`notebooks: cannot run \`${jupyter} nbconvert\` (${e.code ?? e.message}): run bash .ci/notebooks-setup.sh`);
  }
  if (!existsSync(path.join(KERNEL_DIR, "node_modules", "tslab", "package.json"))) {
    fail(`notebooks: tslab is not installed in ${rel(KERNEL_DIR)}: run bash .ci/notebooks-setup.sh`);
  }
}

/**
 * Writes the `tslab` kernelspec of this checkout under `dataDir` (a Jupyter data folder: kernels/tslab/kernel.json)
 * and returns nbconvert's environment, with `dataDir` first on JUPYTER_PATH (Jupyter's first place to look, before
 * the user's and the system's folders). Checks with `jupyter kernelspec list` that it is the one Jupyter finds;
 * throws, saying what is wrong, when it is not.
 */
function kernelEnvironment(dataDir) {
  const specDir = path.join(dataDir, "kernels", KERNEL);
  mkdirSync(specDir, { recursive: true });
  const spec = {
    argv: [
      process.execPath,
      "--experimental-import-meta-resolve",
      LAUNCHER,
      "kernel",
      "--config-path",
      "{connection_file}",
    ],
    display_name: "TypeScript", // as tslab names it: nbconvert copies it into the executed notebooks
    language: "typescript",
  };
  writeFileSync(path.join(specDir, "kernel.json"), `${JSON.stringify(spec, null, 2)}\n`);
  const inherited = process.env.JUPYTER_PATH;
  const env = { ...process.env, JUPYTER_PATH: inherited ? `${dataDir}${path.delimiter}${inherited}` : dataDir };
  let specs;
  try {
    specs = JSON.parse(
      execFileSync(jupyter, ["kernelspec", "list", "--json"], { encoding: "utf8", stdio: "pipe", env }),
    );
  } catch (e) {
    throw new Error(
      `cannot run \`${jupyter} kernelspec list\` (${e.code ?? e.message}): run bash .ci/notebooks-setup.sh`,
    );
  }
  const found = specs.kernelspecs?.[KERNEL]?.resource_dir;
  if (found === undefined || path.resolve(found) !== path.resolve(specDir)) {
    throw new Error(
      `Jupyter picks the ${KERNEL} kernelspec in ${found ?? "(none)"}, not the one written to ${specDir}`,
    );
  }
  return env;
}

/** nbconvert settings: keep going after a failed cell, marking it (tslab's reply has no ename, no error output). */
const NBCONVERT_CONFIG = `c = get_config()
c.ExecutePreprocessor.allow_errors = True
c.ExecutePreprocessor.record_timing = False
def _mark_error(cell, cell_index, execute_reply):
    cell.metadata[${JSON.stringify(ERROR_MARK)}] = True
c.ExecutePreprocessor.on_cell_error = _mark_error
`;

function nbconvert(file, outDir, configFile, env) {
  const args = [
    "nbconvert",
    "--to",
    "notebook",
    "--execute",
    `--config=${configFile}`,
    `--ExecutePreprocessor.timeout=${timeout}`,
    `--ExecutePreprocessor.kernel_name=${KERNEL}`,
    "--output-dir",
    outDir,
    file,
  ];
  return new Promise((resolve) => {
    const child = spawn(jupyter, args, { cwd: path.dirname(file), env, stdio: ["ignore", "pipe", "pipe"] });
    let log = "";
    child.stdout.on("data", (d) => {
      log += d;
    });
    child.stderr.on("data", (d) => {
      log += d;
    });
    child.on("error", (e) => resolve({ code: 1, log: `${log}${e.message}` }));
    child.on("close", (code) => resolve({ code: code ?? 1, log }));
  });
}

/** The failures of an executed notebook: cells whose reply was an error, and error outputs. */
function failures(executed) {
  const found = [];
  executed.cells.forEach((cell, i) => {
    if (cell.cell_type !== "code") return;
    const errors = (cell.outputs ?? []).map(outputError).filter(Boolean);
    const stderr = (cell.outputs ?? [])
      .filter((o) => o.output_type === "stream" && o.name === "stderr")
      .map((o) => text(o.text).trim());
    if (cell.metadata?.[ERROR_MARK] || errors.length > 0) {
      const detail = [...new Set([...errors, ...stderr])].join("\n") || "(the kernel reported an error, no output)";
      found.push(`${cellLabel(i, cell)}:\n${detail.replace(/^/gm, "        ")}`);
    }
  });
  return found;
}

async function execute(files) {
  requireJupyter();
  const needsBuild = files.filter((f) => /["']langgraph-guards(\/[\w-]+)?["']/.test(readFileSync(f, "utf8")));
  if (needsBuild.length > 0 && !existsSync(path.join(repoRoot, "dist", "index.js"))) {
    fail(
      `notebooks: dist/ is missing (${rel(needsBuild[0])} imports langgraph-guards from it): run npm run build first`,
    );
  }
  const work = mkdtempSync(path.join(tmpdir(), "notebooks-"));
  const configFile = path.join(work, "nbconvert_config.py");
  writeFileSync(configFile, NBCONVERT_CONFIG);
  let env;
  try {
    env = kernelEnvironment(path.join(work, "jupyter"));
  } catch (e) {
    rmSync(work, { recursive: true, force: true });
    fail(`notebooks: ${e.message}`);
  }
  let failed = 0;
  const started = Date.now();
  try {
    for (const file of files) {
      const t0 = Date.now();
      const { code, log } = await nbconvert(file, work, configFile, env);
      const seconds = ((Date.now() - t0) / 1000).toFixed(1);
      const out = path.join(work, path.basename(file));
      const problems = [];
      if (code !== 0 || !existsSync(out)) {
        const tail = log.trim().split("\n").slice(-15).join("\n");
        problems.push(`jupyter nbconvert exited with ${code}:\n${tail.replace(/^/gm, "        ")}`);
      } else {
        problems.push(...failures(readNotebook(out)));
      }
      if (problems.length > 0) {
        failed += 1;
        console.error(`FAIL  ${rel(file)}  ${seconds}s`);
        for (const p of problems) console.error(`      - ${p}`);
        continue;
      }
      console.log(`ok    ${rel(file)}  ${seconds}s`);
      if (values.write) {
        const executed = readNotebook(out);
        executed.metadata.langgraph_guards = { ...executed.metadata.langgraph_guards, executed: codeDigest(executed) };
        writeFileSync(file, `${JSON.stringify(sortKeys(executed), null, 1)}\n`);
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const total = ((Date.now() - started) / 1000).toFixed(1);
  if (failed > 0) fail(`notebooks: ${failed} of ${files.length} notebooks failed (${total}s)`);
  console.log(
    `notebooks: ${files.length} notebooks ran without error in ${total}s${values.write ? ", written back" : ""}`,
  );
}

/** Keys sorted, as Jupyter writes notebooks (nbformat: sort_keys, indent 1), so that saves diff cleanly. */
function sortKeys(value) {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((k) => [k, sortKeys(value[k])]),
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (values.check && values.write) fail("notebooks: --check and --write exclude each other");
  if (!Number.isFinite(timeout) || timeout <= 0) fail(`notebooks: --timeout expects seconds, got ${values.timeout}`);
  const files = notebooksIn(dir);
  if (values.check) check(files);
  else await execute(files);
}
