import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServiceError } from '@ars/contracts';
import { createMemoryLogger } from '@ars/telemetry';
import { bodyFor, routeOf } from './support/bodies.ts';
import { createHarness } from './support/harness.ts';
import type { Harness } from './support/harness.ts';

let h: Harness;

beforeEach(async () => {
  h = await createHarness({ bodyLimitBytes: 64 * 1024 });
});

afterEach(async () => {
  await h.close();
});

/** An error response carries exactly the envelope. */
function expectEnvelope(
  response: { statusCode: number; json(): unknown; headers: Record<string, unknown> },
  status: number,
  code: string,
) {
  expect(response.statusCode).toBe(status);
  expect(String(response.headers['content-type'])).toMatch(/^application\/json/);
  const body = response.json() as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(['code', 'message']);
  expect(body.code).toBe(code);
  expect(typeof body.message).toBe('string');
}

const tasksList = () => routeOf('tasks.list');

describe('errors: routing', () => {
  it('answers a method name outside the registry with 404 unknown_method', async () => {
    expectEnvelope(await h.post('/v1/control/tasks.explode', { identity: {} }), 404, 'unknown_method');
  });

  it('answers an unknown family path with 404 unknown_method', async () => {
    expectEnvelope(await h.post('/v1/memory/explode', { identity: {} }), 404, 'unknown_method');
  });

  it('answers unknown_method before authentication', async () => {
    expectEnvelope(await h.post('/v1/control/nope', { identity: {} }, { token: null }), 404, 'unknown_method');
  });

  it('answers a path outside /v1 with 404 not_found in the envelope', async () => {
    expectEnvelope(await h.send('GET', '/index.html'), 404, 'not_found');
  });

  it('answers a wrong verb on a known route with a bare 405 and no body', async () => {
    const response = await h.send('GET', routeOf('start'));
    expect(response.statusCode).toBe(405);
    expect(response.body).toBe('');
    expect(response.headers['content-type']).toBeUndefined();
    expect(response.headers.allow).toBe('POST');
  });

  it.each(['PUT', 'DELETE', 'PATCH'])('answers %s on a POST route with a bare 405', async (verb) => {
    const response = await h.send(verb, routeOf('tasks.get'), { identity: {} });
    expect(response.statusCode).toBe(405);
    expect(response.body).toBe('');
  });

  it('answers POST on the GET-only event stream with a bare 405', async () => {
    const response = await h.post(routeOf('events.subscribe'), { identity: {} });
    expect(response.statusCode).toBe(405);
    expect(response.body).toBe('');
    expect(response.headers.allow).toBe('GET');
  });

  it('answers a wrong verb before authentication', async () => {
    const response = await h.send('GET', routeOf('start'), undefined, { token: null });
    expect(response.statusCode).toBe(405);
  });
});

