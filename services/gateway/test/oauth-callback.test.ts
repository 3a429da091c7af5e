import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OAUTH_COMPLETE, refuse, ServiceError } from '@ars/contracts';
import { createLogger } from '@ars/telemetry';
import { prefersJson } from '../src/routes/oauth-callback.routes.ts';
import { createHarness } from './support/harness.ts';
import type { Harness } from './support/harness.ts';

const CALLBACK = '/v1/oauth/callback';
const COMPLETED = {
  outcome: 'completed',
  server_id: 'gh',
  binding_id: 'mcpb_1',
  task_id: 'task-1',
  run_notified: true,
};

describe('GET /v1/oauth/callback', () => {
  let h: Harness;
  let lines: string[];

  beforeEach(async () => {
    lines = [];
    const logger = createLogger({
      name: 'gateway-test',
      level: 'info',
      destination: { write: (l: string) => void lines.push(l) },
    });
    h = await createHarness({ logger });
    h.rpc.respond = async () => COMPLETED;
  });
  afterEach(async () => {
    await h.close();
  });

  const get = (query: string, headers: Record<string, string> = {}) =>
    h.app.inject({ method: 'GET', url: `${CALLBACK}${query}`, headers });

  it('relays state and code to _oauth.complete under the gateway service identity, with no bearer token, and answers a page', async () => {
    const response = await get('?state=s-1&code=c-1');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.body).toContain('Authorization complete. You can close this window.');
    expect(h.rpc.calls).toEqual([
      {
        service: 'agent-registry',
        method: '_oauth.complete',
        identity: { tenant: '_system', user: 'gateway', session: '_service', scopes: [] },
        body: { state: 's-1', code: 'c-1' },
      },
    ]);
  });

  it('relays the members _oauth.complete takes (iss included, for RFC 9207) and ignores others such as session_state', async () => {
    const response = await get('?state=s-1&code=c-1&iss=https%3A%2F%2Fas.example%2F&session_state=xyz&scope=a%20b');
    expect(response.statusCode).toBe(200);
    expect(h.rpc.last?.body).toEqual({ state: 's-1', code: 'c-1', iss: 'https://as.example/' });
  });

  it('answers the completion as JSON when Accept prefers JSON', async () => {
    const response = await get('?state=s-1&code=c-1', { accept: 'application/json' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual(COMPLETED);
  });

  it("relays the authorization server's error and answers the denied page", async () => {
    h.rpc.respond = async () => ({ ...COMPLETED, outcome: 'denied' });
    const response = await get('?state=s-1&error=access_denied&error_description=no%20thanks');
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain('Authorization was denied');
    expect(h.rpc.last?.body).toEqual({ state: 's-1', error: 'access_denied', error_description: 'no thanks' });
  });

  it('answers an unknown, used or expired state 404 not_found in the envelope', async () => {
    h.rpc.respond = async () => {
      throw refuse(OAUTH_COMPLETE, 'unknown_state', 'no authorization is waiting for this state');
    };
    const response = await get('?state=gone&code=c');
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ code: 'not_found' });
  });

  it('answers a code the server refused 409 conflict', async () => {
    h.rpc.respond = async () => {
      throw refuse(OAUTH_COMPLETE, 'exchange_failed', 'invalid_grant');
    };
    expect((await get('?state=s&code=c')).statusCode).toBe(409);
  });

  it('answers 503 unavailable when agent-registry or the authorization server does not answer', async () => {
    h.rpc.respond = async () => {
      throw new ServiceError('unavailable', 'service agent-registry is not available for _oauth.complete');
    };
    const response = await get('?state=s&code=c');
    expect(response.statusCode).toBe(503);
    expect(response.json()).toMatchObject({ code: 'unavailable' });
  });

  it('refuses a callback without state, with neither code nor error, or with an oversized code 400, asking nothing', async () => {
    for (const query of ['?code=c', '?state=s', '', `?state=s&code=${'x'.repeat(5_000)}`, '?state=&code=c']) {
      const response = await get(query);
      expect(response.statusCode, query).toBe(400);
      expect(response.json()).toMatchObject({ code: 'invalid_request' });
    }
    expect(h.rpc.calls).toEqual([]);
  });

  it('logs the callback without its code and state', async () => {
    await get('?state=secret-state&code=secret-code');
    h.rpc.respond = async () => {
      throw new ServiceError('unavailable', 'down');
    };
    await get('?state=secret-state&code=secret-code');
    const log = lines.join('\n');
    expect(log).toContain('/v1/oauth/callback?[redacted]');
    expect(log).not.toContain('secret-code');
    expect(log).not.toContain('secret-state');
  });
});

describe('prefersJson', () => {
  it('prefers HTML for a browser, without an Accept header and for */*', () => {
    expect(prefersJson(undefined)).toBe(false);
    expect(prefersJson('*/*')).toBe(false);
    expect(prefersJson('text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8')).toBe(false);
  });

  it('prefers JSON when JSON ranks above HTML', () => {
    expect(prefersJson('application/json')).toBe(true);
    expect(prefersJson('text/html;q=0.5, application/json')).toBe(true);
    expect(prefersJson('application/problem+json')).toBe(true);
  });
});
