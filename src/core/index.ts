export * from "./classify.js";
export * from "./engine.js";
export * from "./messages.js";
export * from "./options.js";
export * from "./redundancy.js";
export * from "./repetition.js";
export { isReadOnlyCommand } from "./shell.js";
export * from "./signature.js";
