/**
 * What the guards take from a tool that serves repeats from its own cache with a freshness check (the file tools):
 * no consecutive or redundant block, and its results compared exactly (its freshness check tells a changed file from
 * an unchanged one; the normalizer's scan of every read is spared). A setting the user gives for the tool wins.
 */
import { describe, expect, it } from "vitest";
import { resolveToolGuardOptions } from "../../src/core/index.js";
import { createFileTools } from "../../src/fs/tools.js";
import { normalizerFor } from "../../src/tool-calls/core/normalize.js";
import { ToolTraits } from "../../src/tool-calls/traits.js";

const stamped = "checked_at: 2025-01-02T10:00:03Z";

describe("ToolTraits.learn: a tool that serves repeats", () => {
  it("is compared exactly, without the consecutive and redundant rules", () => {
    const given = resolveToolGuardOptions();
    const traits = new ToolTraits(given);
    traits.learn(createFileTools({ root: "/tmp" }));
    const { options } = traits;
    expect(options.tools.read_file).toMatchObject({ consecutive: false, redundancy: false, normalizeResult: false });
    expect(normalizerFor(options, "read_file")).toBeUndefined();
    // Any other tool keeps the default normalizer.
    expect(normalizerFor(options, "web_search")?.(stamped)).toBe("checked_at: <v>");
  });

  it("keeps what the user set for it", () => {
    const given = resolveToolGuardOptions({ tools: { read_file: { normalizeResult: true, consecutive: true } } });
    const traits = new ToolTraits(given);
    traits.learn(createFileTools({ root: "/tmp" }));
    const { options } = traits;
    expect(options.tools.read_file).toMatchObject({ consecutive: true, redundancy: false, normalizeResult: true });
    expect(normalizerFor(options, "read_file")?.(stamped)).toBe("checked_at: <v>");
  });

  it("never writes to the validated options", () => {
    const given = resolveToolGuardOptions();
    const before = structuredClone(given.tools);
    new ToolTraits(given).learn(createFileTools({ root: "/tmp" }));
    expect(given.tools).toEqual(before);
  });
});
