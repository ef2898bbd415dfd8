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
// Executing needs Jupyter and the tslab kernelspec (bash .ci/notebooks-setup.sh) and, for notebooks that import
// langgraph-guards, a build (`npm run build`: the notebooks import the package through package.json "exports" →
// dist/). After changing a notebook: `npm run build && npm run notebooks -- --write`, then commit the notebook.
//
// Options:
//   --dir <folder>      the notebooks' folder (default examples/notebooks); every *.ipynb in it, not recursive
//   --timeout <s>       per-cell timeout in seconds (default 120)
// Environment: JUPYTER, the jupyter command (default `jupyter` on PATH).
import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const KERNEL = "tslab";
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

/** Fails with one line when Jupyter or the tslab kernelspec is not installed. */
function requireJupyter() {
  let specs;
  try {
    specs = JSON.parse(execFileSync(jupyter, ["kernelspec", "list", "--json"], { encoding: "utf8", stdio: "pipe" }));
  } catch (e) {
    fail(
      `notebooks: cannot run \`${jupyter} kernelspec list\` (${e.code ?? e.message}): run bash .ci/notebooks-setup.sh`,
    );
  }
  const spec = specs.kernelspecs?.[KERNEL];
  if (!spec) fail(`notebooks: the ${KERNEL} kernelspec is not installed: run bash .ci/notebooks-setup.sh`);
  // The kernelspec is the machine's: another clone's setup may have pointed it at that clone's launcher.
  const launcher = path.resolve(
    path.dirname(fileURLToPath(import.meta.url)),
    "../examples/notebooks/kernel/tslab-kernel.cjs",
  );
  const argv = spec.spec?.argv ?? [];
  if (!argv.some((a) => path.resolve(String(a)) === realpathSync(launcher))) {
    fail(
      `notebooks: the ${KERNEL} kernelspec starts ${argv[0] ?? "?"}, not this clone's ${launcher}: run bash .ci/notebooks-setup.sh`,
    );
  }
}

/** nbconvert settings: keep going after a failed cell, marking it (tslab's reply has no ename, no error output). */
const NBCONVERT_CONFIG = `c = get_config()
c.ExecutePreprocessor.allow_errors = True
c.ExecutePreprocessor.record_timing = False
def _mark_error(cell, cell_index, execute_reply):
    cell.metadata[${JSON.stringify(ERROR_MARK)}] = True
c.ExecutePreprocessor.on_cell_error = _mark_error
`;

function nbconvert(file, outDir, configFile) {
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
    const child = spawn(jupyter, args, { cwd: path.dirname(file), stdio: ["ignore", "pipe", "pipe"] });
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
  let failed = 0;
  const started = Date.now();
  try {
    for (const file of files) {
      const t0 = Date.now();
      const { code, log } = await nbconvert(file, work, configFile);
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