describe('errors: request bodies', () => {
  it('answers malformed JSON with 400 invalid_request', async () => {
    expectEnvelope(await h.post(tasksList(), undefined, { raw: '{"identity": {' }), 400, 'invalid_request');
  });

  it('answers a non-JSON content type with 400 invalid_request', async () => {
    const response = await h.post(tasksList(), undefined, {
      raw: 'identity=1',
      headers: { 'content-type': 'text/plain' },
    });
    expectEnvelope(response, 400, 'invalid_request');
  });

  it('answers a malformed Content-Type header with 400 invalid_request', async () => {
    const response = await h.post(tasksList(), undefined, {
      raw: '{}',
      headers: { 'content-type': 'application/json; charset' },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().code).toBe('invalid_request');
  });

  it('answers a missing body with 400 invalid_request', async () => {
    expectEnvelope(await h.post(tasksList()), 400, 'invalid_request');
  });

  it('answers a JSON body that is not an object with 400 invalid_request', async () => {
    expectEnvelope(await h.post(tasksList(), [1, 2]), 400, 'invalid_request');
  });

  it('answers an unknown member with 400 invalid_request naming it', async () => {
    const response = await h.post(tasksList(), bodyFor('tasks.list', {}, { surprise: 1 }));
    expectEnvelope(response, 400, 'invalid_request');
    expect(response.json().message).toContain('surprise');
  });

  it('answers an unknown identity member with 400 invalid_request naming its path', async () => {
    const response = await h.post(tasksList(), bodyFor('tasks.list', { tenant_id: 't1' }));
    expect(response.json().message).toContain('identity.tenant_id');
  });

  it('answers a wrong member type with 400 invalid_request naming the path', async () => {
    const response = await h.post(routeOf('start'), bodyFor('start', {}, { query: 42 }));
    expectEnvelope(response, 400, 'invalid_request');
    expect(response.json().message).toContain('query');
  });

  it('answers a steering control without identity.run with 400 invalid_request', async () => {
    const response = await h.post(routeOf('cancel'), { identity: {} });
    expectEnvelope(response, 400, 'invalid_request');
    expect(response.json().message).toContain('identity.run');
  });

  it('answers a body larger than the limit with 413 payload_too_large', async () => {
    const response = await h.post(tasksList(), { identity: {}, filler: 'x'.repeat(70 * 1024) });
    expectEnvelope(response, 413, 'payload_too_large');
  });

  it('answers a control payload over a bound with 422 payload_invalid', async () => {
    const response = await h.post(
      routeOf('redirect'),
      bodyFor('redirect', { run: 'r1' }, { payload: { goal: 'g'.repeat(4097) } }),
    );
    expectEnvelope(response, 422, 'payload_invalid');
  });
});

describe('errors: authorization', () => {
  it('answers 401 identity_required without a token', async () => {
    expectEnvelope(await h.post(tasksList(), bodyFor('tasks.list'), { token: null }), 401, 'identity_required');
  });

  it('answers 401 auth_rejected for a token failing verification', async () => {
    expectEnvelope(
      await h.post(tasksList(), bodyFor('tasks.list'), { token: h.token({ aud: 'x' }) }),
      401,
      'auth_rejected',
    );
  });

  it('answers an admin verb without admin with 403 identity_scope_required', async () => {
    const response = await h.post(routeOf('artifacts.delete'), bodyFor('artifacts.delete'), {
      token: h.token({ scopes: ['console:fleet'] }),
    });
    expectEnvelope(response, 403, 'identity_scope_required');
    expect(h.rpc.calls).toHaveLength(0);
  });

  it('forwards an admin verb for admin', async () => {
    const response = await h.post(routeOf('artifacts.delete'), bodyFor('artifacts.delete'), {
      token: h.token({ scopes: ['admin'] }),
    });
    expect(response.statusCode).toBe(200);
    expect(h.rpc.last?.method).toBe('artifacts.delete');
  });

  it('answers the per-user configuration tier without agent_config:user with 403 scope_mismatch', async () => {
    const response = await h.post(routeOf('agent_config.user.get'), bodyFor('agent_config.user.get'), {
      token: h.token({ scopes: ['admin'] }),
    });
    expectEnvelope(response, 403, 'scope_mismatch');
  });

  it('forwards the per-user configuration tier with agent_config:user', async () => {
    const response = await h.post(routeOf('agent_config.user.get'), bodyFor('agent_config.user.get'), {
      token: h.token({ scopes: ['agent_config:user'] }),
    });
    expect(response.statusCode).toBe(200);
  });

  it('answers a body tenant naming another tenant on a cross-tenant surface without the claim with 403 scope_mismatch', async () => {
    expectEnvelope(await h.post(routeOf('runtime.info'), { identity: { tenant: 't2' } }), 403, 'scope_mismatch');
  });
});

describe('errors: answers of the owning service', () => {
  it.each([
    ['not_found', 404],
    ['scope_mismatch', 403],
    ['session_erased', 410],
    ['conflict', 409],
    ['invalid_request', 400],
    ['presign_unsupported', 501],
    ['rate_limited', 429],
    // An owner's reply too large for the bus (see libs/bus rpc-server).
    ['payload_too_large', 413],
  ] as const)('passes %s through with status %i', async (code, status) => {
    h.rpc.respond = async () => {
      throw new ServiceError(code, `owner says ${code}`);
    };
    const response = await h.post(tasksList(), bodyFor('tasks.list'));
    expectEnvelope(response, status, code);
    expect(response.json().message).toBe(`owner says ${code}`);
  });

  it('answers a method its owner has not built with 501 unimplemented', async () => {
    h.rpc.respond = async (call) => {
      throw new ServiceError('unimplemented', `${call.method} is not implemented yet`);
    };
    expectEnvelope(await h.post(tasksList(), bodyFor('tasks.list')), 501, 'unimplemented');
  });

  it('answers a method the edge cannot serve here with 501 unimplemented', async () => {
    const admin = h.token({ scopes: ['admin'] });
    const response = await h.post(routeOf('auth.rotate_token'), bodyFor('auth.rotate_token'), { token: admin });
    expectEnvelope(response, 501, 'unimplemented');
    expect(response.json().message).toContain('ARS_ROTATION_SIGNING_KEY_FILE');
  });

  it('answers no live owner with 503 unavailable', async () => {
    h.rpc.respond = async () => {
      throw new ServiceError('unavailable', 'service run-executor is not available');
    };
    expectEnvelope(await h.post(tasksList(), bodyFor('tasks.list')), 503, 'unavailable');
  });

  it('answers an owner that does not answer in time with 504 timeout', async () => {
    h.rpc.respond = async () => {
      throw new ServiceError('timeout', 'no answer');
    };
    expectEnvelope(await h.post(tasksList(), bodyFor('tasks.list')), 504, 'timeout');
  });

  it('answers an unexpected throw with 500 internal and never shows the stack', async () => {
    h.rpc.respond = async () => {
      throw new TypeError('secret detail at /srv/app.ts:12');
    };
    const response = await h.post(tasksList(), bodyFor('tasks.list'));
    expectEnvelope(response, 500, 'internal');
    expect(response.body).not.toContain('secret');
    expect(response.body).not.toContain('app.ts');
  });
});

describe('errors: what the gateway logs', () => {
  /** The log lines of one request answered with `error` by the service behind the gateway. */
  async function logged(error: Error): Promise<Record<string, unknown>[]> {
    const log = createMemoryLogger('gateway-test');
    const logging = await createHarness({ logger: log.logger });
    try {
      logging.rpc.respond = async () => {
        throw error;
      };
      await logging.post(tasksList(), bodyFor('tasks.list'));
      return log.lines().filter((l) => String(l.msg).startsWith('request failed'));
    } finally {
      await logging.close();
    }
  }

  it('logs a 503 or 504 at warn with its reason and cause, without a stack: an outage answers every request so', async () => {
    const lost = new Error('CONNECTION_REFUSED');
    for (const error of [
      new ServiceError('unavailable', 'no connection to nats-server', { cause: lost }),
      new ServiceError('timeout', 'service run-executor did not answer in time'),
    ]) {
      const [line, ...more] = await logged(error);
      expect(more).toEqual([]);
      expect(line).toMatchObject({ level: 40, code: error.code, reason: error.message });
      expect(line?.cause).toBe(error.cause === undefined ? undefined : 'CONNECTION_REFUSED');
      expect(JSON.stringify(line)).not.toContain('stack');
    }
  });

  it('logs any other 5xx at error with the cause and its stack', async () => {
    const [line] = await logged(new TypeError('boom'));
    expect(line).toMatchObject({ level: 50, code: 'internal' });
    expect((line?.err as { stack?: string } | undefined)?.stack).toContain('TypeError: boom');
  });
});
