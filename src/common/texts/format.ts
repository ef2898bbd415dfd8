// Cutting text never in the middle of a surrogate pair: half of an emoji is not valid Unicode, and a provider may
// reject a request that holds one.

/** The largest end ≤ `max` (and ≤ the length) at which `text` can be cut without splitting a surrogate pair. */
export function cutEnd(text: string, max: number): number {
  const end = Math.max(0, Math.min(text.length, Math.floor(max)));
  if (end === 0 || end === text.length) return end;
  const before = text.charCodeAt(end - 1);
  const after = text.charCodeAt(end);
  const splitsPair = before >= 0xd800 && before <= 0xdbff && after >= 0xdc00 && after <= 0xdfff;
  return splitsPair ? end - 1 : end;
}

/** At most `max` characters: `text` itself, or its start with "…" where it was cut. */
export function capText(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, cutEnd(text, max - 1))}…`;
}

/** `text` cut after at most `max` characters, saying how much was left out. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = cutEnd(text, max);
  return `${text.slice(0, end)}… [${text.length - end} more characters]`;
}

/** `n` as an ordinal in English: 1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st. */
export function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? "th" : (["th", "st", "nd", "rd"][n % 10] ?? "th");
  return `${n}${suffix}`;
}
