#!/usr/bin/env -S node --experimental-import-meta-resolve
/**
 * The tslab kernel (1.0.22, installed in this folder: see package.json) with two changes, so that notebook cells
 * can import ESM-only and "exports"-only packages — `langgraph-guards` (this package, through its package.json
 * "exports" → dist/), `@langchain/langgraph/prebuilt` — the way a user's TypeScript file does:
 *
 * 1. Types: tslab compiles each cell with its own TypeScript 5.0 under `moduleResolution: node10`, which ignores
 *    package.json "exports" (no tsconfig is read): `@langchain/langgraph/prebuilt`, `langgraph-guards` and
 *    `langgraph-guards/testing` are not found. Here what node10 does not find is resolved like a bundler does
 *    ("exports" with the "types"/"import" conditions, the package's own name included).
 * 2. Run time: tslab runs cells as CommonJS, so every `import` becomes `require()`, which would pick the "require"
 *    build of dual packages (a second copy of @langchain/core next to the ESM one langgraph-guards imports) and
 *    cannot load an "import"-only package at all. Here a bare specifier required by a cell resolves as `import`
 *    would, and Node (20.19+) loads the ES module with require(esm): one module graph, as in an ESM program.
 *
 * `npm run notebooks` (scripts/notebooks.mjs) starts this file as the `tslab` kernel through a kernelspec of its own;
 * .ci/notebooks-setup.sh registers it for interactive use (`tslab install --binary <this file>`).
 */
"use strict";
const fs = require("node:fs");
const Module = require("node:module");
const path = require("node:path");
const { fileURLToPath, pathToFileURL } = require("node:url");

const tslabDir = path.dirname(require.resolve("tslab/package.json"));
const tsPath = require.resolve("@tslab/typescript-for-tslab", { paths: [tslabDir] });
const ts = require(tsPath);

// 1. TypeScript: node10 resolution first (as tslab does), and where it finds nothing, bundler resolution (package.json
// "exports", the package's own name included). Keeping node10 first keeps the declarations tslab emits between cells
// portable (a type from @langchain/langgraph/dist/... can be named there). tslab builds its program through
// createWatchCompilerHost; the module's exports are read-only getters, so tslab gets a copy with that one wrapped.
const patched = { ...ts };
patched.createWatchCompilerHost = function (rootFiles, tslabOptions, ...rest) {
  const options = { ...tslabOptions, typeRoots: typeRoots(tslabOptions.typeRoots ?? []) };
  const host = ts.createWatchCompilerHost.call(this, rootFiles, options, ...rest);
  const bundler = { ...options, moduleResolution: ts.ModuleResolutionKind.Bundler };
  const cwd = host.getCurrentDirectory();
  const canonical = host.useCaseSensitiveFileNames() ? (f) => f : (f) => f.toLowerCase();
  const caches = {
    node10: ts.createModuleResolutionCache(cwd, canonical, options),
    bundler: ts.createModuleResolutionCache(cwd, canonical, bundler),
  };
  host.resolveModuleNames = (names, containingFile, _reused, redirected, compilerOptions) =>
    names.map((name) => {
      const node10 = ts.resolveModuleName(name, containingFile, compilerOptions, host, caches.node10, redirected);
      if (node10.resolvedModule) return node10.resolvedModule;
      return ts.resolveModuleName(name, containingFile, bundler, host, caches.bundler, redirected).resolvedModule;
    });
  return host;
};
require.cache[tsPath].exports = patched;

/**
 * tslab's type roots, with this folder's @types when none has Node's types (a notebook outside a project): tslab
 * adds its own node_modules/@types then, but npm hoists @types/node out of it here.
 */
function typeRoots(roots) {
  const hasNode = roots.some((root) => fs.existsSync(path.join(root, "node", "package.json")));
  return hasNode ? roots : [...roots, path.join(__dirname, "node_modules", "@types")];
}

// 2. Node: a cell's bare `require("pkg")` resolves like `import "pkg"` (falls back to require's resolution).
const { resolveAsImport } = require("./esm-resolve.mjs");
const inNodeModules = (file) => file.split(path.sep).includes("node_modules");
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, parent, isMain, options) {
  const bare = !request.startsWith(".") && !path.isAbsolute(request) && !Module.isBuiltin(request);
  if (bare && request !== "tslab" && parent?.filename && !inNodeModules(parent.filename)) {
    let url;
    try {
      url = resolveAsImport(request, pathToFileURL(parent.filename).href);
    } catch {
      url = undefined;
    }
    if (url?.startsWith("file:")) return fileURLToPath(url);
  }
  return resolveFilename.call(this, request, parent, isMain, options);
};

require(path.join(tslabDir, "dist", "main.js")).main();
