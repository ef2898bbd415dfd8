import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import SummaryReporter from "./test/support/summary-reporter.js";

const src = (path: string) => fileURLToPath(new URL(`./src/${path}`, import.meta.url));

export default defineConfig({
  // The README's code and the examples import the package by name: in tests, that name is this checkout's source
  // (as tsconfig.json "paths" does for tsc and tsx).
  resolve: {
    alias: [
      { find: /^langgraph-guards$/, replacement: src("index.ts") },
      { find: /^langgraph-guards\/([a-z]+)$/, replacement: src("$1/index.ts") },
    ],
  },
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    reporters: ["default", new SummaryReporter()],
  },
});
