/**
 * Which files a shell line replaces whole (`commandPaths(...).rewritten`), as the file-edits rule counts them
 * apart from edits in place: `>` redirections, `cp`'s destination, `tee` without `-a`; not `sed -i`, `>>`, `tee -a`,
 * `mv`, `rm`, `touch`.
 */
import { describe, expect, it } from "vitest";
import { commandPaths } from "../../src/common/identity/shell/index.js";
import { classifyCall } from "../../src/core/index.js";

const rewritten = (command: string) => commandPaths(command, "/repo").rewritten;

describe("whole-file rewrites in a shell line", () => {
  it("counts truncating redirections, cp's destination and tee without -a", () => {
    expect(rewritten("cat > a.py <<'EOF'\nx = 1\nEOF")).toEqual(["/repo/a.py"]);
    expect(rewritten("echo x >| a.py; echo y &> b.log")).toEqual(["/repo/a.py", "/repo/b.log"]);
    expect(rewritten("cp a.py.bak a.py")).toEqual(["/repo/a.py"]);
    expect(rewritten("cd src && cp ../x.py y.py")).toEqual(["/repo/src/y.py"]);
    expect(rewritten("python gen.py | tee out.txt")).toEqual([]); // python may change anything: no paths at all
    expect(rewritten("cat a.txt | tee out.txt")).toEqual(["/repo/out.txt"]);
  });

  it("does not count edits in place, appends, moves, removals", () => {
    for (const command of [
      "sed -i 's/a/b/' a.py",
      "echo x >> a.py",
      "cat a.txt | tee -a out.txt",
      "cat a.txt | tee --append out.txt",
      "mv a.py b.py",
      "rm -f a.py",
      "touch a.py",
      "echo x 2>/dev/null",
    ]) {
      expect(rewritten(command), command).toEqual([]);
    }
  });

  it("is part of the call's effect, for shells and for write tools given the whole content", () => {
    expect(classifyCall("bash", { command: "echo x > a.py && sed -i 's/a/b/' b.py" }, { root: "/repo" })).toEqual({
      kind: "write",
      paths: ["/repo/a.py", "/repo/b.py"],
      rewrites: ["/repo/a.py"],
    });
    expect(classifyCall("write_file", { path: "a.py", content: "x" }, { root: "/repo" })).toEqual({
      kind: "write",
      paths: ["/repo/a.py"],
      rewrites: ["/repo/a.py"],
    });
    // A diff, an edit with a content argument, an append: edits.
    for (const [name, args] of [
      ["apply_source_code_diff", { path: "a.py", diff: "@@ -1 +1 @@\n-a\n+b\n" }],
      ["edit_file", { path: "a.py", content: "x" }],
      ["append_to_file", { path: "a.py", content: "x" }],
    ] as const) {
      expect(classifyCall(name, args, { root: "/repo" }), name).toEqual({ kind: "write", paths: ["/repo/a.py"] });
    }
  });
});
