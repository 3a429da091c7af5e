import { describe, expect, it } from 'vitest';
import { audienceVerified, brokerAudienceVerified } from '../../src/oauth/token-audience.ts';

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

describe('brokerAudienceVerified', () => {
  it("is true when the broker's audience names the resource (a string or a list)", () => {
    expect(brokerAudienceVerified('opaque', RESOURCE, RESOURCE)).toBe(true);
    expect(brokerAudienceVerified('opaque', ['github', `${RESOURCE}/`], RESOURCE)).toBe(true);
  });

  it("is true for a JWT whose aud names the resource, whatever the broker's audience", () => {
    expect(brokerAudienceVerified(jwt({ aud: RESOURCE }), 'github', RESOURCE)).toBe(true);
  });

  it('is false for an opaque credential of another audience or none', () => {
    expect(brokerAudienceVerified('opaque', 'github', RESOURCE)).toBe(false);
    expect(brokerAudienceVerified('opaque', undefined, RESOURCE)).toBe(false);
    expect(brokerAudienceVerified(jwt({ aud: 'https://other.example.com/' }), undefined, RESOURCE)).toBe(false);
  });
});
