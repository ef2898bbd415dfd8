// What the guards understand of a shell command line (no LangGraph import): anything not understood may change
// anything. The commands, their writing forms and what they read are data (tables.ts).
export { changedPaths, commandPaths, isReadOnlyCommand } from "./line.js";
export { squeezeCommand } from "./spacing.js";
export { type CommandRow, REDIRECTIONS, SHELL_COMMANDS, SHELL_READS, type WriteForm } from "./tables.js";
