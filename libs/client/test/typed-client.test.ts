import { readFile } from 'node:fs/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ERROR_CODES, METHODS, getMethod } from '@ars/contracts';
import type { TaskDetail as ContractTaskDetail } from '@ars/contracts';
import {
  ArsError,
  ConflictError,
  InternalError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitedError,
  UnavailableError,
  createArsError,
  createClient,
  isArsError,
} from '../src/index.ts';
import type { EventFrame, MethodName, MethodResponse, TaskDetail } from '../src/index.ts';
import { ERROR_CLASSES } from '../src/errors.ts';
import { METHOD_ROUTES, RETRYABLE_CODES } from '../src/generated/contract.ts';
import { backoffMs } from '../src/subscribe.ts';
import { GENERATED_PATH, generateContract } from '../scripts/generate-contract.ts';
import { startLocalServer } from './local-server.ts';
import type { LocalServer } from './local-server.ts';

let server: LocalServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  vi.restoreAllMocks();
});

async function echoServer(): Promise<LocalServer> {
  return startLocalServer((request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ route: request.url }));
  });
}

function frame(sequence: number, type: string): EventFrame {
  return {
    type,
    sequence,
    occurred_at: '2025-01-01T00:00:00Z',
    tenant: 't',
    user: 'u',
    session: 's',
    run: 'r1',
    payload: {},
  };
}

describe('the generated contract', () => {
  it('is in step with @ars/contracts (regenerate: node libs/client/scripts/generate-contract.ts)', async () => {
    expect(await readFile(GENERATED_PATH, 'utf8')).toBe(await generateContract());
  }, 90_000);

  it('routes every POST method of the registry on its canonical route', () => {
    const post = METHODS.filter((m) => m.httpMethod === 'POST');
    expect(Object.keys(METHOD_ROUTES).sort()).toEqual(post.map((m) => m.name).sort());
    for (const name of Object.keys(METHOD_ROUTES))
      expect(METHOD_ROUTES[name as MethodName]).toBe(getMethod(name)?.routes[0]);
  });

  it('types responses as the contracts infer them', () => {
    expectTypeOfMutual<TaskDetail, ContractTaskDetail>(true);
    expectTypeOfMutual<MethodResponse<'tasks.get'>, ContractTaskDetail>(true);
  });
});

/** Compiles only when A and B are assignable to each other (checked by tsc over the workspace). */
function expectTypeOfMutual<A, B>(_proof: [A] extends [B] ? ([B] extends [A] ? true : false) : false): void {}

describe('the typed surface', () => {
  it('calls nested methods on their routes and adds identity {} when the request has none', async () => {
    server = await echoServer();
    const client = createClient({ baseUrl: server.baseUrl });
    const detail = (await client.tasks.get({ task_id: 't1' })) as unknown as { route: string };
    expect(detail.route).toBe(METHOD_ROUTES['tasks.get']);
    await client.flows.runs.list();
    await client.pause.list({ limit: 5 });
    await client.pause({ identity: { run: 'r1' }, payload: { reason: 'lunch' } });
    await client.start({ query: 'q', identity: { session: 's2' } });
    expect(server.requests.map((r) => [r.url, JSON.parse(r.body)])).toEqual([
      [METHOD_ROUTES['tasks.get'], { identity: {}, task_id: 't1' }],
      [METHOD_ROUTES['flows.runs.list'], { identity: {} }],
      [METHOD_ROUTES['pause.list'], { identity: {}, limit: 5 }],
      [METHOD_ROUTES['pause'], { identity: { run: 'r1' }, payload: { reason: 'lunch' } }],
      [METHOD_ROUTES['start'], { query: 'q', identity: { session: 's2' } }],
    ]);
  });

  it('answers undefined for names outside the registry and is not thenable', async () => {
    const client = createClient({ baseUrl: 'http://127.0.0.1:1' });
    expect((client.tasks as unknown as Record<string, unknown>)['nope']).toBeUndefined();
    expect((client as unknown as Record<string, unknown>)['then']).toBeUndefined();
    expect('tasks' in client && 'runUntilDone' in client && !('nope' in client)).toBe(true);
    expect(typeof client.events.subscribe).toBe('function');
    expect(typeof client.events.list).toBe('function');
  });

  it('refuses events.subscribe through call() and unknown names locally', async () => {
    const client = createClient({ baseUrl: 'http://127.0.0.1:1' });
    await expect(client.call('events.subscribe')).rejects.toMatchObject({ code: 'method_not_allowed', status: 405 });
    const unknown = await client.call('tasks.nope').catch((error: unknown) => error);
    expect(unknown).toBeInstanceOf(NotFoundError);
  });
});

