// Types of scripts/code-limits.mjs, for test/package/code-limits.test.ts.

/** The most lines a file in src/ may have. */
export declare const MAX_FILE_LINES: number;
/** The most lines of code a function may have. */
export declare const MAX_FUNCTION_LINES: number;

/** The adapters and the most lines of code each may have. */
export declare const ADAPTER_LIMITS: Readonly<Record<string, number>>;

/** A file, function or adapter over its limit. */
export interface Offender {
  kind: "file" | "function" | "adapter";
  /** Relative to the root, `/`-separated (`src/loop/core/loop.ts`). */
  path: string;
  /** 1-based: a function's first line (after its doc comment); 1 for a file. */
  line: number;
  /** A function's name (`name`, `Class.method`, `(anonymous)`); `""` for a file. */
  name: string;
  /** Lines (a file) or lines of code (a function). */
  size: number;
  limit: number;
}

/** The functions of one file's text, with their lines of code. */
export declare function functionSizes(fileName: string, text: string): { name: string; line: number; loc: number }[];

/** A whole file's lines of code (lines that hold a token). */
export declare function fileLinesOfCode(fileName: string, text: string): number;

/** The offenders below `root`/src (default: this repository). */
export declare function codeLimits(options?: {
  root?: string;
  maxFileLines?: number;
  maxFunctionLines?: number;
}): Offender[];
