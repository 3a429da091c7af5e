import { ServiceError } from '@ars/contracts';

/** The member whose string value is streamed out instead of kept. */
export const CONTENT_MEMBER = 'content_base64';

const WHITESPACE = new Set([' ', '\t', '\n', '\r', '\uFEFF']);
const CONTENT_STOP = /["\\]/g;

function notJson(detail: string): ServiceError {
  return new ServiceError('invalid_request', `the request body is not a valid JSON object (${detail})`);
}

/**
 * Reads an artifacts.put body as it arrives without holding its bytes: the
 * string value of the top-level `content_base64` member is handed out piece
 * by piece, everything else is kept as JSON text in which that value reads
 * `""`. Only the structure needed for this is checked here (nesting, strings,
 * top-level keys); the kept text is parsed as JSON afterwards.
 */
export class PutBodyScanner {
  readonly #restLimit: number;
  #rest = '';
  #depth = 0;
  #started = false;
  #done = false;
  #inString = false;
  #escape = false;
  /** Where the current top-level key began in `#rest` (its opening quote). */
  #keyStart: number | undefined;
  #keyExpected = false;
  #lastKey: string | undefined;
  #awaitingValue = false;
  #inContent = false;
  #contentEscape = false;
  #contentSeen = false;
  /** The kept text up to the content value's opening quote. */
  #beforeContent: string | undefined;

  /** @param restLimit - most characters kept besides the content (413 past it). */
  constructor(restLimit: number) {
    this.#restLimit = restLimit;
  }

  /** True once the body named `content_base64` with a string value. */
  get contentSeen(): boolean {
    return this.#contentSeen;
  }

  /** Feeds the next piece of text; answers the pieces of the content value it held. */
  push(text: string): string[] {
    const pieces: string[] = [];
    let index = 0;
    while (index < text.length) {
      if (this.#inContent) {
        index = this.#content(text, index, pieces);
        continue;
      }
      this.#char(text[index]!);
      index += 1;
    }
    if (this.#rest.length > this.#restLimit) {
      throw new ServiceError(
        'payload_too_large',
        `the members besides content_base64 are larger than ${this.#restLimit} characters`,
      );
    }
    return pieces;
  }

  /**
   * The members before the content value as JSON text, closed (they may name
   * the identity); `undefined` until the content value began.
   */
  preview(): string | undefined {
    return this.#beforeContent === undefined ? undefined : `${this.#beforeContent}""}`;
  }

  /** The kept JSON text, once the body is complete; 400 when it ended early or went on after the object. */
  end(): string {
    if (!this.#started) throw notJson('it is empty');
    if (!this.#done || this.#inString || this.#inContent) throw notJson('it ends early');
    return this.#rest;
  }

  /** Hands out content characters up to the next quote or backslash; answers where it stopped. */
  #content(text: string, from: number, pieces: string[]): number {
    if (this.#contentEscape) {
      this.#contentEscape = false;
      // JSON may escape the solidus; no other escape can stand for a base64 character.
      if (text[from] !== '/')
        throw new ServiceError('invalid_request', 'content_base64: not standard base64 (an escape)');
      pieces.push('/');
      return from + 1;
    }
    CONTENT_STOP.lastIndex = from;
    const stop = CONTENT_STOP.exec(text);
    const end = stop === null ? text.length : stop.index;
    if (end > from) pieces.push(text.slice(from, end));
    if (stop === null) return end;
    if (stop[0] === '\\') {
      this.#contentEscape = true;
    } else {
      this.#inContent = false;
      this.#rest += '"';
    }
    return end + 1;
  }

  #char(c: string): void {
    if (this.#inString) {
      this.#rest += c;
      if (this.#escape) this.#escape = false;
      else if (c === '\\') this.#escape = true;
      else if (c === '"') this.#closeString();
      return;
    }
    if (WHITESPACE.has(c)) {
      if (c !== '\uFEFF') this.#rest += c;
      return;
    }
    if (this.#done) throw notJson('text after the object');
    if (!this.#started) {
      if (c !== '{') throw notJson('it must be an object');
      this.#started = true;
    }
    this.#structural(c);
  }

  #structural(c: string): void {
    const topLevel = this.#depth === 1;
    if (c === '"' && topLevel && this.#awaitingValue && this.#lastKey === CONTENT_MEMBER) {
      if (this.#contentSeen) throw new ServiceError('invalid_request', 'content_base64 appears more than once');
      this.#contentSeen = true;
      this.#inContent = true;
      this.#awaitingValue = false;
      this.#beforeContent = this.#rest;
      this.#rest += c;
      return;
    }
    this.#rest += c;
    if (c === '"') {
      this.#inString = true;
      this.#keyStart = topLevel && this.#keyExpected ? this.#rest.length - 1 : undefined;
    } else if (c === '{' || c === '[') {
      this.#depth += 1;
      if (this.#depth === 1) this.#keyExpected = true;
    } else if (c === '}' || c === ']') {
      this.#depth -= 1;
      if (this.#depth < 0) throw notJson('unbalanced brackets');
      if (this.#depth === 0) this.#done = true;
    } else if (topLevel && c === ':') {
      this.#awaitingValue = true;
      return;
    } else if (topLevel && c === ',') {
      this.#keyExpected = true;
    }
    this.#awaitingValue = false;
  }

  #closeString(): void {
    this.#inString = false;
    if (this.#keyStart === undefined) return;
    try {
      this.#lastKey = JSON.parse(this.#rest.slice(this.#keyStart)) as string;
    } catch {
      throw notJson('a malformed member name');
    }
    this.#keyStart = undefined;
    this.#keyExpected = false;
  }
}
