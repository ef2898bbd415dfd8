/** The file tools' texts of the guards' file cache: a read served from the cache, and its event, word for word. */

/** read_file's answer for a file unchanged since a read whose result (tool call `ref`) is still in the conversation. */
export function unchangedReadText(path: string, ref: string, range?: { from: number; to: number }): string {
  const lines = range === undefined ? "" : ` Lines ${range.from}-${range.to} are among them.`;
  return `${path} is unchanged since your earlier read: its full content is in the result of tool call ${ref} above.${lines}`;
}

/** The message of the guard event of a file tool's answer from the cache (`ref`: answered with a reference). */
export function cacheEventText(path: string, ref?: string): string {
  return ref ? `${path}: unchanged, answered with a reference to ${ref}` : `${path}: served from the cache`;
}
