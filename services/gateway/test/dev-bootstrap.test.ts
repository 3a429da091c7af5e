import { afterEach, describe, expect, it } from 'vitest';
import { createDevIssuer } from '@ars/auth';
import { bodyFor, routeOf } from './support/bodies.ts';
import { createHarness } from './support/harness.ts';
import type { Harness } from './support/harness.ts';

const BOOTSTRAP = '/v1/dev/bootstrap.json';

let h: Harness | undefined;

afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** A dev-mode gateway: a real ephemeral ES256 issuer mints and verifies. */
async function devGateway(): Promise<Harness> {
  const issuer = await createDevIssuer();
  h = await createHarness({ devIssuer: issuer, verifier: issuer.verifier });
  return h;
}

const bootstrap = (gateway: Harness, body?: unknown, options: { host?: string; remoteAddress?: string } = {}) =>
  gateway.app.inject({
    method: 'POST',
    url: BOOTSTRAP,
    headers: {
      host: options.host ?? 'localhost:8080',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    remoteAddress: options.remoteAddress ?? '127.0.0.1',
  });

/** Uses a minted token and returns the identity the gateway forwarded. */
async function identityOf(gateway: Harness, token: string) {
  const response = await gateway.post(routeOf('tasks.list'), bodyFor('tasks.list'), { token });
  expect(response.statusCode, response.body).toBe(200);
  return gateway.rpc.last?.identity;
}

describe('dev bootstrap', () => {
  it('mints the default admin token for {}', async () => {
    const gateway = await devGateway();
    const response = await bootstrap(gateway, {});
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 3600,
      tenant: 'dev',
      user: 'dev',
      session: 'dev',
      scopes: ['admin', 'console:fleet'],
    });
    expect(await identityOf(gateway, body.access_token)).toEqual({
      tenant: 'dev',
      user: 'dev',
      session: 'dev',
      scopes: ['admin', 'console:fleet'],
    });
  });

  it('mints the default admin token when no body is sent', async () => {
    const gateway = await devGateway();
    const response = await bootstrap(gateway);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ tenant: 'dev', scopes: ['admin', 'console:fleet'] });
  });

  it('mints a scopeless token for an explicit empty scopes list', async () => {
    const gateway = await devGateway();
    const response = await bootstrap(gateway, { scopes: [] });
    expect(response.json().scopes).toEqual([]);
    expect((await identityOf(gateway, response.json().access_token))?.scopes).toEqual([]);
  });

  it('overrides the identity with a full triple', async () => {
    const gateway = await devGateway();
    const response = await bootstrap(gateway, {
      tenant: 'acme',
      user: 'ada',
      session: 'conv-1',
      scopes: ['console:fleet'],
    });
    expect(response.json()).toMatchObject({
      tenant: 'acme',
      user: 'ada',
      session: 'conv-1',
      scopes: ['console:fleet'],
    });
    expect(await identityOf(gateway, response.json().access_token)).toEqual({
      tenant: 'acme',
      user: 'ada',
      session: 'conv-1',
      scopes: ['console:fleet'],
    });
  });

  it.each(['tenant_id', 'user_id', 'session_id', 'role'])(
    'refuses the unknown member %s with 400 naming it',
    async (member) => {
      const gateway = await devGateway();
      const response = await bootstrap(gateway, { [member]: 'x' });
      expect(response.statusCode).toBe(400);
      expect(response.json().code).toBe('invalid_request');
      expect(response.json().message).toContain(member);
    },
  );

  it('refuses a non-loopback peer with a flat 403', async () => {
    const gateway = await devGateway();
    const response = await bootstrap(gateway, {}, { remoteAddress: '10.1.2.3' });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual({ code: 'forbidden', message: expect.any(String) });
  });

  it('refuses a loopback peer naming a non-local Host with a flat 403', async () => {
    const gateway = await devGateway();
    const response = await bootstrap(gateway, {}, { host: 'gateway.example.com' });
    expect(response.statusCode).toBe(403);
    expect(response.json().code).toBe('forbidden');
  });

  it.each(['localhost', '127.0.0.1:8080', 'LOCALHOST:1', '[::1]:8080'])('accepts the local Host %s', async (host) => {
    const gateway = await devGateway();
    expect((await bootstrap(gateway, {}, { host })).statusCode).toBe(200);
  });

  it('accepts an IPv6 loopback peer', async () => {
    const gateway = await devGateway();
    expect((await bootstrap(gateway, {}, { remoteAddress: '::1' })).statusCode).toBe(200);
  });

  it('refuses the loopback check before reading the body', async () => {
    const gateway = await devGateway();
    const response = await gateway.app.inject({
      method: 'POST',
      url: BOOTSTRAP,
      headers: { host: 'evil.test', 'content-type': 'application/json' },
      payload: '{not json',
    });
    expect(response.statusCode).toBe(403);
  });

  it('answers malformed JSON with 400 invalid_request', async () => {
    const gateway = await devGateway();
    const response = await gateway.app.inject({
      method: 'POST',
      url: BOOTSTRAP,
      headers: { host: 'localhost', 'content-type': 'application/json' },
      payload: '{not json',
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().code).toBe('invalid_request');
  });

  it('answers another verb with a bare 405', async () => {
    const gateway = await devGateway();
    const response = await gateway.app.inject({ method: 'GET', url: BOOTSTRAP, headers: { host: 'localhost' } });
    expect(response.statusCode).toBe(405);
    expect(response.body).toBe('');
  });

  it('does not exist in production mode', async () => {
    h = await createHarness();
    const response = await bootstrap(h, {});
    expect(response.statusCode).toBe(404);
    expect(response.json().code).toBe('unknown_method');
  });
});
