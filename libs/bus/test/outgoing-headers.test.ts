import { headers } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { outgoingHeaders } from '../src/outgoing-headers.ts';

/** nats-core's implementation has `encode` (what publish calls); its interface type does not say so. */
const encoded = (h: ReturnType<typeof headers>): Uint8Array => (h as unknown as { encode(): Uint8Array }).encode();

const decoder = new TextDecoder();

describe('outgoing headers', () => {
  it('encode byte for byte what nats-core encodes, after the same calls', () => {
    const ours = outgoingHeaders();
    const theirs = headers();
    const calls: [string, string][] = [
      ['Nats-Msg-Id', 'evt-1'],
      ['ars-source', 'run-executor'],
      ['traceparent', '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'],
      ['ars-tenant', encodeURIComponent('acme corp/é')],
      ['Nats-Msg-Id', 'evt-2'],
      ['x-padded', '  spaced value  '],
    ];
    for (const [key, value] of calls) {
      ours.set(key, value);
      theirs.set(key, value);
    }
    ours.append('x-multi', 'a');
    theirs.append('x-multi', 'a');
    ours.append('x-multi', 'b');
    theirs.append('x-multi', 'b');
    expect(decoder.decode(ours.encode())).toBe(decoder.decode(encoded(theirs)));
    expect(Array.from(ours.encode())).toEqual(Array.from(encoded(theirs)));
    expect(ours.get('Nats-Msg-Id')).toBe('evt-2');
    expect(ours.values('x-multi')).toEqual(['a', 'b']);
    expect(ours.last('x-multi')).toBe('b');
    expect(ours.has('nats-msg-id')).toBe(false);
    expect(ours.has('nats-msg-id', 'insensitive')).toBe(true);
    ours.delete('x-multi');
    // A key set again moves to the end, as in nats-core (delete, then append).
    expect(ours.keys()).toEqual(['ars-source', 'traceparent', 'ars-tenant', 'Nats-Msg-Id', 'x-padded']);
  });

  it('encode nothing when empty, as nats-core does', () => {
    expect(outgoingHeaders().encode()).toHaveLength(0);
    expect(encoded(headers())).toHaveLength(0);
  });

  it('refuse what nats-core refuses: a bad character in a name, CR or LF in a value', () => {
    for (const key of ['a:b', 'a b', 'é']) {
      expect(() => outgoingHeaders().set(key, 'v')).toThrow(/not a valid character/);
      expect(() => headers().set(key, 'v')).toThrow(/not a valid character/);
    }
    for (const value of ['a\r\nInjected: 1', 'a\nb']) {
      expect(() => outgoingHeaders().set('k', value)).toThrow(/cannot contain/);
      expect(() => headers().set('k', value)).toThrow(/cannot contain/);
    }
  });
});
