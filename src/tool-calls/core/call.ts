/** A tool call as every tool-call rule takes it. */

/**
 * A tool call as the guards see it.
 *
 * @example
 * ```ts
 * const call: ToolCallInput = { name: "read_file", args: { path: "a.py" }, id: "call_1" };
 * ```
 */
export interface ToolCallInput {
  /** The tool's name. */
  name: string;
  /** The call's arguments as the model sent them (usually an object). */
  args: unknown;
  /** The tool-call id, when the model gave one. */
  id?: string | undefined;
}
