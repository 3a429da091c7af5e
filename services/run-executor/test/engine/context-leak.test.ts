import { describe, expect, it } from 'vitest';
import { redactSecrets } from '../../src/engine/context-leak.ts';

describe('redactSecrets', () => {
  it('replaces a PEM private key block whole', () => {
    const pem = '-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nAAAA\n-----END RSA PRIVATE KEY-----';
    expect(redactSecrets(`a ${pem} b`)).toEqual({ text: 'a [REDACTED:private_key] b', removedBytes: pem.length });
  });

  it('replaces a bearer token, a JWT and provider API keys', () => {
    const { text } = redactSecrets(
      'Authorization: Bearer abcdefghijklmnop1234 jwt eyJhbGciOiJI.eyJzdWIiOiIx.c2lnbmF0dXJl ' +
        'gh ghp_abcdefghijklmnopqrstu aws AKIAABCDEFGHIJKLMNOP',
    );
    expect(text).toBe(
      'Authorization: [REDACTED:bearer_token] jwt [REDACTED:jwt] gh [REDACTED:api_key] aws [REDACTED:api_key]',
    );
  });

  it('leaves hashes, ids and short words alone', () => {
    const plain = 'sha 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 task-sk-1 bearer x';
    expect(redactSecrets(plain)).toEqual({ text: plain, removedBytes: 0 });
  });
});
