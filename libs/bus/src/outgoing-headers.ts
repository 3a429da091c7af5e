import type { MsgHdrs } from '@nats-io/transport-node';
import { utf8 } from './utf8.ts';

/**
 * The headers of a message this process sends, a cheaper stand-in for
 * nats-core's `headers()`: nats-core's `set` deletes and appends, each a
 * search of every key (an array made and filtered), its `append` rebuilds
 * the key in canonical form (an array of char codes spread into a string)
 * to check it and tests the value with a regular expression; `encode`
 * builds the block with `TextEncoder` (see `utf8.ts`). A run sent about 50
 * header blocks of four to six headers each. Here a header is checked once
 * by a loop over its characters, kept in a `Map`, and the block is written
 * once, byte for byte what nats-core writes (`outgoing-headers.test.ts`).
 * Keys are matched as given (`Match.Exact`, nats-core's default); the
 * other match modes compare without case, which is what the two do for the
 * keys this project sends. Received messages keep nats-core's decoded
 * headers.
 */

/** nats-core's header-name rule: printable ASCII without `:`. */
function checkKey(key: string): void {
  for (let i = 0; i < key.length; i += 1) {
    const c = key.charCodeAt(i);
    if (c < 33 || c > 126 || c === 58) {
      throw new TypeError(`'${key[i] ?? ''}' is not a valid character in a header name`);
    }
  }
}

/** nats-core's header-value rule: no CR or LF; surrounding white space trimmed. */
function checkedValue(value: string): string {
  if (value.includes('\r') || value.includes('\n')) throw new TypeError('header values cannot contain \\r or \\n');
  return value.trim();
}

export class OutgoingHeaders implements MsgHdrs {
  readonly #entries = new Map<string, string[]>();

  readonly hasError = false;
  readonly code = 0;
  readonly description = '';
  readonly status = '0';

  [Symbol.iterator](): MapIterator<[string, string[]]> {
    return this.#entries.entries();
  }

  /** The stored keys `key` designates: itself (exact), or any spelled the same without case. */
  #keys(key: string, match?: string): string[] {
    if (match === undefined || match === 'exact') return this.#entries.has(key) ? [key] : [];
    const lower = key.toLowerCase();
    return [...this.#entries.keys()].filter((k) => k.toLowerCase() === lower);
  }

  get(key: string, match?: string): string {
    const [found] = this.#keys(key, match);
    return found === undefined ? '' : (this.#entries.get(found)?.[0] ?? '');
  }

  last(key: string, match?: string): string {
    const [found] = this.#keys(key, match);
    const values = found === undefined ? undefined : this.#entries.get(found);
    return values?.[values.length - 1] ?? '';
  }

  has(key: string, match?: string): boolean {
    return this.#keys(key, match).length > 0;
  }

  keys(): string[] {
    return [...this.#entries.keys()];
  }

  values(key: string, match?: string): string[] {
    return this.#keys(key, match).flatMap((k) => this.#entries.get(k) ?? []);
  }

  set(key: string, value: string, match?: string): void {
    if (match !== undefined && match !== 'exact') {
      this.delete(key, match);
      this.append(key, value, match);
      return;
    }
    // The path every sender takes: no search, one map write (deleted first, so the key moves to the end as in nats-core).
    checkKey(key);
    const checked = checkedValue(value);
    this.#entries.delete(key);
    this.#entries.set(key, [checked]);
  }

  append(key: string, value: string, match?: string): void {
    checkKey(key);
    const checked = checkedValue(value);
    const stored = this.#keys(key, match)[0] ?? key;
    const values = this.#entries.get(stored);
    if (values === undefined) this.#entries.set(stored, [checked]);
    else values.push(checked);
  }

  delete(key: string, match?: string): void {
    for (const k of this.#keys(key, match)) this.#entries.delete(k);
  }

  /** The header block as nats-core writes it (`NATS/1.0`, a line per value, a blank line). */
  encode(): Uint8Array {
    if (this.#entries.size === 0) return new Uint8Array(0);
    let block = 'NATS/1.0';
    for (const [key, values] of this.#entries) for (const value of values) block += `\r\n${key}: ${value}`;
    return utf8(`${block}\r\n\r\n`);
  }
}

/** Empty headers for a message to send. */
export function outgoingHeaders(): OutgoingHeaders {
  return new OutgoingHeaders();
}
