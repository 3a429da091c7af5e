import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { digestToHex } from '../../src/blob/object-store.driver.ts';
import { assertWithinLimit, base64Length, inlineLimit } from '../../src/domain/size-limit.ts';

describe('artifact size limit', () => {
  it('accepts exactly the limit', () => {
    expect(() => assertWithinLimit(100, 100)).not.toThrow();
  });

  it('refuses one byte more with payload_too_large naming both sizes and the variable', () => {
    expect(() => assertWithinLimit(101, 100)).toThrowError(
      expect.objectContaining({
        code: 'payload_too_large',
        message: 'the artifact is 101 bytes; the largest accepted is 100 bytes (ARTIFACT_MAX_BYTES)',
      }),
    );
  });

  it('keeps inline replies inside one bus message', () => {
    const maxPayload = 1024 * 1024;
    const limit = inlineLimit(maxPayload);
    expect(base64Length(limit) + 16 * 1024).toBeLessThanOrEqual(maxPayload);
    expect(base64Length(limit + 3) + 16 * 1024).toBeGreaterThan(maxPayload);
  });
});

describe('digestToHex', () => {
  it('turns the object store digest into the lowercase hex sha256', () => {
    const hash = createHash('sha256').update('hello').digest();
    expect(digestToHex(`SHA-256=${hash.toString('base64url')}=`)).toBe(hash.toString('hex'));
  });

  it('refuses a digest of another kind', () => {
    expect(() => digestToHex('MD5=abc')).toThrow(/unsupported/);
  });
});
