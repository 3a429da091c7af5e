import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decodeKeyEncryptionKey, openBound, openSecret, sealBound, sealSecret } from '../../src/domain/sealing.ts';

const kek = randomBytes(32);

describe('sealing provider keys', () => {
  it('round-trips a secret for its tenant and provider', () => {
    const sealed = sealSecret(kek, 'sk-secret', 't', 'openai');
    expect(sealed.ciphertext).not.toContain('sk-secret');
    expect(openSecret(kek, sealed, 't', 'openai')).toBe('sk-secret');
  });

  it('refuses a record moved to another tenant', () => {
    const sealed = sealSecret(kek, 'sk-secret', 't', 'openai');
    expect(() => openSecret(kek, sealed, 'other', 'openai')).toThrow();
  });

  it('refuses another key-encryption key', () => {
    const sealed = sealSecret(kek, 'sk-secret', 't', 'openai');
    expect(() => openSecret(randomBytes(32), sealed, 't', 'openai')).toThrow();
  });

  it('decodes 64 hex digits or base64 of 32 bytes, nothing else', () => {
    expect(decodeKeyEncryptionKey(kek.toString('hex'))).toEqual(kek);
    expect(decodeKeyEncryptionKey(kek.toString('base64'))).toEqual(kek);
    expect(decodeKeyEncryptionKey(kek.toString('base64url'))).toEqual(kek);
    expect(decodeKeyEncryptionKey(randomBytes(16).toString('base64'))).toBeUndefined();
    expect(decodeKeyEncryptionKey('not a key')).toBeUndefined();
  });
});

describe('sealing bound secrets', () => {
  it('opens only for the binding it was sealed for', () => {
    const sealed = sealBound(kek, 'access-token', ['t', 'oauth_grant', 'binding-1']);
    expect(openBound(kek, sealed, ['t', 'oauth_grant', 'binding-1'])).toBe('access-token');
    expect(() => openBound(kek, sealed, ['t', 'oauth_grant', 'binding-2'])).toThrow();
    expect(() => openBound(kek, sealed, ['t', 'oauth_flow', 'binding-1'])).toThrow();
  });

  it('never opens a provider key as a bound secret of the same names', () => {
    const sealed = sealSecret(kek, 'sk-secret', 't', 'openai');
    expect(() => openBound(kek, sealed, ['t', 'openai', ''])).toThrow();
  });
});
