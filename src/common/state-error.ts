// A guard channel value the guards cannot read: the error, and the reader that checks each stored value once.
import type { z } from "zod/v4";

/**
 * The guard channels whose values are checked when read.
 *
 * @example
 * ```ts
 * const channel: GuardChannel = "toolGuard";
 * ```
 */
export type GuardChannel = "toolGuard" | "guardLog" | "loopGuard" | "safetyLimits" | "fileCache";

/**
 * A guard channel holds a value the guards cannot read (a damaged checkpoint, a hand-edited state, a value of another
 * program), or a node wrote an update its reducer does not accept. The message names the channel, says what is
 * wrong, and how to reset it: `await graph.updateState(config, { <channel>: null })` (every guard channel's reducer
 * takes `null` as "start afresh"; the thread's guard memory of that channel is forgotten).
 *
 * @example
 * ```ts
 * try {
 *   await agent.invoke(input, config);
 * } catch (e) {
 *   if (e instanceof GuardStateError) await agent.updateState(config, { [e.channel]: null });
 * }
 * ```
 */
export class GuardStateError extends Error {
  /** Always `"GuardStateError"`. */
  override readonly name = "GuardStateError";
  constructor(
    /** The channel. */
    readonly channel: GuardChannel,
    /** What is wrong, e.g. `stats.allowed: expected number, received string`. */
    readonly problem: string,
    /** Whether the value is an update a node wrote (else the channel's stored value). */
    readonly update = false,
  ) {
    super(
      update
        ? `The '${channel}' channel's reducer does not accept this update: ${problem}. Write the events or the whole ` +
            `value the channel documents, or null to reset it.`
        : `The '${channel}' channel holds a value the guards cannot read: ${problem}. Reset it with ` +
            `\`await graph.updateState(config, { ${channel}: null })\` (the guards forget what this channel ` +
            `remembered of the thread), or restore an earlier checkpoint.`,
    );
  }
}

/** `where: what` of zod's first issue (`n: Invalid input: expected number, received string`). */
function zodProblem(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return "not readable";
  const path = issue.path.length === 0 ? "the value" : issue.path.map(String).join(".");
  return `${path}: ${issue.message}`;
}

/** What a value is, for an error message: `null`, `an array`, or its `typeof`. */
export function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/**
 * The stored values of one channel, each checked once: the first read of an object parses it with `schema` and keeps
 * what `make` returns; later reads cost a lookup. Anything else is refused with a {@link GuardStateError}.
 */
export class StoredValues<T extends object, S extends z.ZodType = z.ZodType> {
  readonly #checked = new WeakMap<object, T>();

  constructor(
    private readonly channel: GuardChannel,
    /** What the channel holds, for the message about a value that is no object. */
    private readonly what: string,
    private readonly schema: S,
    /** What a checked value is read as (default: the value itself). */
    private readonly make: (parsed: z.output<S>, value: object) => T = (_, value) => value as T,
  ) {}

  /** The value as the guards read it (`channel`: another name of it; `update`: it is an update a node wrote). */
  read(value: unknown, update = false, channel = this.channel): T {
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      throw new GuardStateError(channel, `expected ${this.what} (an object), received ${kindOf(value)}`, update);
    }
    const known = this.#checked.get(value);
    if (known !== undefined) return known;
    const parsed = this.schema.safeParse(value);
    if (!parsed.success) throw new GuardStateError(channel, zodProblem(parsed.error), update);
    const made = this.trust(this.make(parsed.data, value));
    this.#checked.set(value, made);
    return made;
  }

  /** Marks a value the reducer made as checked: its next read costs a lookup. */
  trust<V extends T>(value: V): V {
    this.#checked.set(value, value);
    return value;
  }
}
