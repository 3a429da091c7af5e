import { headers } from '@nats-io/transport-node';
import type { MsgHdrs } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { headerOf, valueInBlock } from '../src/incoming-headers.ts';

/** A received message as nats-core's MsgImpl holds it: the raw header block and payload, the block's length. */
function rawMessage(block: string, payload = '{"a":1}', decoded?: MsgHdrs) {
  const bytes = Buffer.from(block + payload, 'utf8');
  const hdr = Buffer.byteLength(block, 'utf8');
  return {
    _msg: { hdr },
    _rdata: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength),
    ...(decoded === undefined ? {} : { _headers: decoded }),
    // As nats-core's getter: the decoded headers once decoded, else what it decodes from the same bytes.
    get headers(): MsgHdrs {
      return decoded ?? decodeWithNatsCore(block);
    },
  };
}

/** nats-core's decoding of a block (the class behind `msg.headers`). */
function decodeWithNatsCore(block: string): MsgHdrs {
  const impl = headers().constructor as unknown as { decode(bytes: Uint8Array): MsgHdrs };
  return impl.decode(Buffer.from(block, 'utf8'));
}

const BLOCKS = [
  'NATS/1.0\r\nars-tenant: acme\r\nars-user: u%20one\r\nars-scopes: runs%3Aread,runs%3Awrite\r\n\r\n',
  'NATS/1.0\r\ntraceparent:   00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01  \r\nars-run: r1\r\n\r\n',
  'NATS/1.0 503\r\n\r\n',
  'NATS/1.0\r\nars-run: first\r\nars-run: second\r\nx-empty:\r\nx-colon: a:b:c\r\nx-utf8: ü\r\n\r\n',
];
const KEYS = [
  'ars-tenant',
  'ars-user',
  'ars-scopes',
  'traceparent',
  'ars-run',
  'x-empty',
  'x-colon',
  'x-utf8',
  'run',
  'ARS-TENANT',
  'missing',
];

describe('header values read from the raw block', () => {
  it('are what nats-core decodes (first value, trimmed; exact names)', () => {
    for (const block of BLOCKS) {
      const decoded = decodeWithNatsCore(block);
      for (const key of KEYS) {
        const expected = decoded.has(key) ? decoded.get(key) : undefined;
        expect({ block, key, value: headerOf(rawMessage(block), key) }).toEqual({ block, key, value: expected });
        expect(valueInBlock(block, key)).toBe(expected);
      }
    }
  });

  it('are found through a wrapper holding the message (a JetStream message, a service request)', () => {
    const wrapped = { msg: rawMessage(BLOCKS[0] as string), headers: undefined };
    expect(headerOf(wrapped, 'ars-user')).toBe('u%20one');
  });

  it('come from msg.headers for a message of another shape, or one decoded already', () => {
    const h = headers();
    h.set('ars-run', 'from-decoded');
    expect(headerOf({ headers: h }, 'ars-run')).toBe('from-decoded');
    expect(headerOf({ headers: h }, 'missing')).toBeUndefined();
    expect(headerOf(rawMessage('NATS/1.0\r\nars-run: raw\r\n\r\n', '', h), 'ars-run')).toBe('from-decoded');
    expect(headerOf({}, 'ars-run')).toBeUndefined();
    expect(headerOf(rawMessage('', '{"no":"headers"}'), 'ars-run')).toBeUndefined();
  });
});
