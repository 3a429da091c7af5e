import { describe, expect, it } from 'vitest';
import { SessionsListRequest, SessionsSetTitleRequest, getMethod } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import { typedMethod } from '../src/typed-method.ts';

const caller: VerifiedIdentity = { tenant: 't', user: 'u', session: 's', scopes: [] };

describe('typedMethod', () => {
  it('is bound to the schema the registry declares for the method', () => {
    expect(getMethod('sessions.list')?.request).toBe(SessionsListRequest);
  });

  it('refuses a body that fails the request schema as invalid_request naming the path, before the handler', async () => {
    let ran = false;
    const handler = typedMethod(SessionsSetTitleRequest, async () => {
      ran = true;
    });
    const call = { method: 'sessions.set_title', identity: caller, body: { identity: {}, title: 'x', extra: 1 } };
    await expect(handler(call)).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringMatching(/^invalid sessions\.set_title request: /),
    });
    await expect(handler({ ...call, body: undefined })).rejects.toMatchObject({ code: 'invalid_request' });
    expect(ran).toBe(false);
  });

  it('hands the handler the parsed, typed body with the identity members intact', async () => {
    const handler = typedMethod(SessionsSetTitleRequest, async ({ method, identity, body }) => ({
      method,
      tenant: identity.tenant,
      title: body.title,
      target: body.identity,
    }));
    const body = { identity: { tenant: 'other', run: 'r1' }, title: '  spaced  ' };
    await expect(handler({ method: 'sessions.set_title', identity: caller, body })).resolves.toEqual({
      method: 'sessions.set_title',
      tenant: 't',
      title: 'spaced',
      target: { tenant: 'other', run: 'r1' },
    });
  });

  it('applies schema defaults, and parsing an already parsed body changes nothing', async () => {
    const seen: unknown[] = [];
    const handler = typedMethod(SessionsListRequest, async ({ body }) => {
      seen.push(body);
    });
    await handler({ method: 'sessions.list', identity: caller, body: { identity: {} } });
    await handler({ method: 'sessions.list', identity: caller, body: seen[0] });
    expect(seen[1]).toEqual(seen[0]);
    expect(seen[0]).toMatchObject({ identity: {}, limit: expect.any(Number) });
  });
});
