// npm run release (the publish step of .github/workflows/release.yml): publishes the version in package.json with
// `changeset publish`, which runs `npm publish` (with provenance when NPM_CONFIG_PROVENANCE=true, as the workflow
// sets it), skips a version the registry already has, and tags the commit v<version>. Publishes nothing while
// CHANGELOG.md marks that version "(unreleased)"; fails when CHANGELOG.md has no section for it.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";

const root = new URL("..", import.meta.url);
const { version } = JSON.parse(readFileSync(new URL("package.json", root), "utf8"));
const changelog = readFileSync(new URL("CHANGELOG.md", root), "utf8");
const heading = changelog.split("\n").find((line) => new RegExp(`^## ${version.replaceAll(".", "\\.")}\\b`).test(line));
if (!heading) {
  console.error(`release: CHANGELOG.md has no "## ${version}" section: nothing published`);
  process.exit(1);
}
if (/unreleased/i.test(heading)) {
  console.log(`release: CHANGELOG.md marks ${version} "(unreleased)": nothing published`);
  process.exit(0);
}
const r = spawnSync("npx", ["--no-install", "changeset", "publish"], { cwd: root, stdio: "inherit" });
process.exit(r.status ?? 1);
