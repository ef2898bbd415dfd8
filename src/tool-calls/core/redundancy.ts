import type { z } from "zod/v4";
import {
  type CallEffect,
  type ClassifyOptions,
  callIdentity,
  isSameOrAncestor,
} from "../../common/identity/classify.js";
import type { SignatureOptions } from "../../common/identity/signature.js";
import { parseOptions } from "../../common/options.js";
import { operationLimitsSchema } from "./options.js";
import { outcomeRecord, type RecordedResult } from "./repetition.js";

/**
 * A successful read-only call whose result the model still has (the redundant rule).
 *
 * @example
 * ```ts
 * const ops: OperationRecord[] = Object.values(state.toolGuard.operations.ops);
 * ```
 */
export interface OperationRecord {
  /** Digest of the call's canonical signature. */
  key: string;
  /** The tool's name. */
  tool: string;
  /** Normalized paths the result depends on (empty: unknown scope, dropped by any write). */
  paths: string[];
  /** The call's result, as recorded. */
  result: RecordedResult;
}

/**
 * A file touched by a call, most recent last (what the "Recent Tool Operations" summary shows).
 *
 * @example
 * ```ts
 * const recent: FileOperation[] = state.toolGuard.operations.files;
 * ```
 */
export interface FileOperation {
  /** The file's normalized path. */
  path: string;
  /** Whether the call read or wrote the file. */
  operation: "read" | "write";
  /** The tool that touched it. */
  tool: string;
}

/**
 * Plain, serialisable state of the redundant rule.
 *
 * @example
 * ```ts
 * const level3: OperationsState = state.toolGuard.operations;
 * ```
 */
export interface OperationsState {
  /** Successful read-only operations by call key, oldest first (insertion order). */
  ops: Record<string, OperationRecord>;
  /** Recent file operations, oldest first. */
  files: FileOperation[];
}

/**
 * Bounds of {@link OperationsState}.
 *
 * @example
 * ```ts
 * const limits: OperationLimits = { operationsHistoryLimit: 20, fileHistoryLimit: 20 };
 * ```
 *
 * @interface
 */
export type OperationLimits = z.output<typeof operationLimitsSchema>;

/** An empty state of the redundant rule. */
export function emptyOperationsState(): OperationsState {
  return { ops: {}, files: [] };
}

function pushFiles(
  files: FileOperation[],
  paths: readonly string[],
  operation: FileOperation["operation"],
  tool: string,
  limit: number,
): FileOperation[] {
  if (paths.length === 0) return files;
  const keep = Math.max(0, limit);
  const from = Math.max(0, files.length + paths.length - keep);
  const next = files.slice(Math.min(from, files.length));
  for (let i = Math.max(0, from - files.length); i < paths.length; i += 1) {
    next.push({ path: paths[i] as string, operation, tool });
  }
  return next;
}

/** Drops the reads a call may have made stale (all of them after a change of unknown scope). */
export function invalidateOperations(state: OperationsState, effect: CallEffect): OperationsState {
  if (effect.kind === "read" || effect.kind === "none") return state;
  if (effect.kind === "mutate") return Object.keys(state.ops).length > 0 ? { ...state, ops: {} } : state;
  const ops: Record<string, OperationRecord> = {};
  let changed = false;
  for (const key of Object.keys(state.ops)) {
    const op = state.ops[key] as OperationRecord;
    if (staleAfter(op.paths, effect.paths)) changed = true;
    else ops[key] = op;
  }
  return changed ? { ...state, ops } : state;
}

/** Stale after a write of `written`: a path written, a folder above one, a file below one, or unknown scope. */
export function staleAfter(paths: readonly string[], written: readonly string[]): boolean {
  return paths.length === 0 || paths.some((p) => written.some((w) => isSameOrAncestor(p, w) || isSameOrAncestor(w, p)));
}

/** Records a call that ran: a successful read becomes a known operation; its paths join the file history. */
export function recordOperationResult(
  state: OperationsState,
  call: { key: string; tool: string },
  effect: CallEffect,
  result: RecordedResult,
  limits: Readonly<OperationLimits>,
): OperationsState {
  let { ops, files } = state;
  if (effect.kind === "read" && result.ok) {
    // A new object with the kept records in order, the call's last: no `delete` (it slows every later read of ops).
    const limit = Math.max(0, limits.operationsHistoryLimit);
    const kept = Object.keys(ops).filter((key) => key !== call.key);
    const next: Record<string, OperationRecord> = {};
    for (const key of kept.slice(Math.max(0, kept.length + 1 - limit))) next[key] = ops[key] as OperationRecord;
    if (limit > 0) next[call.key] = { key: call.key, tool: call.tool, paths: effect.paths, result };
    ops = next;
  }
  if ((effect.kind === "read" || effect.kind === "write") && result.ok) {
    files = pushFiles(files, effect.paths, effect.kind, call.tool, limits.fileHistoryLimit);
  }
  return ops === state.ops && files === state.files ? state : { ops, files };
}

