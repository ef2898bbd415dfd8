/**
 * The layers check (scripts/layers.mjs, run by `npm run check:limits`): planted trees in a temporary folder, one per
 * rule, each asserting the rule fires and names the right files; then src/ itself against the target layout.
 */

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkLayers, fileImports, LAYERS, type LayersConfig } from "../../scripts/layers.mjs";

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

/** A temporary root holding `files` (path relative to the root -> text). */
function plant(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "layers-"));
  roots.push(root);
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), text);
  }
  return root;
}

const NONE: LayersConfig = { dir: "src", guards: [], pure: [], impure: LAYERS.impure };

/** The violations of a planted tree, as `[rule, files]` pairs. */
const rulesAndFiles = (files: Record<string, string>, config: LayersConfig = NONE) =>
  checkLayers(plant(files), config).map((v) => [v.rule, v.files]);

describe("layers check", () => {
  it("reads value, type-only and dynamic imports, and re-exports", () => {
    const text = [
      'import type { A } from "./a.js";',
      'import { type B, type C } from "./b.js";',
      'import { type D, d } from "./d.js";',
      'import "./side.js";',
      'export type { E } from "./e.js";',
      'export * from "./f.js";',
      'type G = import("./g.js").G;',
      'const h = await import("./h.js");',
    ].join("\n");
    expect(fileImports("x.ts", text).map((i) => `${i.spec} ${i.typeOnly} ${i.line}`)).toEqual([
      "./a.js true 1",
      "./b.js true 2",
      "./d.js false 3",
      "./side.js false 4",
      "./e.js true 5",
      "./f.js false 6",
      "./g.js true 7",
      "./h.js false 8",
    ]);
  });

  it("finds a folder cycle, naming the cycle and one file import per edge", () => {
    const root = plant({
      "src/a/x.ts": 'import { y } from "../b/y.js";\nexport const x = y;\n',
      "src/b/y.ts": 'import { z } from "../a/z.js";\nexport const y = z;\n',
      "src/a/z.ts": "export const z = 1;\n",
    });
    expect(checkLayers(root, NONE)).toEqual([
      {
        rule: "folder-cycle",
        message:
          "folder cycle src/a -> src/b -> src/a; src/a/x.ts:1 imports src/b/y.ts; src/b/y.ts:1 imports src/a/z.ts",
        files: ["src/a/x.ts", "src/b/y.ts", "src/a/z.ts"],
      },
    ]);
  });

  it("finds a cycle between a folder and its child folder, through a dynamic import", () => {
    const violations = checkLayers(
      plant({
        "src/x/a.ts": 'export const a = () => import("./core/b.js");\n',
        "src/x/core/b.ts": 'import { c } from "../c.js";\nexport const b = c;\n',
        "src/x/c.ts": "export const c = 1;\n",
      }),
      NONE,
    );
    expect(violations.map((v) => [v.rule, v.files])).toEqual([
      ["folder-cycle", ["src/x/a.ts", "src/x/core/b.ts", "src/x/c.ts"]],
    ]);
    expect(violations[0]?.message).toContain("src/x -> src/x/core -> src/x;");
  });

  it("finds a value file cycle, once, with its whole path; a mixed type and value import is a value import", () => {
    const violations = checkLayers(
      plant({
        "src/a.ts": 'import { b } from "./b.js";\nexport const a = () => b;\n',
        "src/b.ts": 'import { type C, c } from "./c.js";\nexport const b: C = c;\n',
        "src/c.ts": 'import { a } from "./a.js";\nexport type C = number;\nexport const c = a.length;\n',
        "src/d.ts": 'import { a } from "./a.js";\nexport const d = a;\n',
      }),
      NONE,
    );
    expect(violations).toEqual([
      {
        rule: "file-cycle",
        message: "file cycle src/a.ts:1 -> src/b.ts:1 -> src/c.ts:1 -> src/a.ts",
        files: ["src/a.ts", "src/b.ts", "src/c.ts"],
      },
    ]);
  });

  it("finds a file cycle of type-only imports: two files that can only be read together", () => {
    expect(
      rulesAndFiles({
        "src/a.ts": 'import type { B } from "./b.js";\nexport interface A { b: B }\n',
        "src/b.ts": 'import { type A } from "./a.js";\nexport type { A };\nexport interface B { a: A }\n',
        "src/c.ts": 'export type { A } from "./a.js";\nimport { type B } from "./b.js";\nexport type C = B;\n',
      }),
    ).toEqual([["file-cycle", ["src/a.ts", "src/b.ts"]]]);
  });

  it("finds a folder cycle whose back edge is type-only, through an import type too", () => {
    const violations = checkLayers(
      plant({
        "src/a/x.ts": 'import { y } from "../b/y.js";\nexport const x = y;\n',
        "src/b/y.ts": "export const y: number = 1;\n",
        "src/b/w.ts": 'export type W = import("../a/z.js").Z;\n',
        "src/a/z.ts": "export type Z = number;\n",
      }),
      NONE,
    );
    expect(violations.map((v) => v.message)).toEqual([
      "folder cycle src/a -> src/b -> src/a; src/a/x.ts:1 imports src/b/y.ts; src/b/w.ts:1 imports src/a/z.ts",
    ]);
  });

  it("finds the floor importing above it, a type-only import too; the floor importing itself passes", () => {
    const config = { ...NONE, floor: "src/common/" };
    const violations = checkLayers(
      plant({
        "src/common/words.ts": 'import type { Reason } from "../loop/reason.js";\nexport type Words = Reason;\n',
        "src/common/texts/say.ts":
          'import { limit } from "../../loop/limit.js";\nimport type { Words } from "../words.js";\n' +
          "export const say = (w: Words) => w + limit;\n",
        "src/loop/reason.ts": "export type Reason = string;\n",
        "src/loop/limit.ts": "export const limit = 3;\n",
        "src/loop/guard.ts": 'import { say } from "../common/texts/say.js";\nexport const guard = say;\n',
      }),
      config,
    );
    expect(violations.filter((v) => v.rule === "floor").map((v) => v.message)).toEqual([
      "floor src/common/ imports above it: src/common/texts/say.ts:1 imports src/loop/limit.ts",
      "floor src/common/ imports above it: src/common/words.ts:1 imports src/loop/reason.ts (type-only)",
    ]);
    // The same imports make a folder cycle (common/texts -> loop -> common/texts) that the cycle rules report too.
    expect(violations.some((v) => v.rule === "folder-cycle")).toBe(true);
    expect(rulesAndFiles({ "src/loop/x.ts": "export {};\n" }, config)).toEqual([["stale-config", []]]);
  });

  it("finds a pure core importing @langchain/core or langchain, directly or through a type-only chain", () => {
    const config = { ...NONE, pure: ["src/core/"] };
    const violations = checkLayers(
      plant({
        "src/core/direct.ts": 'import { z } from "zod/v4";\nimport { AIMessage } from "@langchain/core/messages";\n',
        "src/core/agent.ts": 'import { createMiddleware } from "langchain";\nexport const m = createMiddleware;\n',
        "src/core/clean.ts": 'import { z } from "zod/v4";\nimport { helper } from "../common/helper.js";\n',
        "src/core/deep.ts": 'import type { T } from "../adapters/t.js";\nexport type D = T;\n',
        "src/adapters/t.ts": 'import { helper } from "../common/helper.js";\nexport type { T } from "./u.js";\n',
        "src/adapters/u.ts":
          'import type { BaseMessage } from "@langchain/core/messages";\nexport type T = BaseMessage;\n',
        "src/common/helper.ts": 'import { createHash } from "node:crypto";\nexport const helper = createHash;\n',
      }),
      config,
    );
    expect(violations).toEqual([
      {
        rule: "pure-core",
        message: "pure src/core/agent.ts reaches src/core/agent.ts:1 -> langchain",
        files: ["src/core/agent.ts"],
      },
      {
        rule: "pure-core",
        message:
          "pure src/core/deep.ts reaches src/core/deep.ts:1 -> src/adapters/t.ts:2 -> src/adapters/u.ts:1 -> @langchain/core/messages",
        files: ["src/core/deep.ts", "src/adapters/t.ts", "src/adapters/u.ts"],
      },
      {
        rule: "pure-core",
        message: "pure src/core/direct.ts reaches src/core/direct.ts:2 -> @langchain/core/messages",
        files: ["src/core/direct.ts"],
      },
    ]);
  });

  it("finds a guard importing another guard, a type-only import too; a shared folder is free to both", () => {
    const config = { ...NONE, guards: ["src/loop", "src/fs"] };
    const violations = checkLayers(
      plant({
        "src/loop/a.ts":
          'import { b } from "../fs/b.js";\nimport { s } from "../common/s.js";\nexport const a = b + s;\n',
        "src/fs/b.ts": 'import { s } from "../common/s.js";\nexport const b = s;\n',
        "src/fs/c.ts": 'import type { L } from "../loop/core/l.js";\nexport type C = L;\n',
        "src/loop/core/l.ts": "export type L = number;\n",
        "src/common/s.ts": "export const s = 1;\n",
        "src/fsx/d.ts": 'import { a } from "../loop/a.js";\nexport const d = a;\n',
      }),
      config,
    );
    expect(violations).toEqual([
      {
        rule: "guard-import",
        message: "guard src/fs imports guard src/loop: src/fs/c.ts:1 imports src/loop/core/l.ts (type-only)",
        files: ["src/fs/c.ts", "src/loop/core/l.ts"],
      },
      {
        rule: "guard-import",
        message: "guard src/loop imports guard src/fs: src/loop/a.ts:1 imports src/fs/b.ts",
        files: ["src/loop/a.ts", "src/fs/b.ts"],
      },
    ]);
  });

  it("passes a clean tree, and names a guard or pure core of the config that holds no file", () => {
    const config = { ...NONE, guards: ["src/loop", "src/fs"], pure: ["src/loop/core/", "src/common/identity/"] };
    const files = {
      "src/index.ts": 'export * from "./loop/index.js";\nexport { f } from "./fs";\n',
      "src/loop/index.ts": 'export { loop } from "./loop.js";\nexport type { Step } from "./core/index.js";\n',
      "src/loop/loop.ts":
        'import type { BaseMessage } from "@langchain/core/messages";\nimport { step } from "./core/index.js";\n' +
        "export const loop = (m: BaseMessage) => step(m);\n",
      "src/loop/core/index.ts":
        'import { id } from "../../common/identity/id.js";\nexport type Step = number;\n' +
        "export const step = (x: unknown) => id(x);\n",
      "src/common/identity/id.ts": 'import "./side.js";\nexport const id = (x: unknown) => String(x);\n',
      "src/common/identity/side.ts": "export {};\n",
      "src/fs/index.ts": 'import { id } from "../common/identity/id.js";\nexport const f = id;\n',
    };
    expect(rulesAndFiles(files, config)).toEqual([]);
    expect(rulesAndFiles(files, { ...config, guards: ["src/loop", "src/repeat-query"] })).toEqual([
      ["stale-config", []],
    ]);
  });

  // The real src/ (src/{common,tool-calls,loop,repeat-query,fs,...}) against LAYERS.
  it("src/ keeps the layers of LAYERS", () => {
    expect(checkLayers(join(import.meta.dirname, "..", ".."), LAYERS)).toEqual([]);
  });
});
