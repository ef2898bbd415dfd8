// What the guards understand of a shell command line (anything else may change anything); the data: tables.ts.
export { changedPaths, commandPaths, isReadOnlyCommand } from "./line.js";
export { squeezeCommand } from "./spacing.js";
export { type CommandRow, REDIRECTIONS, SHELL_COMMANDS, SHELL_READS, type WriteForm } from "./tables.js";
