/** What every guard's options share: the logger, the error and the parser that names every bad field. */
import { z } from "zod/v4";

/**
 * Where the guards write log lines: one shape for every guard, `console` itself, or any logger with `info` and
 * `warn` (pino, winston…). The loop detector writes warnings (a detected loop, an error in detection); the file
 * tools write their cache lines (`[TOOL_RUNNER][CACHE_HIT] …`) as info. Either method may be left out.
 *
 * @example
 * ```ts
 * const logger: GuardLogger = { warn: (m) => myLogger.warning(m), info: (m) => myLogger.debug(m) };
 * ```
 */
export interface GuardLogger {
  /** Receives one informational line (the file tools' cache lines). */
  info?(message: string): void;
  /** Receives one warning (a detected loop, an error in loop detection, a run broken off). */
  warn?(message: string): void;
}

/** A {@link GuardLogger}: an object with an `info` or a `warn` method (both may be there). */
export const guardLoggerSchema = z.custom<GuardLogger>((v) => {
  const logger = v as { info?: unknown; warn?: unknown } | null;
  return (
    typeof logger === "object" &&
    logger !== null &&
    (typeof logger.info === "function" || typeof logger.warn === "function")
  );
}, "expected a logger: an object with an info or a warn method");

/**
 * Thrown when guard options are invalid; the message names each bad field.
 *
 * @example
 * ```ts
 * try {
 *   new GuardedToolNode(tools, { windowSize: 0 });
 * } catch (e) {
 *   if (e instanceof GuardOptionsError) console.error(e.message); // names windowSize
 * }
 * ```
 */
export class GuardOptionsError extends Error {
  /** Always `"GuardOptionsError"`. */
  override readonly name = "GuardOptionsError";
}

/**
 * Validates options with a zod schema, filling in defaults; throws a {@link GuardOptionsError} naming every bad field.
 */
export function parseOptions<S extends z.ZodType>(schema: S, options: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(options ?? {});
  if (!parsed.success) {
    const problems = unionBranchIssues(parsed.error.issues).map((i) => {
      const where = i.path.join(".") || "(options)";
      if (i.code !== "unrecognized_keys" || i.path.length > 0) return `${where}: ${i.message}`;
      return `${where}: unrecognized option${i.keys.length > 1 ? "s" : ""}: ${i.keys.join(", ")}`;
    });
    throw new GuardOptionsError(`Invalid ${what} options:\n- ${problems.join("\n- ")}`);
  }
  return parsed.data;
}

/** A union's issue replaced by its one type-matched branch's issues, as zod 4 does (zod 3's `zod/v4` does not). */
function unionBranchIssues(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue[] {
  return issues.flatMap((issue) => {
    if (issue.code !== "invalid_union") return [issue];
    const mismatch = (i: z.core.$ZodIssue) =>
      i.path.length === 0 && (i.code === "invalid_type" || i.code === "invalid_value");
    const matched = issue.errors.filter((branch) => branch.length > 0 && !branch.some(mismatch));
    if (matched.length !== 1 || !matched[0]) return [issue];
    return unionBranchIssues(matched[0].map((i) => ({ ...i, path: [...issue.path, ...i.path] })));
  });
}
