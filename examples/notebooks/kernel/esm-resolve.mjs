/**
 * Resolves a module specifier the way `import` does (package.json "exports" with the "import" condition), from
 * `parentUrl`. Loaded by tslab-kernel.cjs with require(); the parent argument of import.meta.resolve needs Node's
 * --experimental-import-meta-resolve (the kernel's shebang passes it).
 */
export function resolveAsImport(specifier, parentUrl) {
  return import.meta.resolve(specifier, parentUrl);
}
