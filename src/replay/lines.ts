/** The streaming reader's parts that see no file: bytes split into lines (capped), lines turned into runs. */
import {
  parseLine,
  type ReadRunsResult,
  type ReplayFormat,
  ReplayInputError,
  readRuns,
  runsOfParsed,
} from "./formats.js";
import type { ReplayRun } from "./replay.js";

/**
 * What the streaming reader yields: a run it read, or an error (bad input, a cap, a refused file); `incomplete` marks
 * input that ends early (a truncated or damaged `.gz`: the runs before the break were read), which the CLI's
 * `--lenient` accepts as a warning.
 *
 * @example
 * ```ts
 * for await (const item of readRunsFromFile("runs.jsonl.gz")) {
 *   if ("run" in item) console.log(item.run.id);
 *   else console.error(item.error.message);
 * }
 * ```
 */
export type ReplayInputItem =
  | {
      /** A run read from the input. */
      run: ReplayRun;
    }
  | {
      /** What could not be read, and where (the file, and the line when there is one). */
      error: ReplayInputError;
      /** The input ends early (a truncated or damaged `.gz`); what came before it was read. */
      incomplete: boolean;
    };

/** A line of JSON Lines left to be read where its run is replayed (a worker thread of the CLI): `where` is `file:n`. */
export interface DeferredLine {
  line: string;
  where: string;
}

/** What the reader gives: an item, or (when asked to defer) a line of JSON Lines still to be read. */
export type InputItem = ReplayInputItem | DeferredLine;

/** The runs, or the error, of one line of JSON Lines at `where` (`file:n`). */
export function lineItems(text: string, where: string, format: ReplayFormat | "auto"): ReplayInputItem[] {
  const parsed = parseLine(text, where);
  if (!("value" in parsed)) return [{ error: parsed.error, incomplete: false }];
  const { runs, errors } = runsOfParsed(parsed.value, where, format);
  return [...runs.map((run) => ({ run })), ...errors.map((error) => ({ error, incomplete: false }))];
}

/** A size for messages: "64 MiB", "4 KiB", "300 B". */
export function formatBytes(n: number): string {
  for (const [unit, size] of [
    ["GiB", 1024 ** 3],
    ["MiB", 1024 ** 2],
    ["KiB", 1024],
  ] as const) {
    if (n >= size && n % size === 0) return `${n / size} ${unit}`;
  }
  return `${n} B`;
}

/** What the splitter found: a line, a line over the cap (skipped), or a run of empty lines. */
type LineEvent =
  | { kind: "line"; n: number; text: string; bytes: number }
  | { kind: "long"; n: number }
  | { kind: "blank"; count: number };

/** Splits bytes into lines at `\n` as they come; a line longer than `maxLineBytes` is reported once and dropped. */
export class LineSplitter {
  /** Complete lines so far (blank ones too). */
  lines = 0;
  /** Bytes up to the end of the last complete line. */
  bytes = 0;
  /** Bytes pushed. */
  total = 0;
  private parts: Buffer[] = [];
  private partBytes = 0;
  private skipping = false;

  constructor(private readonly maxLineBytes: number) {}

  /** The lines (and over-long lines) that `chunk` completes or starts. */
  *push(chunk: Buffer): Generator<LineEvent> {
    let start = 0;
    while (start < chunk.length) {
      if (chunk[start] === 0x0a && this.partBytes === 0 && !this.skipping) {
        // A run of empty lines, counted in one step (1 GiB of them is a 1 MB .gz).
        let end = start + 1;
        while (end < chunk.length && chunk[end] === 0x0a) end += 1;
        this.lines += end - start;
        this.bytes = this.total + end;
        yield { kind: "blank", count: end - start };
        start = end;
        continue;
      }
      const nl = chunk.indexOf(0x0a, start);
      const end = nl === -1 ? chunk.length : nl;
      if (!this.skipping) {
        if (this.partBytes + (end - start) > this.maxLineBytes) {
          this.skipping = true;
          this.parts = [];
          this.partBytes = 0;
          yield { kind: "long", n: this.lines + 1 };
        } else if (end > start) {
          this.parts.push(chunk.subarray(start, end));
          this.partBytes += end - start;
        }
      }
      if (nl === -1) break;
      this.lines += 1;
      this.bytes = this.total + nl + 1;
      const line = this.take();
      if (line !== undefined) yield line;
      start = nl + 1;
    }
    this.total += chunk.length;
  }

  /** At the end of the input: its last line when the input does not end with `\n`. */
  *finish(): Generator<LineEvent> {
    if (this.partBytes === 0 || this.skipping) return;
    const line = this.take(this.lines + 1);
    if (line !== undefined) yield line;
  }

