import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { METHODS } from '@ars/contracts';
import { LOCAL_METHODS } from '../src/local/index.ts';
import { createHarness } from './support/harness.ts';
import type { Harness } from './support/harness.ts';
import { minimalBody } from '@ars/testkit';

let h: Harness;
let token: string;

beforeAll(async () => {
  h = await createHarness();
  // Every claim of the vocabulary, so that only routing decides.
  token = h.token({ scopes: ['admin', 'console:fleet', 'agent_config:user'] });
});

afterAll(async () => {
  await h.close();
});

beforeEach(() => {
  h.rpc.calls.length = 0;
});

const LOCAL = new Set<string>(LOCAL_METHODS);
/** search.query fans out to the owners of the other searches. */
const FAN_OUT: Readonly<Record<string, readonly (readonly [string, string])[]>> = {
  'search.query': [
    ['run-executor', 'search.tasks'],
    ['session', 'search.sessions'],
    ['artifact', 'search.artifacts'],
  ],
};

const ROWS = METHODS.flatMap((def) => def.routes.map((route) => [def.name, route, def] as const));

describe('routing table', () => {
  it('holds the 126 registry methods', () => {
    expect(METHODS).toHaveLength(126);
  });

  it('builds a schema-valid minimal body for every method', () => {
    const invalid = METHODS.filter((def) => def.httpMethod === 'POST' && !minimalBody(def).valid).map(
      (def) => def.name,
    );
    expect(invalid).toEqual([]);
  });

  it.each(ROWS)('routes %s at %s to its owner', async (name, route, def) => {
    if (def.httpMethod === 'GET') {
      // The event stream never ends on its own: read its head, then hang up.
      const abort = new AbortController();
      const response = await h.app.inject({
        method: 'GET',
        url: route,
        headers: { authorization: `Bearer ${token}` },
        payloadAsStream: true,
        signal: abort.signal,
      });
      abort.abort();
      expect(response.statusCode).toBe(200);
      expect(String(response.headers['content-type'])).toMatch(/^text\/event-stream/);
      expect(h.rpc.calls).toEqual([]);
      return;
    }
    const response = await h.post(route, minimalBody(def).body, { token });
    if (name === 'auth.rotate_token') {
      // Served at the edge for governance; this harness has no key to mint with.
      expect(response.statusCode).toBe(501);
      expect(h.rpc.calls).toEqual([]);
      return;
    }
    if (def.service !== 'gateway') {
      expect(response.statusCode, response.body).toBe(200);
      expect(h.rpc.calls.map((call) => [call.service, call.method])).toEqual([[def.service, name]]);
      return;
    }
    expect(h.rpc.calls.map((call) => [call.service, call.method])).toEqual(FAN_OUT[name] ?? []);
    if (LOCAL.has(name)) {
      expect(response.statusCode, response.body).toBe(200);
    } else {
      expect(response.statusCode).toBe(501);
      expect(response.json()).toMatchObject({ code: 'unimplemented' });
    }
  });

  it('serves the OpenAPI document next to the routes', async () => {
    const response = await h.send('GET', '/openapi.json', undefined, { token: null });
    expect(response.statusCode).toBe(200);
    const paths = Object.keys(response.json().paths ?? {});
    for (const [, route] of ROWS) expect(paths).toContain(route);
  });
});
