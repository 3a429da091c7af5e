import { afterEach, describe, expect, it } from 'vitest';
import { ArsError, bootstrapToken, createClient, isArsError } from '../src/index.ts';
import { startLocalServer } from './local-server.ts';
import type { LocalServer } from './local-server.ts';

let server: LocalServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(status: number, body: string, contentType = 'application/json'): Promise<LocalServer> {
  server = await startLocalServer((_request, response) => {
    response.writeHead(status, body === '' ? {} : { 'content-type': contentType });
    response.end(body);
  });
  return server;
}

async function callError(baseUrl: string, method = 'runtime.info'): Promise<ArsError> {
  const error = await createClient({ baseUrl, token: 't' })
    .call(method, { identity: {} })
    .catch((caught: unknown) => caught);
  expect(isArsError(error)).toBe(true);
  return error as ArsError;
}

describe('client error mapping', () => {
  it('maps the {code, message} envelope of a non-2xx answer', async () => {
    const { baseUrl } = await serve(401, JSON.stringify({ code: 'identity_required', message: 'no bearer token' }));
    const error = await callError(baseUrl);
    expect(error).toBeInstanceOf(ArsError);
    expect({ status: error.status, code: error.code, message: error.message }).toEqual({
      status: 401,
      code: 'identity_required',
      message: 'no bearer token',
    });
  });

  it('maps a bare 405 to method_not_allowed', async () => {
    const { baseUrl } = await serve(405, '');
    expect(await callError(baseUrl)).toMatchObject({ status: 405, code: 'method_not_allowed' });
  });

  it('maps a non-2xx answer without an envelope to http_<status>', async () => {
    const { baseUrl } = await serve(502, '<html>bad gateway</html>', 'text/html');
    expect(await callError(baseUrl)).toMatchObject({ status: 502, code: 'http_502' });
  });

  it('maps an unreachable server to unavailable with status 0', async () => {
    const { baseUrl } = await serve(200, '{}');
    await server?.close();
    server = undefined;
    expect(await callError(baseUrl)).toMatchObject({ status: 0, code: 'unavailable' });
  });

  it('maps a 2xx answer that is not JSON to invalid_response', async () => {
    const { baseUrl } = await serve(200, 'not json', 'text/plain');
    expect(await callError(baseUrl)).toMatchObject({ status: 200, code: 'invalid_response' });
  });

  it('refuses a method name outside the registry locally, without a request', async () => {
    const local = await serve(200, '{}');
    expect(await callError(local.baseUrl, 'runtime.nonexistent')).toMatchObject({ code: 'unknown_method' });
    expect(local.requests).toHaveLength(0);
  });
});

describe('client requests', () => {
  it('posts JSON to the canonical route with the bearer token and session header', async () => {
    const local = await serve(200, JSON.stringify({ protocol_version: '0.1.0' }));
    const client = createClient({ baseUrl: local.baseUrl + '/', token: 'tok', session: 's1' });
    const answer = await client.call('runtime.info', { identity: {} }, { session: 's2' });
    expect(answer).toEqual({ protocol_version: '0.1.0' });
    expect(local.requests[0]).toMatchObject({
      method: 'POST',
      url: '/v1/control/runtime.info',
      body: '{"identity":{}}',
    });
    expect(local.requests[0]?.headers).toMatchObject({
      authorization: 'Bearer tok',
      'x-service-session': 's2',
      'content-type': 'application/json',
    });
  });

  it('sends no Authorization header without a token', async () => {
    const local = await serve(200, '{}');
    await createClient({ baseUrl: local.baseUrl }).call('runtime.info');
    expect(local.requests[0]?.headers['authorization']).toBeUndefined();
    expect(local.requests[0]?.headers['x-service-session']).toBeUndefined();
  });

  it('mints a bootstrap token from the dev route', async () => {
    const local = await serve(200, JSON.stringify({ token: 'abc' }));
    expect(await bootstrapToken(local.baseUrl, { tenant: 't', user: 'u', session: 's', scopes: [] })).toBe('abc');
    expect(local.requests[0]).toMatchObject({ method: 'POST', url: '/v1/dev/bootstrap.json' });
    expect(JSON.parse(local.requests[0]?.body ?? '')).toEqual({ tenant: 't', user: 'u', session: 's', scopes: [] });
  });
});
