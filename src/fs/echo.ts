/** How the file tools echo a value they were given (a path, a command) in an error or a summary: capped. */
import { cutEnd } from "../common/texts/format.js";

/** Characters of one echoed value kept in a message (a message stays short whatever the input). */
export const MAX_ECHO_CHARS = 300;

/** `value` as a message may show it: cut to {@link MAX_ECHO_CHARS} characters with an ellipsis and its length. */
export function echo(value: unknown, max = MAX_ECHO_CHARS): string {
  const text = typeof value === "string" ? value : String(value);
  return text.length <= max ? text : `${text.slice(0, cutEnd(text, max))}… [${text.length} characters]`;
}
