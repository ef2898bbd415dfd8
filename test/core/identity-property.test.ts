/**
 * A call's identity (key and effect) read in one pass over the arguments a call has must be the identity of the
 * definition: every path argument name asked of the arguments (`args[name]` for the effect's paths, own ones for the
 * key), ignored arguments and volatile call metadata dropped, paths normalized, then digested. Checked on random tools,
 * traits, hints, roots and arguments, including objects without a prototype, with inherited or non-enumerable path
 * arguments, and flat JSON arguments of any text and number (the usual call's one-pass identity).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type CallEffect,
  callIdentity,
  DEFAULT_PATH_ARGS,
  identityArgs,
  isReadOnlyCall,
  isShellTool,
  normalizePath,
  shellCommandOf,
} from "../../src/common/identity/classify.js";
import { commandPaths, squeezeCommand } from "../../src/common/identity/shell/index.js";
import { digest, toolCallSignature, withoutIgnoredArgs } from "../../src/common/identity/signature.js";
import { withoutVolatileArgs } from "../../src/common/identity/volatile-args.js";

type Traits = { readOnly?: boolean; invalidates?: "all" | "paths" | "none"; pathArgs?: string[] };

const isPathText = (v: unknown): v is string => typeof v === "string" && v !== "" && !v.includes("\0");

/** The paths of the arguments by the definition: each path argument name asked of `args` (its own), in order. */
function referencePaths(args: unknown, pathArgs: readonly string[], root: string | undefined): string[] {
  if (args === null || typeof args !== "object" || Array.isArray(args)) return [];
  const out: string[] = [];
  for (const key of pathArgs) {
    const value = Object.hasOwn(args, key) ? (args as Record<string, unknown>)[key] : undefined;
    if (value === undefined) continue;
    if (!Array.isArray(value)) {
      if (isPathText(value)) out.push(normalizePath(value, root));
      continue;
    }
    for (const v of value) if (isPathText(v)) out.push(normalizePath(v, root));
  }
  return out;
}

/** The arguments with their own path arguments normalized, by the definition. */
function referenceNormalized(args: unknown, pathArgs: readonly string[], root: string | undefined): unknown {
  if (args === null || typeof args !== "object" || Array.isArray(args)) return args;
  let copy: Record<string, unknown> | undefined;
  for (const key of pathArgs) {
    if (!Object.hasOwn(args, key)) continue;
    const value = (args as Record<string, unknown>)[key];
    let normalized: unknown = value;
    if (isPathText(value)) normalized = normalizePath(value, root);
    else if (Array.isArray(value) && value.every(isPathText)) normalized = value.map((v) => normalizePath(v, root));
    if (normalized !== value) {
      copy ??= { ...(args as Record<string, unknown>) };
      copy[key] = normalized;
    }
  }
  return copy ?? args;
}

function referenceIdentity(
  name: string,
  args: unknown,
  opts: {
    tools: Record<string, Traits>;
    readOnlyHints: Record<string, boolean>;
    root?: string | undefined;
    ignoreArgs: string[];
  },
): { key: string; effect: CallEffect } {
  const traits = Object.hasOwn(opts.tools, name) ? opts.tools[name] : undefined;
  const pathArgs = traits?.pathArgs ?? DEFAULT_PATH_ARGS;
  const command = shellCommandOf(name, args);
  let effect: CallEffect;
  if (command !== undefined && traits?.readOnly === undefined && !Object.hasOwn(opts.readOnlyHints, name)) {
    const { readOnly, changed, reads, rewritten } = commandPaths(command, opts.root ?? null);
    if (readOnly) effect = { kind: "read", paths: reads ?? [] };
    else if (changed === undefined || changed.length === 0) effect = { kind: "mutate" };
    else
      effect =
        rewritten.length > 0
          ? { kind: "write", paths: changed, rewrites: rewritten }
          : { kind: "write", paths: changed };
  } else {
    const paths = command !== undefined ? [] : referencePaths(args, pathArgs, opts.root);
    const invalidates = traits?.invalidates ?? (paths.length > 0 ? "paths" : "all");
    if (isReadOnlyCall(name, args, opts)) effect = { kind: "read", paths };
    else if (invalidates === "none") effect = { kind: "none" };
    else if (invalidates === "paths" && paths.length > 0) {
      // A write given the whole content (a `content`-like string argument) rewrites its files; an edit does not.
      const record = (typeof args === "object" && args !== null ? args : {}) as Record<string, unknown>;
      const whole =
        !/append|insert|edit|diff|patch|replace/i.test(name) &&
        ["content", "contents", "file_text", "new_content"].some(
          (k) => Object.hasOwn(record, k) && typeof record[k] === "string",
        );
      effect = whole ? { kind: "write", paths, rewrites: paths } : { kind: "write", paths };
    } else effect = { kind: "mutate" };
  }
  const kept = referenceNormalized(withoutVolatileArgs(withoutIgnoredArgs(args, opts.ignoreArgs)), pathArgs, opts.root);
  return { key: digest(toolCallSignature(name, isShellTool(name) ? referenceSqueezed(kept) : kept)), effect };
}