/** The still-valid read with this key, if any. */
export function findOperation(state: OperationsState, key: string): OperationRecord | undefined {
  return Object.hasOwn(state.ops, key) ? state.ops[key] : undefined;
}

/**
 * Options of {@link OperationContext}.
 *
 * @example
 * ```ts
 * const ctx = new OperationContext({ root: "/repo", operationsHistoryLimit: 20 } satisfies OperationContextOptions);
 * ```
 */
export interface OperationContextOptions extends Partial<OperationLimits>, SignatureOptions, ClassifyOptions {}

/**
 * The redundant rule as a class: remembers successful read-only operations and answers whether an identical
 * one was already done and is still valid. Failed calls never count; writes are never redundant; a write to a
 * path makes the reads of that path (and listings of its folders) stale; any other mutating call (a command, an
 * unknown tool) makes every read stale.
 *
 * @example
 * ```ts
 * const ctx = new OperationContext({ root: "/repo" });
 * ctx.recordOperation("read_file", { path: "models.py" }, { success: true, result: "class User: ..." });
 * ctx.hasRecentOperation("read_file", { path: "/repo/models.py" }); // true
 * ctx.recordOperation("write_to_file", { path: "models.py", content: "" }, { success: true });
 * ctx.hasRecentOperation("read_file", { path: "models.py" }); // false
 * ```
 */
export class OperationContext {
  /** The bounds of the operation history, with the defaults filled in. */
  readonly limits: Readonly<OperationLimits>;
  private readonly options: OperationContextOptions;
  private state: OperationsState;

  constructor(options: OperationContextOptions = {}, state: OperationsState = emptyOperationsState()) {
    const { operationsHistoryLimit, fileHistoryLimit } = options;
    this.limits = parseOptions(operationLimitsSchema, { operationsHistoryLimit, fileHistoryLimit }, "OperationContext");
    this.options = options;
    this.state = state;
  }

  private identify(toolName: string, input: unknown): { key: string; effect: CallEffect } {
    return callIdentity(toolName, input, this.options);
  }

  /**
   * Records a call that ran. Only successful read-only calls become known operations; mutating calls make the
   * reads they may affect stale.
   *
   * @example
   * ```ts
   * ctx.recordOperation("list_files", { path: "." }, { success: true, result: "a.py\nb.py" });
   * ```
   */
  recordOperation(toolName: string, input: unknown, outcome: { success: boolean; result?: string }): void {
    const { key, effect } = this.identify(toolName, input);
    const result = outcomeRecord(outcome.success, outcome.result ?? "");
    this.state = recordOperationResult(
      invalidateOperations(this.state, effect),
      { key, tool: toolName },
      effect,
      result,
      this.limits,
    );
  }

  /**
   * Whether an identical read-only call already succeeded and is still valid (the redundant rule would block it).
   *
   * @example
   * ```ts
   * ctx.hasRecentOperation("read_file", { path: "models.py" });
   * ```
   */
  hasRecentOperation(toolName: string, input: unknown): boolean {
    const { key, effect } = this.identify(toolName, input);
    return effect.kind === "read" && findOperation(this.state, key) !== undefined;
  }

  /**
   * The result of the recorded operation identical to this call, if any.
   *
   * @example
   * ```ts
   * ctx.previousResult("read_file", { path: "models.py" }); // "class User: ..."
   * ```
   */
  previousResult(toolName: string, input: unknown): string | undefined {
    return findOperation(this.state, this.identify(toolName, input).key)?.result.preview;
  }

  /**
   * Recent file operations, oldest first.
   *
   * @example
   * ```ts
   * ctx.fileHistory(); // [{ path: "/repo/models.py", operation: "read", tool: "read_file" }]
   * ```
   */
  fileHistory(): readonly FileOperation[] {
    return this.state.files;
  }

  /**
   * Forgets everything.
   *
   * @example
   * ```ts
   * ctx.reset();
   * ```
   */
  reset(): void {
    this.state = emptyOperationsState();
  }

  /**
   * The context as plain JSON (what a checkpoint stores).
   *
   * @example
   * ```ts
   * const copy = OperationContext.fromJSON(ctx.toJSON());
   * ```
   */
  toJSON(): {
    /** The options the context was built with. */
    options: OperationContextOptions;
    /** The redundant rule's state. */
    state: OperationsState;
  } {
    return { options: { ...this.options }, state: structuredClone(this.state) };
  }

  /**
   * Rebuilds a context from {@link OperationContext.toJSON} output.
   *
   * @example
   * ```ts
   * const copy = OperationContext.fromJSON(JSON.parse(JSON.stringify(ctx)));
   * ```
   */
  static fromJSON(json: { options?: OperationContextOptions; state: OperationsState }): OperationContext {
    return new OperationContext(json.options ?? {}, structuredClone(json.state));
  }
}
