import { describe, expect, it } from 'vitest';
import { audienceVerified } from '../../src/oauth/token-audience.ts';

const RESOURCE = 'https://mcp.example.com/mcp';
const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
const jwt = (payload: object) => `${part({ alg: 'RS256', typ: 'JWT' })}.${part(payload)}.c2ln`;

describe('audienceVerified', () => {
  it('is false when no resource indicator was sent', () => {
    expect(audienceVerified('opaque-token', undefined)).toBe(false);
  });

  it('is true for an opaque token requested with the resource indicator', () => {
    expect(audienceVerified('opaque-token', RESOURCE)).toBe(true);
  });

  it("checks a JWT's aud (a string or a list, a trailing slash aside)", () => {
    expect(audienceVerified(jwt({ aud: RESOURCE }), RESOURCE)).toBe(true);
    expect(audienceVerified(jwt({ aud: ['other', `${RESOURCE}/`] }), RESOURCE)).toBe(true);
    expect(audienceVerified(jwt({ aud: 'https://other.example.com/' }), RESOURCE)).toBe(false);
    expect(audienceVerified(jwt({ sub: 'alice' }), RESOURCE)).toBe(false);
  });
});
