import { describe, expect, it } from 'vitest';
import { headers, MsgHdrsImpl } from '@nats-io/transport-node';
import { isServiceError } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import { IDENTITY_HEADERS, decodeIdentityHeaders, encodeIdentityHeaders } from '../src/index.ts';

function roundTrip(identity: VerifiedIdentity): VerifiedIdentity {
  const h = headers();
  encodeIdentityHeaders(identity, (k, v) => h.set(k, v));
  // Through the real wire encoding of a NATS header block.
  const wire = MsgHdrsImpl.decode((h as MsgHdrsImpl).encode());
  return decodeIdentityHeaders((k) => (wire.has(k) ? wire.get(k) : undefined));
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return isServiceError(error) ? error.code : 'not a ServiceError';
  }
  return undefined;
}

describe('identity headers', () => {
  it('round-trips a plain identity', () => {
    const id = { tenant: 'acme', user: 'alice', session: 's1', scopes: ['admin', 'console:fleet'] };
    expect(roundTrip(id)).toEqual(id);
  });

  it('round-trips values with CR/LF, unicode, commas and colons', () => {
    const id = { tenant: 'a\r\nb', user: 'ünï 日本', session: 'x:y, z', scopes: ['a,b', 'agent_config:user', '%41'] };
    expect(roundTrip(id)).toEqual(id);
  });

  it('round-trips empty strings and no scopes', () => {
    const id = { tenant: '', user: '', session: '', scopes: [] };
    expect(roundTrip(id)).toEqual(id);
  });

  it('writes percent-encoded values under the ars-* names', () => {
    const seen = new Map<string, string>();
    encodeIdentityHeaders({ tenant: 't t', user: 'u', session: 's', scopes: ['a', 'b:c'] }, (k, v) => seen.set(k, v));
    expect(Object.fromEntries(seen)).toEqual({
      [IDENTITY_HEADERS.tenant]: 't%20t',
      [IDENTITY_HEADERS.user]: 'u',
      [IDENTITY_HEADERS.session]: 's',
      [IDENTITY_HEADERS.scopes]: 'a,b%3Ac',
    });
  });

  it('answers identity_required when the tenant header is missing', () => {
    expect(codeOf(() => decodeIdentityHeaders((k) => (k === IDENTITY_HEADERS.tenant ? undefined : 'x')))).toBe(
      'identity_required',
    );
  });

  it('answers invalid_request on a malformed percent-encoding', () => {
    expect(codeOf(() => decodeIdentityHeaders(() => '%E0%A4%A'))).toBe('invalid_request');
  });

  it('reads a missing scopes header as no scopes', () => {
    const get = (k: string) => (k === IDENTITY_HEADERS.scopes ? undefined : 'v');
    expect(decodeIdentityHeaders(get).scopes).toEqual([]);
  });
});
