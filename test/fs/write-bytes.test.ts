/**
 * Issue 35: `apply_source_code_diff` applies hunks to bytes. Whatever lies outside the hunks (Latin-1 text, a
 * binary tail, CRLF line ends) stays byte-for-byte as it was; the lines a hunk adds are written as UTF-8.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempProjects } from "../support/projects.js";
import { directTools } from "./direct.js";

const projects = tempProjects("lgg-bytes-");

/** A fresh project with one file of the given bytes, `f.txt`. */
const project = (bytes: Buffer): string => projects.project({ "f.txt": bytes });

const diffOf = (hunks: string) => `--- a/f.txt\n+++ b/f.txt\n${hunks}`;
const latin1 = (text: string) => Buffer.from(text, "latin1");

describe("a diff changes only its hunks' lines, byte for byte", () => {
  it("Latin-1 text outside the hunk stays byte-for-byte unchanged", async () => {
    const before = latin1("# caf\xe9 cr\xe8me\nx = 1\ny = 2\n# \xa9 2024 \xc5ngstr\xf6m\n");
    const root = project(before);
    const answer = await directTools(root).call("apply_source_code_diff", {
      path: "f.txt",
      diff: diffOf("@@ -2,2 +2,2 @@\n x = 1\n-y = 2\n+y = 3\n"),
    });
    expect(answer.status).toBe("success");
    expect(readFileSync(join(root, "f.txt"))).toEqual(
      latin1("# caf\xe9 cr\xe8me\nx = 1\ny = 3\n# \xa9 2024 \xc5ngstr\xf6m\n"),
    );
  });

  it("a binary tail (invalid UTF-8, NUL bytes) after the text stays byte-for-byte unchanged", async () => {
    const tail = Buffer.from([0x00, 0xff, 0xfe, 0x80, 0x0a, 0xc3, 0x28, 0xed, 0xa0, 0x80, 0x0a, 0xf8, 0x88]);
    const before = Buffer.concat([Buffer.from("first\nsecond\nthird\n"), tail]);
    const root = project(before);
    const answer = await directTools(root).call("apply_source_code_diff", {
      path: "f.txt",
      diff: diffOf("@@ -1,2 +1,2 @@\n first\n-second\n+SECOND\n"),
    });
    expect(answer.status).toBe("success");
    expect(readFileSync(join(root, "f.txt"))).toEqual(Buffer.concat([Buffer.from("first\nSECOND\nthird\n"), tail]));
  });

  it("a hunk whose lines hold invalid bytes, as read_file showed them (U+FFFD), applies; its context is kept as bytes", async () => {
    const before = latin1("name = 'Jos\xe9'\ncity = 'S\xe3o Paulo'\nok = 1\n");
    const root = project(before);
    const tools = directTools(root);
    const shown = await tools.call("read_file", { path: "f.txt" });
    expect(shown.text).toContain("name = 'Jos\uFFFD'");
    const answer = await tools.call("apply_source_code_diff", {
      path: "f.txt",
      diff: diffOf("@@ -1,3 +1,3 @@\n name = 'Jos\uFFFD'\n-city = 'S\uFFFDo Paulo'\n+city = 'Lisboa'\n ok = 1\n"),
    });
    expect(answer.status).toBe("success");
    expect(readFileSync(join(root, "f.txt"))).toEqual(latin1("name = 'Jos\xe9'\ncity = 'Lisboa'\nok = 1\n"));
  });

  it("UTF-8 context matches, and added lines are written as UTF-8", async () => {
    const before = Buffer.from("größe = 1\nnaïve = True\n", "utf8");
    const root = project(before);
    const answer = await directTools(root).call("apply_source_code_diff", {
      path: "f.txt",
      diff: diffOf("@@ -1,2 +1,2 @@\n größe = 1\n-naïve = True\n+naïve = False  # 日本\n"),
    });
    expect(answer.status).toBe("success");
    expect(readFileSync(join(root, "f.txt"), "utf8")).toBe("größe = 1\nnaïve = False  # 日本\n");
  });

  it("a CRLF file keeps its CRLF line ends, and a missing final newline stays missing", async () => {
    const before = Buffer.from("a\r\nb\r\nc\r\nd", "utf8");
    const root = project(before);
    const answer = await directTools(root).call("apply_source_code_diff", {
      path: "f.txt",
      diff: diffOf("@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"),
    });
    expect(answer.status).toBe("success");
    expect(readFileSync(join(root, "f.txt"), "utf8")).toBe("a\r\nB\r\nc\r\nd");
  });

  it("the diff of a long Latin-1 file with a binary tail changes exactly the bytes of its hunk", async () => {
    const body = Array.from({ length: 300 }, (_, i) => `l\xednea ${i} \xbfqu\xe9?\n`).join("");
    const tail = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const before = Buffer.concat([latin1(body), tail]);
    const root = project(before);
    const answer = await directTools(root).call("apply_source_code_diff", {
      path: "f.txt",
      diff: diffOf("@@ -150,1 +150,1 @@\n-l\uFFFDnea 149 \uFFFDqu\uFFFD?\n+linea 149\n"),
    });
    expect(answer.status).toBe("success");
    const expected = Buffer.concat([latin1(body.replace("l\xednea 149 \xbfqu\xe9?\n", "linea 149\n")), tail]);
    expect(readFileSync(join(root, "f.txt")).equals(expected)).toBe(true);
  });
});
