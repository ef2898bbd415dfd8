// Types of scripts/layers.mjs, for test/package/layers.test.ts.

/** The layout the layers check holds src/ to. */
export interface LayersConfig {
  /** The folder checked, relative to the root (`"src"`). */
  dir?: string;
  /** The guard folders (`src/loop`): a file under one may import no file under another. */
  guards: readonly string[];
  /** Path prefixes of the pure cores (`src/loop/core/`): they may not reach an `impure` package. */
  pure: readonly string[];
  /** The packages a pure core may not reach: `@scope/*` (every package of the scope) or an exact name. */
  impure: readonly string[];
  /** The floor (`src/common/`): a file under it may import no file outside it, type-only imports included. */
  floor?: string;
}

/** The target layout: the guard folders, the pure cores, `@langchain/*`, the floor. */
export declare const LAYERS: LayersConfig;

/** A broken layers rule. */
export interface LayersViolation {
  rule: "folder-cycle" | "file-cycle" | "pure-core" | "guard-import" | "floor" | "stale-config";
  /** Names the files (and for a cycle, the whole cycle). */
  message: string;
  /** The files involved, relative to the root, `/`-separated. */
  files: string[];
}

/** The imports of one file's text: specifier, whether type-only, and 1-based line. */
export declare function fileImports(
  fileName: string,
  text: string,
): { spec: string; typeOnly: boolean; line: number }[];

/** The violations of the layers rules below `root`/`config.dir`. */
export declare function checkLayers(root: string, config?: LayersConfig): LayersViolation[];
