export * from "./core/index.js";
export * from "./graph/loop-detect.js";
export * from "./graph/repeat-query.js";
export * from "./graph/tool-node.js";
export * from "./state/index.js";
