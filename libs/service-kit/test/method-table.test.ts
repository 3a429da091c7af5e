import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { IdentityScope, defineMethod, isServiceError } from '@ars/contracts';
import type { MethodDef, VerifiedIdentity } from '@ars/contracts';
import { buildMethodTable, describeFirstIssue } from '../src/method-table.ts';

function method(name: string, service: MethodDef['service'], request: z.ZodType): MethodDef {
  return defineMethod({
    name,
    family: name.split('.')[0] ?? name,
    httpMethod: 'POST',
    routes: [`/v1/${name}`],
    surface: 'family',
    service,
    auth: ['R'],
    requestName: 'Req',
    responseName: 'Res',
    request,
    response: z.object({}),
    summary: name,
  });
}

const GetRequest = z.strictObject({ identity: IdentityScope, key: z.string().min(1) });
const METHODS = [
  method('memory.get', 'memory', GetRequest),
  method('memory.put', 'memory', GetRequest),
  method('sessions.get', 'session', GetRequest),
];
const identity: VerifiedIdentity = { tenant: 't', user: 'u', session: 's', scopes: [] };

async function failureOf(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (isServiceError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected a ServiceError');
}

describe('buildMethodTable', () => {
  it('serves exactly the methods the service owns', () => {
    const table = buildMethodTable('memory', METHODS, {});
    expect(table.map((e) => [e.method, e.implemented])).toEqual([
      ['memory.get', false],
      ['memory.put', false],
    ]);
  });

  it('answers unimplemented for a method without a handler', async () => {
    const [, put] = buildMethodTable('memory', METHODS, {});
    const failure = await failureOf(put!.handler({ method: 'memory.put', identity, body: {} }));
    expect(failure).toEqual({ code: 'unimplemented', message: 'memory.put is not implemented yet' });
  });

  it('hands the parsed body to a built handler', async () => {
    const [get] = buildMethodTable('memory', METHODS, { 'memory.get': async (request) => request.body });
    expect(get!.implemented).toBe(true);
    await expect(get!.handler({ method: 'memory.get', identity, body: { identity: {}, key: 'k' } })).resolves.toEqual({
      identity: {},
      key: 'k',
    });
  });

  it('refuses a bad body with invalid_request naming the failing path', async () => {
    const [get] = buildMethodTable('memory', METHODS, { 'memory.get': async () => ({}) });
    const failure = await failureOf(
      get!.handler({ method: 'memory.get', identity, body: { identity: { tenant: 5 }, key: 'k' } }),
    );
    expect(failure.code).toBe('invalid_request');
    expect(failure.message).toContain('identity.tenant');
  });

  it('names an unknown member of a strict body', async () => {
    const [get] = buildMethodTable('memory', METHODS, { 'memory.get': async () => ({}) });
    const failure = await failureOf(
      get!.handler({ method: 'memory.get', identity, body: { identity: {}, key: 'k', extra: 1 } }),
    );
    expect(failure).toEqual({ code: 'invalid_request', message: 'invalid memory.get request: extra: unknown member' });
  });

  it('refuses at boot a handler for a method the service does not own', () => {
    expect(() => buildMethodTable('memory', METHODS, { 'sessions.get': async () => ({}) })).toThrowError(
      /sessions\.get/,
    );
  });
});

describe('describeFirstIssue', () => {
  it('names the body itself when the body is not an object', () => {
    const result = GetRequest.safeParse(undefined);
    expect(result.success).toBe(false);
    expect(describeFirstIssue(result.error!)).toMatch(/^\(body\): /);
  });
});