  private take(n = this.lines): LineEvent | undefined {
    const skipped = this.skipping;
    const bytes = this.partBytes;
    const text = Buffer.concat(this.parts, bytes).toString("utf8");
    this.parts = [];
    this.partBytes = 0;
    this.skipping = false;
    return skipped ? undefined : { kind: "line", n, text, bytes };
  }
}

/** Lines into runs, as {@link readRuns}: JSON Lines if the first non-blank line parses alone, else one document. */
export class RunAssembler {
  runs = 0;
  /** The document is over its cap: the input is refused, nothing more is read. */
  refused = false;
  private mode: "start" | "lines" | "document" = "start";
  private pending: { value: unknown; n: number } | undefined;
  private blankBefore = 0;
  private document: string[] = [];
  private documentBytes = 0;

  /** `defer`: asked at each line of JSON Lines, whether to give it as a {@link DeferredLine} rather than read it. */
  constructor(
    private readonly file: string,
    private readonly format: ReplayFormat | "auto",
    private readonly caps: { maxLineBytes: number; maxDocumentBytes: number },
    private readonly defer?: () => boolean,
  ) {}

  take(event: LineEvent): InputItem[] {
    if (event.kind === "long") {
      const items = this.flushPending();
      if (this.mode === "start") this.mode = "lines";
      const cap = `${formatBytes(this.caps.maxLineBytes)} (the cap on one line: --max-line-bytes, option maxLineBytes)`;
      return [
        ...items,
        this.error(new ReplayInputError(`${this.file}:${event.n}`, `a line longer than ${cap}: skipped`)),
      ];
    }
    if (event.kind === "blank") return this.blank(event.count);
    if (this.mode === "document") return this.keep(event.text, event.bytes);
    if (event.text.trim() === "") {
      if (this.mode === "start") this.blankBefore += 1;
      return [];
    }
    if (this.mode === "lines") return [...this.flushPending(), ...this.line(event.text, event.n)];
    const parsed = parseLine(event.text, `${this.file}:${event.n}`);
    if ("value" in parsed) {
      this.mode = "lines";
      this.pending = { value: parsed.value, n: event.n };
      return [];
    }
    this.mode = "document";
    return this.keep(`${"\n".repeat(this.blankBefore)}${event.text}`, event.bytes);
  }

  /** At the end: a lone line read as a document, or the document (unless capped); a broken input is not "empty". */
  end(how: "complete" | "broken" | "cap"): ReplayInputItem[] {
    if (this.pending !== undefined) {
      const { value } = this.pending;
      this.pending = undefined;
      return this.items(runsOfParsed(value, this.file, this.format));
    }
    if (this.mode === "document" && how !== "cap") {
      const text = this.document.join("\n");
      this.document = [];
      return this.items(readRuns(text, { file: this.file, format: this.format }));
    }
    if (this.mode === "start" && how === "complete")
      return [this.error(new ReplayInputError(this.file, "empty input"))];
    return [];
  }

  private flushPending(): ReplayInputItem[] {
    if (this.pending === undefined) return [];
    const { value, n } = this.pending;
    this.pending = undefined;
    return this.items(runsOfParsed(value, `${this.file}:${n}`, this.format));
  }

  private line(text: string, n: number): InputItem[] {
    const where = `${this.file}:${n}`;
    const items: InputItem[] = this.defer?.() === true ? [{ line: text, where }] : lineItems(text, where, this.format);
    for (const item of items) if (!("error" in item)) this.runs += 1; // a deferred line holds a run (or an error)
    return items;
  }

  /** `count` empty lines: nothing between JSON lines, kept in a document (up to its cap). */
  private blank(count: number): ReplayInputItem[] {
    if (this.mode === "start") this.blankBefore += count;
    if (this.mode !== "document") return [];
    // `count` lines of a document: one part of count - 1 newlines (the parts are joined with newlines).
    if (this.documentBytes + count > this.caps.maxDocumentBytes) return this.keep("", count);
    return this.keep("\n".repeat(count - 1), count - 1);
  }

  private keep(text: string, bytes: number): ReplayInputItem[] {
    this.documentBytes += bytes + 1;
    if (this.documentBytes <= this.caps.maxDocumentBytes) {
      this.document.push(text);
      return [];
    }
    this.document = [];
    this.refused = true;
    const cap = `${formatBytes(this.caps.maxDocumentBytes)} (the cap on a whole-file document: --max-document-bytes, option maxDocumentBytes)`;
    const reason = `a JSON document of more than ${cap}: not read; write large input as JSON Lines (one run a line), which is read a line at a time`;
    return [this.error(new ReplayInputError(this.file, reason))];
  }

  private items({ runs, errors }: ReadRunsResult): ReplayInputItem[] {
    this.runs += runs.length;
    return [...runs.map((run) => ({ run })), ...errors.map((e) => this.error(e))];
  }

  private error(error: ReplayInputError): ReplayInputItem {
    return { error, incomplete: false };
  }
}
