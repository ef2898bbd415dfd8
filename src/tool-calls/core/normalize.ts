/** Which normalizer a tool's results are compared with (the normalizer itself is common: the loop guard uses it). */
import { normalizeResult } from "../../common/identity/normalize.js";
import type { ResolvedToolGuardOptions } from "./options.js";

/**
 * The normalizer the rules compare a tool's results with: its own `normalizeResult`, else `rules.normalizeResult`
 * (`false`: `undefined`, the exact text). A user function that throws, or returns no string, leaves the text as it is.
 */
export function normalizerFor(
  options: Pick<ResolvedToolGuardOptions, "rules" | "tools">,
  tool: string,
): ((text: string) => string) | undefined {
  const own = Object.hasOwn(options.tools, tool) ? options.tools[tool]?.normalizeResult : undefined;
  const setting = own ?? options.rules.normalizeResult;
  if (typeof setting === "boolean") return setting ? normalizeResult : undefined;
  return (text) => {
    try {
      const out = setting(text, tool);
      return typeof out === "string" ? out : text;
    } catch {
      return text;
    }
  };
}
