/**
 * An incremental parser of the `text/event-stream` format (WHATWG HTML,
 * "Server-sent events"), fed with decoded text in chunks that may split
 * anywhere: inside a field, between `\r` and `\n`, or inside a line ending.
 */

/** One dispatched SSE message. */
export interface SseMessage {
  /** The `event:` field; `''` when the message named none (the default `message` type). */
  readonly event: string;
  /** The `data:` lines joined with `\n`. */
  readonly data: string;
  /**
   * The last event id after this message: the stream's `Last-Event-ID`
   * cursor. It persists across messages until an `id:` field changes it.
   */
  readonly lastEventId: string;
  /** True when this message itself carried an `id:` field. */
  readonly hasId: boolean;
}

/** The parser state machine; one per connection. */
export interface SseParser {
  /** Feeds decoded text; returns the messages completed by it, in order. */
  push(text: string): SseMessage[];
  /** The last `retry:` value in milliseconds, if the server sent one. */
  readonly retryMs: number | undefined;
  /** The current last event id (see {@link SseMessage.lastEventId}). */
  readonly lastEventId: string;
}

/**
 * Creates a parser. `initialLastEventId` seeds the cursor, so that a resumed
 * connection keeps the cursor of the previous one until the server sends a new id.
 */
export function createSseParser(initialLastEventId = ''): SseParser {
  let buffer = '';
  let firstChunk = true;
  // A chunk that ended in `\r` may be followed by the `\n` of the same CRLF.
  let skipLeadingLf = false;
  let eventType = '';
  let dataLines: string[] = [];
  let sawId = false;
  let lastEventId = initialLastEventId;
  let retryMs: number | undefined;

  function dispatch(out: SseMessage[]): void {
    const hasId = sawId;
    sawId = false;
    if (dataLines.length === 0) {
      eventType = '';
      return;
    }
    out.push({ event: eventType, data: dataLines.join('\n'), lastEventId, hasId });
    eventType = '';
    dataLines = [];
  }

  function processLine(line: string, out: SseMessage[]): void {
    if (line === '') return dispatch(out);
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        eventType = value;
        break;
      case 'data':
        dataLines.push(value);
        break;
      case 'id':
        if (!value.includes('\0')) {
          lastEventId = value;
          sawId = true;
        }
        break;
      case 'retry':
        if (/^\d+$/.test(value)) retryMs = Number(value);
        break;
      default:
        // Unknown fields are ignored, as the format requires.
        break;
    }
  }

  function push(text: string): SseMessage[] {
    const out: SseMessage[] = [];
    if (firstChunk && text.length > 0) {
      firstChunk = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (skipLeadingLf && text.length > 0) {
      skipLeadingLf = false;
      if (text[0] === '\n') text = text.slice(1);
    }
    buffer += text;
    let start = 0;
    for (let i = 0; i < buffer.length; i++) {
      const ch = buffer[i];
      if (ch !== '\n' && ch !== '\r') continue;
      processLine(buffer.slice(start, i), out);
      if (ch === '\r') {
        if (i + 1 < buffer.length) {
          if (buffer[i + 1] === '\n') i++;
        } else {
          skipLeadingLf = true;
        }
      }
      start = i + 1;
    }
    buffer = buffer.slice(start);
    return out;
  }

  return {
    push,
    get retryMs() {
      return retryMs;
    },
    get lastEventId() {
      return lastEventId;
    },
  };
}
