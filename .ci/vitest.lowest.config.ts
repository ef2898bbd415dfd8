// The suite's config for .ci/lowest-peers.mjs: with zod at its lowest (3.x), a test's `import { z } from "zod"`
// would be zod 3's own API; our code and a zod 3 user of our zod schemas use "zod/v4", and so do the tests here.
import { fileURLToPath } from "node:url";
import { defineConfig, mergeConfig } from "vitest/config";
import base from "../vitest.config.js";

export default mergeConfig(
  base,
  defineConfig({
    root: fileURLToPath(new URL("..", import.meta.url)),
    resolve: { alias: [{ find: /^zod$/, replacement: "zod/v4" }] },
  }),
);
