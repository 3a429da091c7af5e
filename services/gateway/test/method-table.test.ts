import { describe, expect, it } from 'vitest';
import { METHODS, isServiceError } from '@ars/contracts';
import { gatewayEndpoints } from '../src/local/index.ts';

const identity = { tenant: 't', user: 'u', session: 's', scopes: [] };

describe('gateway endpoints on the services API', () => {
  const endpoints = gatewayEndpoints(METHODS, {
    'runtime.info': async () => ({ ok: true }),
  });

  it('registers every registry method the gateway owns', () => {
    const owned = METHODS.filter((def) => def.service === 'gateway').map((def) => def.name);
    expect(endpoints.map((endpoint) => endpoint.method)).toEqual(owned);
  });

  it('marks a built method implemented and the rest not', () => {
    const implemented = endpoints.filter((endpoint) => endpoint.implemented).map((endpoint) => endpoint.method);
    expect(implemented).toEqual(['runtime.info']);
  });

  it('answers an unbuilt method with unimplemented', async () => {
    const events = endpoints.find((endpoint) => endpoint.method === 'events.list');
    const error = await events
      ?.handler({ method: 'events.list', identity, body: { identity: {} } })
      .catch((e: unknown) => e);
    expect(isServiceError(error) && error.code).toBe('unimplemented');
  });

  it('validates the body before a built handler runs', async () => {
    const info = endpoints.find((endpoint) => endpoint.method === 'runtime.info');
    const error = await info
      ?.handler({ method: 'runtime.info', identity, body: { identity: {}, extra: 1 } })
      .catch((e: unknown) => e);
    expect(isServiceError(error) && error.code).toBe('invalid_request');
    await expect(info?.handler({ method: 'runtime.info', identity, body: { identity: {} } })).resolves.toEqual({
      ok: true,
    });
  });
});
