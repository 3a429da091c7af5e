import type { EventFrame } from '@ars/contracts';

/** One block of an SSE stream: a message (id, event, data lines) or a comment. */
export interface SseBlock {
  readonly id?: string;
  readonly event?: string;
  /** Every `data:` line, in order. */
  readonly dataLines: readonly string[];
  /** The text of a comment block (`: hb` → `hb`). */
  readonly comment?: string;
}

/** A parsed event frame block. */
export interface FrameBlock extends SseBlock {
  readonly frame: EventFrame;
}

function parseBlock(text: string): SseBlock {
  const dataLines: string[] = [];
  let id: string | undefined;
  let event: string | undefined;
  let comment: string | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith(':')) {
      comment = line.slice(1).trim();
      continue;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'data') dataLines.push(value);
    else if (field === 'id') id = value;
    else if (field === 'event') event = value;
  }
  return {
    dataLines,
    ...(id === undefined ? {} : { id }),
    ...(event === undefined ? {} : { event }),
    ...(comment === undefined ? {} : { comment }),
  };
}

/**
 * A strict reader of the gateway's SSE stream for tests: it keeps every
 * block, comments included, so that tests can check the exact wire shape.
 */
export class SseReader {
  readonly blocks: SseBlock[] = [];
  #buffer = '';
  #ended = false;
  #error: unknown;
  #wake: (() => void) | undefined;
  readonly #decoder = new TextDecoder();

  constructor(source: AsyncIterable<Uint8Array | string>) {
    void (async () => {
      try {
        for await (const chunk of source) {
          this.#buffer += typeof chunk === 'string' ? chunk : this.#decoder.decode(chunk, { stream: true });
          let end: number;
          while ((end = this.#buffer.indexOf('\n\n')) >= 0) {
            this.blocks.push(parseBlock(this.#buffer.slice(0, end)));
            this.#buffer = this.#buffer.slice(end + 2);
          }
          this.#wake?.();
        }
      } catch (error) {
        this.#error = error;
      } finally {
        this.#ended = true;
        this.#wake?.();
      }
    })();
  }

  /** True once the server ended the stream (or the connection dropped). */
  get ended(): boolean {
    return this.#ended;
  }

  /** Event frames received so far (default messages with a JSON data line). */
  get frames(): FrameBlock[] {
    return this.blocks
      .filter((block) => block.event === undefined && block.comment === undefined && block.dataLines.length > 0)
      .map((block) => ({ ...block, frame: JSON.parse(block.dataLines.join('\n')) as EventFrame }));
  }

  /** Named events received so far. */
  named(event: string): SseBlock[] {
    return this.blocks.filter((block) => block.event === event);
  }

  /** Waits until `predicate` holds over what was received; rejects at the timeout or when the stream ends first. */
  async until(predicate: (reader: SseReader) => boolean, timeoutMs = 5_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this)) {
      if (this.#ended) throw new Error(`stream ended before the condition held; received ${this.describe()}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`condition did not hold within ${timeoutMs} ms; received ${this.describe()}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 250));
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /** Waits for the end of the stream. */
  async waitEnd(timeoutMs = 5_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.#ended) {
      if (Date.now() > deadline) throw new Error(`stream did not end within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Waits until `count` frames arrived. */
  frameCount(count: number, timeoutMs = 5_000): Promise<void> {
    return this.until((reader) => reader.frames.length >= count, timeoutMs);
  }

  describe(): string {
    const last = this.blocks.slice(-5).map((block) => block.event ?? block.comment ?? block.dataLines[0]?.slice(0, 80));
    return `${this.blocks.length} blocks (last: ${JSON.stringify(last)})${this.#error ? `; error ${String(this.#error)}` : ''}`;
  }
}
