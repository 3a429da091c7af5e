import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  authRejectionReason,
  fingerprintKey,
  isRevocationLive,
  parseRevocationEntry,
  revocationKeys,
  tokenFingerprint,
  tokenIdKey,
  tokenRevoked,
} from '../src/index.ts';

const ENTRY = {
  reason: 'rotated',
  revoked_at: '2030-01-01T00:00:00.000Z',
  expires_at: '2030-01-01T01:00:00.000Z',
  tenant: 't1',
  user: 'u1',
  rotation_id: 'r-1',
  replaced_by: 'jti-new',
};

describe('revocation keys', () => {
  it('fingerprints a token as the lowercase hex SHA-256 of its compact form', () => {
    const token = 'aaa.bbb.ccc';
    expect(tokenFingerprint(token)).toBe(createHash('sha256').update(token).digest('hex'));
    expect(tokenFingerprint(token)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('names the fingerprint key fp.<hex>', () => {
    expect(fingerprintKey('ab'.repeat(32))).toBe(`fp.${'ab'.repeat(32)}`);
  });

  it('names the token-id key jti.<unpadded base64url of the UTF-8 id>', () => {
    expect(tokenIdKey('a/b+c?')).toBe(`jti.${Buffer.from('a/b+c?').toString('base64url')}`);
    expect(tokenIdKey('x')).toBe('jti.eA');
  });

  it('lists the fingerprint key, then the token-id key when the token has a jti', () => {
    const fingerprint = 'cd'.repeat(32);
    expect(revocationKeys({ fingerprint, jti: 'id-1' })).toEqual([fingerprintKey(fingerprint), tokenIdKey('id-1')]);
  });

  it('lists only the fingerprint key for a token without a jti', () => {
    const fingerprint = 'cd'.repeat(32);
    expect(revocationKeys({ fingerprint })).toEqual([fingerprintKey(fingerprint)]);
    expect(revocationKeys({ fingerprint, jti: '' })).toEqual([fingerprintKey(fingerprint)]);
  });
});

describe('parseRevocationEntry', () => {
  it('reads the entry governance writes', () => {
    expect(parseRevocationEntry(JSON.stringify(ENTRY))).toEqual(ENTRY);
  });

  it.each([
    ['not JSON', '{'],
    ['an array', '[]'],
    ['a missing reason', JSON.stringify({ ...ENTRY, reason: undefined })],
    ['an unreadable expires_at', JSON.stringify({ ...ENTRY, expires_at: 'soon' })],
    ['a missing tenant', JSON.stringify({ ...ENTRY, tenant: undefined })],
  ])('answers undefined for %s', (_label, text) => {
    expect(parseRevocationEntry(text)).toBeUndefined();
  });
});

describe('isRevocationLive', () => {
  it('keeps an entry until the revoked token expires', () => {
    const expiry = Date.parse(ENTRY.expires_at);
    expect(isRevocationLive(ENTRY, expiry - 1)).toBe(true);
    expect(isRevocationLive(ENTRY, expiry)).toBe(false);
  });
});

describe('tokenRevoked', () => {
  it('is a 401 auth_rejected whose reason is revoked', () => {
    const error = tokenRevoked();
    expect(error).toMatchObject({ code: 'auth_rejected', status: 401 });
    expect(authRejectionReason(error)).toBe('revoked');
  });
});
