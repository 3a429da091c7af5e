import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Base64Decoder, Base64Encoder, base64Length } from '../src/artifacts/base64.ts';
import { PutBodyScanner } from '../src/artifacts/put-body-scanner.ts';

function decodeInPieces(text: string, size: number): Buffer {
  const decoder = new Base64Decoder();
  const out: Buffer[] = [];
  for (let i = 0; i < text.length; i += size) out.push(decoder.push(text.slice(i, i + size)));
  out.push(decoder.end());
  return Buffer.concat(out);
}

function scan(text: string, size = text.length, restLimit = 1_000_000) {
  const scanner = new PutBodyScanner(restLimit);
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(...scanner.push(text.slice(i, i + size)));
  return { rest: scanner.end(), content: pieces.join(''), seen: scanner.contentSeen };
}

describe('Base64Decoder', () => {
  it.each([1, 2, 3, 4, 5, 7, 64])('decodes standard base64 fed in pieces of %i characters', (size) => {
    for (const length of [0, 1, 2, 3, 4, 100, 101, 102]) {
      const bytes = randomBytes(length);
      expect(decodeInPieces(bytes.toString('base64'), size)).toEqual(bytes);
    }
  });

  it.each([
    ['a character outside the alphabet', 'QUJD#A=='],
    ['url-safe characters', 'ab-_'],
    ['a length that is not a multiple of four', 'QUJDR'],
    ['three padding characters', 'QQ==='],
    ['padding in the middle', 'QQ==QUJD'],
    ['whitespace', 'QUJD QUJD'],
  ])('refuses %s with 400 invalid_request', (_label, text) => {
    expect(() => decodeInPieces(text, 3)).toThrow(expect.objectContaining({ code: 'invalid_request' }));
  });
});

describe('Base64Encoder', () => {
  it('encodes bytes arriving in pieces exactly like one encoding of the whole', () => {
    const bytes = randomBytes(1000);
    for (const size of [1, 2, 3, 5, 128]) {
      const encoder = new Base64Encoder();
      let text = '';
      for (let i = 0; i < bytes.length; i += size) text += encoder.push(bytes.subarray(i, i + size));
      text += encoder.end();
      expect(text).toBe(bytes.toString('base64'));
      expect(text.length).toBe(base64Length(bytes.length));
    }
  });
});

describe('PutBodyScanner', () => {
  const body = JSON.stringify({
    identity: { tenant: 't' },
    content_base64: 'QUJD+/8=',
    mime_type: 'a/b',
    n: [1, { x: '}' }],
  });

  it.each([1, 2, 5, 1000])(
    'hands out the content value and keeps the rest with "" in its place (pieces of %i)',
    (size) => {
      const { rest, content, seen } = scan(body, size);
      expect(content).toBe('QUJD+/8=');
      expect(seen).toBe(true);
      expect(JSON.parse(rest)).toEqual({
        identity: { tenant: 't' },
        content_base64: '',
        mime_type: 'a/b',
        n: [1, { x: '}' }],
      });
    },
  );

  it('unescapes an escaped solidus, even split across pieces', () => {
    expect(scan('{"content_base64":"ab\\/c"}', 3).content).toBe('ab/c');
  });

  it('refuses any other escape in the content', () => {
    expect(() => scan('{"content_base64":"ab\\u0041"}')).toThrow(expect.objectContaining({ code: 'invalid_request' }));
  });

  it('recognises the member name written with escapes', () => {
    expect(scan('{"content\\u005fbase64":"QUJD"}').content).toBe('QUJD');
  });

  it('leaves a content_base64 member of a nested object alone', () => {
    const { content, seen, rest } = scan('{"x":{"content_base64":"QUJD"}}');
    expect([content, seen]).toEqual(['', false]);
    expect(JSON.parse(rest)).toEqual({ x: { content_base64: 'QUJD' } });
  });

  it('keeps a non-string content value for the schema to refuse', () => {
    expect(JSON.parse(scan('{"content_base64":12}').rest)).toEqual({ content_base64: 12 });
  });

  it.each([
    ['an array', '[1]'],
    ['an unfinished object', '{"a":1'],
    ['an unfinished content value', '{"content_base64":"QUJD'],
    ['text after the object', '{"a":1} x'],
    ['an empty body', ''],
  ])('refuses %s with 400', (_label, text) => {
    expect(() => scan(text)).toThrow(expect.objectContaining({ code: 'invalid_request' }));
  });

  it('refuses content_base64 given twice', () => {
    expect(() => scan('{"content_base64":"QQ==","content_base64":"QQ=="}')).toThrow(/more than once/);
  });

  it('refuses members besides the content past the limit with 413', () => {
    expect(() => scan(JSON.stringify({ name: 'x'.repeat(200), content_base64: '' }), 1000, 100)).toThrow(
      expect.objectContaining({ code: 'payload_too_large' }),
    );
  });

  it('previews the members before the content once the content began', () => {
    const scanner = new PutBodyScanner(1000);
    scanner.push('{"identity":{"tenant":"t2"},');
    expect(scanner.preview()).toBeUndefined();
    scanner.push('"content_base64":"QUJ');
    expect(JSON.parse(scanner.preview()!)).toEqual({ identity: { tenant: 't2' }, content_base64: '' });
    scanner.push('D","mime_type":"a/b"}');
    expect(JSON.parse(scanner.preview()!)).toEqual({ identity: { tenant: 't2' }, content_base64: '' });
  });
});