describe('errors by code', () => {
  it('has a class for every code of the catalogue', () => {
    for (const code of Object.keys(ERROR_CODES)) expect(Object.hasOwn(ERROR_CLASSES, code), code).toBe(true);
  });

  it('builds the class of the code, with status and retryable', () => {
    expect(createArsError(404, 'not_found', 'x')).toBeInstanceOf(NotFoundError);
    expect(createArsError(403, 'scope_mismatch', 'x')).toBeInstanceOf(PermissionDeniedError);
    expect(createArsError(410, 'session_erased', 'x')).toBeInstanceOf(ConflictError);
    expect(createArsError(502, 'http_502', 'x')).toBeInstanceOf(InternalError);
    const limited = createArsError(429, 'rate_limited', 'x');
    expect(limited).toBeInstanceOf(RateLimitedError);
    expect(limited).toBeInstanceOf(ArsError);
    expect({ name: limited.name, status: limited.status, retryable: limited.retryable }).toEqual({
      name: 'RateLimitedError',
      status: 429,
      retryable: true,
    });
    expect(createArsError(0, 'unavailable', 'x')).toBeInstanceOf(UnavailableError);
    expect(createArsError(404, 'not_found', 'x').retryable).toBe(false);
    expect([...RETRYABLE_CODES].sort()).toEqual(['rate_limited', 'timeout', 'unavailable']);
    const future = createArsError(418, 'teapot', 'x');
    expect(future.constructor).toBe(ArsError);
    expect(future.code).toBe('teapot');
  });

  it('narrows by code with isArsError', () => {
    const error: unknown = createArsError(404, 'not_found', 'x');
    expect(isArsError(error, 'not_found')).toBe(true);
    expect(isArsError(error, 'conflict', 'internal')).toBe(false);
    expect(isArsError(new Error('x'))).toBe(false);
  });
});

describe('reconnect backoff', () => {
  it('doubles up to the cap and shortens each delay by at most the jitter', () => {
    vi.spyOn(Math, 'random').mockReturnValue(0);
    expect([1, 2, 3, 4, 8].map((f) => backoffMs({ initialDelayMs: 100, maxDelayMs: 1000 }, undefined, f))).toEqual([
      100, 200, 400, 800, 1000,
    ]);
    vi.spyOn(Math, 'random').mockReturnValue(0.999999);
    const shortest = backoffMs({ initialDelayMs: 100, maxDelayMs: 1000, jitter: 0.5 }, undefined, 3);
    expect(shortest).toBeGreaterThan(200);
    expect(shortest).toBeLessThan(201);
    expect(backoffMs({ initialDelayMs: 100, jitter: 0 }, 40, 1)).toBe(40);
  });
});

describe('runUntilDone', () => {
  it('starts, follows the run from a cursor taken before the start, and resolves with the terminal frame', async () => {
    server = await startLocalServer((request, response) => {
      if (request.url === METHOD_ROUTES['tasks.list']) {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ items: [], sequence: 41 }));
      } else if (request.url === METHOD_ROUTES['start']) {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ task_id: 'r1', reused: false, protocol_version: '0.1.0' }));
      } else {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        // A replayed frame at the cursor is dropped; the terminal frame ends the follow.
        for (const f of [
          frame(41, 'task.spawned'),
          frame(42, 'task.started'),
          frame(42, 'task.started'),
          frame(43, 'task.completed'),
        ]) {
          response.write(`id: ${f.sequence}\ndata: ${JSON.stringify(f)}\n\n`);
        }
      }
    });
    const client = createClient({ baseUrl: server.baseUrl, token: 'tok' });
    const seen: string[] = [];
    const outcome = await client.runUntilDone({ query: 'q' }, { onEvent: (f) => seen.push(`${f.sequence} ${f.type}`) });
    expect(outcome).toMatchObject({ taskId: 'r1', status: 'completed', reused: false, terminal: { sequence: 43 } });
    expect(seen).toEqual(['42 task.started', '43 task.completed']);
    const events = server.requests[2]!;
    expect(events.headers['last-event-id']).toBe('41');
    expect(events.headers['x-service-run']).toBe('r1');
    expect(JSON.parse(server.requests[1]!.body)).toEqual({ identity: {}, query: 'q' });
  });

  it('rejects with the signal reason when aborted before the end', async () => {
    server = await startLocalServer((request, response) => {
      if (request.url === METHOD_ROUTES['tasks.list'] || request.url === METHOD_ROUTES['start']) {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ sequence: 1, task_id: 'r1', reused: false }));
      } else {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write(': open\n\n');
      }
    });
    const client = createClient({ baseUrl: server.baseUrl });
    const controller = new AbortController();
    const done = client.runUntilDone({ query: 'q' }, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('stop following')), 50);
    await expect(done).rejects.toThrow('stop following');
  });

  it('rejects with the signal reason when aborted while its start request is under way', async () => {
    server = await startLocalServer((_request, response) => {
      // Never answers within the test: the abort comes first.
      setTimeout(() => response.end(), 300).unref();
    });
    const client = createClient({ baseUrl: server.baseUrl });
    const controller = new AbortController();
    const done = client.runUntilDone({ query: 'q' }, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('stop following')), 20);
    await expect(done).rejects.toThrow('stop following');
  });
});
