import { ServiceError } from '@ars/contracts';

const NOT_ALPHABET = /[^A-Za-z0-9+/]/;

function invalid(detail: string): ServiceError {
  return new ServiceError('invalid_request', `content_base64: not standard base64 (${detail})`);
}

/**
 * Decodes standard base64 arriving in pieces, holding at most three
 * characters between pieces. Accepts exactly what the contract's
 * `content_base64` schema accepts: the standard alphabet, a length that is a
 * multiple of four, and at most two `=` of padding at the very end.
 */
export class Base64Decoder {
  #pending = '';
  #padding = 0;

  /** Decodes the complete quads of `text` (plus the characters held from before). */
  push(text: string): Buffer {
    if (text === '') return Buffer.alloc(0);
    if (this.#padding > 0) {
      if (!/^=*$/.test(text)) throw invalid('characters after the padding');
      this.#padding += text.length;
      if (this.#padding > 2) throw invalid('more than two padding characters');
      this.#pending += text;
      return this.#drain();
    }
    const stop = text.search(NOT_ALPHABET);
    if (stop >= 0) {
      const tail = text.slice(stop);
      if (!/^=*$/.test(tail)) throw invalid(`unexpected character at offset ${stop} of a piece`);
      if (tail.length > 2) throw invalid('more than two padding characters');
      this.#padding = tail.length;
    }
    this.#pending += text;
    return this.#drain();
  }

  /** Checks that the text ended on a quad boundary; answers nothing more (every quad was decoded). */
  end(): Buffer {
    if (this.#pending !== '') throw invalid('its length is not a multiple of four');
    return Buffer.alloc(0);
  }

  #drain(): Buffer {
    const whole = this.#pending.length - (this.#pending.length % 4);
    if (whole === 0) return Buffer.alloc(0);
    const quads = this.#pending.slice(0, whole);
    this.#pending = this.#pending.slice(whole);
    return Buffer.from(quads, 'base64');
  }
}

/** Encodes bytes arriving in pieces as one standard base64 text, holding at most two bytes between pieces. */
export class Base64Encoder {
  #held: Buffer = Buffer.alloc(0);

  push(bytes: Uint8Array): string {
    const all = this.#held.length === 0 ? Buffer.from(bytes) : Buffer.concat([this.#held, bytes]);
    const whole = all.length - (all.length % 3);
    this.#held = Buffer.from(all.subarray(whole));
    return all.subarray(0, whole).toString('base64');
  }

  end(): string {
    const tail = this.#held.toString('base64');
    this.#held = Buffer.alloc(0);
    return tail;
  }
}

/** Characters of the standard base64 text of `bytes` bytes. */
export function base64Length(bytes: number): number {
  return Math.ceil(bytes / 3) * 4;
}
