import type { MemorySaver } from "@langchain/langgraph";

/** Replaces `channel`'s value in the thread's latest checkpoint, as a damaged store would give it back. */
export async function damage(
  saver: MemorySaver,
  config: { configurable: { thread_id: string } },
  channel: string,
  edit: (value: Record<string, unknown>) => unknown,
): Promise<void> {
  const tuple = await saver.getTuple(config);
  if (tuple === undefined) throw new Error("no checkpoint");
  const { checkpoint } = tuple;
  const value = JSON.parse(JSON.stringify(checkpoint.channel_values[channel])) as Record<string, unknown>;
  const values = { ...checkpoint.channel_values, [channel]: edit(value) ?? value };
  if (tuple.metadata === undefined) throw new Error("no metadata");
  await saver.put(tuple.parentConfig ?? config, { ...checkpoint, channel_values: values }, tuple.metadata);
}
