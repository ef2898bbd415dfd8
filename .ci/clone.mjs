// A fresh clone of this repository, as a user gets it (`git clone`: no node_modules, no dist/), for the checks that
// must start where a user starts (.ci/check-install.mjs, .ci/lowest-peers.mjs). In CI the work tree is a clean
// clone, so the copy is exactly HEAD. On a developer's machine, uncommitted changes (tracked files, and new files git
// does not ignore) are copied over the clone and committed there, so that the check sees the work in progress; the
// caller is told how many.
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";

function git(args, cwd) {
  const r = spawnSync("git", args, { cwd, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`git ${args.join(" ")} (in ${cwd}) failed: ${r.stderr || r.error}`);
  return r.stdout;
}

/** Clones `repo` (its HEAD) into `dest` and lays the work tree's uncommitted changes over it. */
export function freshClone(repo, dest) {
  git(["clone", "--quiet", "--no-hardlinks", repo, dest], dirname(dest));
  const commit = git(["rev-parse", "--short", "HEAD"], dest).trim();
  // -z: NUL-separated, paths verbatim. Entries are "XY path" (a rename adds its source as a second entry).
  const status = git(["status", "--porcelain=v1", "-z", "--untracked-files=all"], repo).split("\0");
  let changed = 0;
  for (let i = 0; i < status.length; i++) {
    const entry = status[i];
    if (!entry) continue;
    const [xy, file] = [entry.slice(0, 2), entry.slice(3)];
    // A rename or a copy is followed by its source: gone from the work tree after a rename.
    if (xy.includes("R") || xy.includes("C")) {
      const source = status[++i];
      if (source && !existsSync(join(repo, source))) rmSync(join(dest, source), { force: true });
    }
    const from = join(repo, file);
    const to = join(dest, file);
    if (existsSync(from)) {
      mkdirSync(dirname(to), { recursive: true });
      copyFileSync(from, to);
    } else {
      rmSync(to, { force: true });
    }
    changed++;
  }
  if (changed > 0) {
    git(["add", "--all"], dest);
    git(
      ["-c", "user.name=check", "-c", "user.email=check@localhost", "commit", "--quiet", "-m", "work in progress"],
      dest,
    );
  }
  return { commit, changed };
}
