/**
 * Two tools the createAgent tests share: `search_docs({ q })` (answers "results for <q>"; the query "broken" answers
 * an error text) and `write_note({ text })`, each noting what ran in `ran` ("search a", "note x").
 */
import { tool } from "@langchain/core/tools";
import { z } from "zod";

export function docsTools(ran: string[]) {
  return [
    tool(
      async ({ q }) => {
        ran.push(`search ${q}`);
        return q === "broken" ? "Error: index unavailable" : `results for ${q}`;
      },
      { name: "search_docs", description: "Search the docs.", schema: z.object({ q: z.string() }) },
    ),
    tool(
      async ({ text }) => {
        ran.push(`note ${text}`);
        return `saved: ${text}`;
      },
      { name: "write_note", description: "Write a note.", schema: z.object({ text: z.string() }) },
    ),
  ];
}
