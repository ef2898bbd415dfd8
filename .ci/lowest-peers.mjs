// The lowest version of every peer dependency, as a user may have them: in a fresh clone (.ci/clone.mjs) with a copy
// of this checkout's node_modules, each peer is installed at the lowest version its range in package.json
// "peerDependencies" allows (exact, also as the dev dependency; `overrides` make every package that uses
// @langchain/core or @langchain/langgraph use that one copy), then the suite's core and adapter tests run against
// them: test/core, test/graph, test/middleware, test/run-end, test/scenarios (as langchainjs's dependency range tests do).
// A range with two majors (zod: `^3.25.76 || ^4.2.0`) takes its lowest overall in the first pass, and the lowest of
// the other major in a second pass (the other peers at their lowest again). The tests' own `import ... from "zod"`
// read "zod/v4" (.ci/vitest.lowest.config.ts), as a zod 3 user of our zod API writes it.
//
// Usage: node .ci/lowest-peers.mjs [vitest arguments]   (after `npm ci`; called from .ci/run). Keeps the temporary
// clone, and prints its path, when a step fails.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freshClone } from "./clone.mjs";

const repo = new URL("..", import.meta.url).pathname;
const started = Date.now();
const TEST_DIRS = ["test/core", "test/graph", "test/middleware", "test/run-end", "test/scenarios"];
/** Peers of which a user's tree must hold exactly one copy (their classes and channels are shared). */
const SINGLE_COPY = ["@langchain/core", "@langchain/langgraph"];

const tmp = mkdtempSync(join(tmpdir(), "langgraph-guards-lowest-"));
const clone = join(tmp, "clone");

function fail(step, detail) {
  console.error(`FAIL ${step}`);
  if (detail) console.error(String(detail).trimEnd());
  console.error(`lowest-peers: FAILED after ${seconds()}s; kept the temporary clone: ${clone}`);
  process.exit(1);
}

const seconds = () => ((Date.now() - started) / 1000).toFixed(1);

/** The lowest version a range allows in each major it spans, least first: the least `X.Y.Z` of each major over its
 * `||` alternatives of the forms ^X.Y.Z, ~X.Y.Z, X.Y.Z, >=X.Y.Z, ^X.Y, ^X (the forms package.json uses; anything
 * else is an error, not a guess). */
export function lowestPerMajor(range) {
  const versions = range.split("||").map((alternative) => {
    const m = /^\s*(?:\^|~|>=)?\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?\s*$/.exec(alternative);
    if (!m) throw new Error(`lowest-peers: cannot read the range "${range}"`);
    return [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)];
  });
  versions.sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]);
  return versions.filter((v, i) => i === 0 || v[0] !== versions[i - 1][0]).map((v) => v.join("."));
}

function run(cmd, args, timeout) {
  const t0 = Date.now();
  const r = spawnSync(cmd, args, { cwd: clone, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout });
  return { ...r, seconds: ((Date.now() - t0) / 1000).toFixed(1) };
}

/** Every copy of `name` in a node_modules tree (nested ones included), with its version. */
function copiesOf(name, dir = join(clone, "node_modules"), found = []) {
  const own = join(dir, name, "package.json");
  if (existsSync(own)) found.push(`${dir.slice(clone.length + 1)}/${name}@${JSON.parse(readFileSync(own)).version}`);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name === ".bin") continue;
    const scoped = entry.name.startsWith("@");
    for (const pkgDir of scoped ? readdirSync(join(dir, entry.name)).map((n) => join(entry.name, n)) : [entry.name]) {
      const nested = join(dir, pkgDir, "node_modules");
      if (existsSync(nested)) copiesOf(name, nested, found);
    }
  }
  return found;
}

if (!existsSync(join(repo, "node_modules"))) fail("no node_modules in the checkout: run `npm ci` first");
const cloned = freshClone(repo, clone);
cpSync(join(repo, "node_modules"), join(clone, "node_modules"), { recursive: true, verbatimSymlinks: true });
console.log(
  `ok   clone of ${cloned.commit}${cloned.changed ? ` (+${cloned.changed} uncommitted files)` : ""} with a copy ` +
    `of node_modules (${seconds()}s)`,
);

const pkgPath = join(clone, "package.json");
const original = readFileSync(pkgPath, "utf8");
const perMajor = Object.fromEntries(
  Object.entries(JSON.parse(original).peerDependencies).map(([n, r]) => [n, lowestPerMajor(r)]),
);
const lowest = Object.fromEntries(Object.entries(perMajor).map(([n, versions]) => [n, versions[0]]));
/** Every peer at its lowest; then, for a peer whose range spans more majors, one more pass per major. */
const passes = [
  lowest,
  ...Object.entries(perMajor).flatMap(([name, versions]) => versions.slice(1).map((v) => ({ ...lowest, [name]: v }))),
];

const vitest = join(clone, "node_modules", "vitest", "vitest.mjs");
const config = join(".ci", "vitest.lowest.config.ts");
for (const [i, versions] of passes.entries()) {
  const label = `pass ${i + 1} of ${passes.length}`;
  const pkg = JSON.parse(original);
  for (const [name, version] of Object.entries(versions)) {
    pkg.devDependencies[name] = version;
    if (SINGLE_COPY.includes(name)) pkg.overrides = { ...pkg.overrides, [name]: `$${name}` };
  }
  writeFileSync(pkgPath, `${JSON.stringify(pkg, null, 2)}\n`);
  // --ignore-scripts: no build (the tests import src/), and better-sqlite3 stays as built in the copy.
  const r = run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--ignore-scripts"], 900_000);
  if (r.status !== 0) fail(`${label}: npm install of the lowest peers`, `${r.stdout}\n${r.stderr}`);
  const wrong = [];
  for (const [name, version] of Object.entries(versions)) {
    const copies = copiesOf(name);
    const top = copies.find((c) => c === `node_modules/${name}@${version}`);
    const extra = SINGLE_COPY.includes(name) ? copies.filter((c) => c !== top) : [];
    if (!top || extra.length) wrong.push(`${name}: wanted ${version} once; found ${copies.join(", ") || "none"}`);
  }
  if (wrong.length) fail(`${label}: the lowest peers are not what the tree holds`, wrong.join("\n"));
  const names = Object.entries(versions).map(([n, v]) => `${n}@${v}`);
  console.log(`ok   ${label}: npm install ${names.join(", ")} (${r.seconds}s)`);
  const t = spawnSync(process.execPath, [vitest, "run", "--config", config, ...TEST_DIRS, ...process.argv.slice(2)], {
    cwd: clone,
    stdio: "inherit",
    timeout: 1_800_000,
  });
  if (t.status !== 0)
    fail(`${label}: vitest ${TEST_DIRS.join(" ")} against the lowest peers (exit ${t.status ?? t.signal})`);
}
console.log(`lowest-peers: all steps passed in ${seconds()}s`);
rmSync(tmp, { recursive: true, force: true });
