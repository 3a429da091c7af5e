import { describe, expect, it } from 'vitest';
import { brokerEndpoint, isBrokerUrl } from '../../src/oauth/broker-grants.ts';

describe('isBrokerUrl', () => {
  it('takes an http or https URL for an external credential broker', () => {
    expect(isBrokerUrl('https://broker.example.com/credentials')).toBe(true);
    expect(isBrokerUrl('http://127.0.0.1:9000/credentials?pool=a')).toBe(true);
  });

  it('keeps the interactive flow for any other value: a name, a vault reference, another scheme', () => {
    for (const value of ['broker', 'vault://oauth/acme', 'ftp://broker.example.com/', 'github']) {
      expect(isBrokerUrl(value), value).toBe(false);
    }
  });
});

describe('brokerEndpoint', () => {
  it('drops the query, the fragment and any userinfo', () => {
    expect(brokerEndpoint('https://u:p@broker.example.com:8443/v1/credentials?pool=a&key=s#x')).toBe(
      'https://broker.example.com:8443/v1/credentials',
    );
  });
});
