/** The repeat-query guard's text: the hint after a repeated retrieval query, word for word. */

import { normalizeQuery } from "./core/query.js";

/**
 * What a hint builder knows.
 *
 * @example
 * ```ts
 * const hint = ({ query, asked }: RepeatHintInfo) => `Already searched "${query}" (${asked.length} queries so far).`;
 * ```
 */
export interface RepeatHintInfo {
  /** The query as read (after the parser). */
  query: string;
  /** The normalized queries already run. */
  asked: readonly string[];
}

/**
 * The default hint written to `repeatQueryHint` after a repeat.
 *
 * @example
 * ```ts
 * defaultRepeatHint({ query: "Foo", asked: ["foo"] });
 * ```
 */
export function defaultRepeatHint({ query, asked }: RepeatHintInfo): string {
  const list = asked.length ? asked.map((q) => `"${q}"`).join(", ") : "none";
  const what = normalizeQuery(query) === "" ? "The retrieval query was empty." : `"${query}" was already searched.`;
  return `${what} Queries already run: ${list}. Ask a different query, or answer with the evidence you have.`;
}