/** A shell call's arguments with the command (the first command argument that is a string) squeezed, by definition. */
function referenceSqueezed(args: unknown): unknown {
  if (typeof args === "string") return squeezeCommand(args);
  if (args === null || typeof args !== "object") return args;
  for (const key of ["command", "cmd", "script", "commandLine", "command_line"]) {
    const value = (args as Record<string, unknown>)[key];
    if (Array.isArray(value) && value.every((v) => typeof v === "string")) return args;
    if (typeof value !== "string") continue;
    // A copy only when the command changed (a spread would drop a non-enumerable path argument).
    const squeezed = squeezeCommand(value);
    return squeezed === value ? args : { ...(args as Record<string, unknown>), [key]: squeezed };
  }
  return args;
}

const pathArb = fc.constantFrom("a.py", "./src/../a.py", "/repo/a.py", "src/", "..", "", "x\0y", "/etc/passwd");
const valueArb = fc.oneof(
  pathArb,
  fc.constantFrom("ls  -la src ", "ls -la src", ' grep "a  b"  f'),
  fc.array(pathArb, { maxLength: 3 }),
  fc.array(fc.oneof(pathArb, fc.integer()), { maxLength: 3 }),
  fc.integer(),
  fc.constant(null),
  fc.record({ path: pathArb }),
  fc.constantFrom("3f2b8c1e-9d4a-4b6e-8f1a-2c3d4e5f6a7b", "2026-11-28T10:00:03Z", 1_764_324_003, "r3"),
  fc.record({ trace_id: fc.constantFrom("3f2b8c1e-9d4a-4b6e-8f1a-2c3d4e5f6a7b", "t1"), path: pathArb }),
);
const KEYS = ["path", "paths", "file", "dir", "target", "src", "content", "command", "limit", "requestId", "ts"];
const argsArb = fc
  .record({
    entries: fc.array(fc.tuple(fc.constantFrom(...KEYS), valueArb), { maxLength: 5 }),
    form: fc.constantFrom("plain", "plain", "null-prototype", "inherited", "non-enumerable"),
  })
  .map(({ entries, form }): unknown => {
    const own = Object.fromEntries(entries);
    if (form === "null-prototype") return Object.assign(Object.create(null), own);
    if (form === "inherited") return Object.assign(Object.create({ file: "inherited.py" }), own);
    if (form === "non-enumerable") return Object.defineProperty(own, "dir", { value: "hidden/", enumerable: false });
    return own;
  });

/** Arguments as a model's JSON gives them: a plain object of strings (any text), numbers and booleans. */
const flatArgsArb = fc.dictionary(
  fc.oneof(fc.constantFrom(...KEYS, "__proto__", "Path", "é", "a b"), fc.string({ unit: "binary" })),
  fc.oneof(pathArb, fc.string({ unit: "binary" }), fc.double(), fc.integer(), fc.boolean()),
  { maxKeys: 5 },
);

describe("a call's identity, read in one pass", () => {
  it("is the identity of the definition, for any tool, traits, hints, root and arguments", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("read_file", "write_file", "bash", "deploy", "list_files", "tool"),
        fc.oneof(argsArb, flatArgsArb, fc.constantFrom<unknown>("text", 7, null, ["a.py"])),
        fc.record({
          traits: fc.option(
            fc.record(
              {
                readOnly: fc.boolean(),
                invalidates: fc.constantFrom("all" as const, "paths" as const, "none" as const),
                pathArgs: fc.subarray(["path", "target", "src", "file"]),
              },
              { requiredKeys: [] },
            ),
          ),
          hint: fc.option(fc.boolean()),
          root: fc.option(fc.constantFrom("/repo", "/", "repo")),
          ignoreArgs: fc.subarray(["path", "limit", "content", "file.path"]),
        }),
        (name, args, o) => {
          const opts = {
            tools: o.traits === null ? {} : { [name]: o.traits },
            readOnlyHints: o.hint === null ? {} : { [name]: o.hint },
            root: o.root ?? undefined,
            ignoreArgs: o.ignoreArgs,
          };
          const { stripped, shell, command, ...identity } = callIdentity(name, args, opts);
          expect(identity).toEqual(referenceIdentity(name, args, opts));
          // What the name and arguments said on the way: a shell, and its command line.
          expect(shell).toBe(isShellTool(name));
          expect(command).toBe(shellCommandOf(name, args));
          // Stripped: volatile metadata left out of a tool that is no shell (its schema unknown here).
          const given = withoutIgnoredArgs(args, o.ignoreArgs);
          const dropped = !isShellTool(name) && withoutVolatileArgs(given) !== given;
          expect(stripped).toBe(dropped ? "unknown" : undefined);
          // What escalation compares is what the key digests.
          expect(digest(toolCallSignature(name, identityArgs(name, args, opts)))).toBe(identity.key);
        },
      ),
      { numRuns: 5_000, seed: 2026_11_24 },
    );
  });

  it("never throws: a name that is no string, or arguments that throw when read, get the mutating fallback", () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error("getter");
        },
        ownKeys() {
          throw new Error("ownKeys");
        },
      },
    );
    expect(callIdentity(42 as unknown as string, {})).toMatchObject({ effect: { kind: "mutate" }, shell: false });
    // Unreadable arguments: the name still says whether the tool is a shell; no command line was read.
    expect(callIdentity("bash", hostile)).toMatchObject({ effect: { kind: "mutate" }, shell: true });
    expect(callIdentity("bash", hostile).command).toBeUndefined();
    expect(callIdentity("read_file", hostile)).toMatchObject({ effect: { kind: "mutate" }, shell: false });
  });
});
