/**
 * What the guards understand of a shell command line: which lines only read ({@link isReadOnlyCommand}), which
 * paths a line may change ({@link changedPaths}) and which paths a read-only line may read ({@link readPaths}). All
 * read one analysis of the line, so they always agree. The commands, the forms in which they write and what they
 * read are data ({@link SHELL_COMMANDS}, {@link SHELL_READS}); anything not understood (an unknown program, a
 * subshell, a command substitution, an argument whose value is only known when the shell runs and that could be a
 * writing option) may change anything. {@link squeezeCommand} takes out the spacing that changes nothing, for a
 * call's identity. No LangGraph import.
 */
export { changedPaths, commandPaths, isReadOnlyCommand, readPaths } from "./line.js";
export { squeezeCommand } from "./spacing.js";
export { type CommandRow, REDIRECTIONS, SHELL_COMMANDS, SHELL_READS, type WriteForm } from "./tables.js";
