import { describe, expect, it } from 'vitest';
import { redirectUriOf } from '../../src/oauth/index.ts';

describe('redirectUriOf', () => {
  it('puts the callback under the gateway base URL', () => {
    expect(redirectUriOf('http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080/v1/oauth/callback');
    expect(redirectUriOf('https://gw.example/')).toBe('https://gw.example/v1/oauth/callback');
  });

  it('keeps the path prefix of a gateway behind a proxy', () => {
    expect(redirectUriOf('https://gw.example/ars')).toBe('https://gw.example/ars/v1/oauth/callback');
    expect(redirectUriOf('https://gw.example/ars/')).toBe('https://gw.example/ars/v1/oauth/callback');
  });
});
