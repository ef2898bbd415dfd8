import { z } from "zod";

/**
 * A custom zod field with a default: createAgent initialises middleware state from zod defaults (a channel's own
 * default is not enough), and the default keeps the field optional in the agent's input type.
 */
export function defaulted<T extends object>(make: () => T): z.ZodDefault<z.ZodCustom<T, T>> {
  return z.custom<T>().default(make as () => z.util.NoUndefined<T>);
}
