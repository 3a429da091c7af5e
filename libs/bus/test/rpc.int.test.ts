import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { headers } from '@nats-io/transport-node';
import { isServiceError, ServiceError } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import {
  createMemoryLogger,
  initTelemetry,
  InMemorySpanExporter,
  SpanKind,
  SpanStatusCode,
  trace,
  withSpan,
} from '@ars/telemetry';
import type { Telemetry } from '@ars/telemetry';
import {
  connectBus,
  createRpcClient,
  isPublicMethod,
  pingServices,
  rpcSubject,
  serveService,
  startNatsServer,
} from '../src/index.ts';
import type { Bus, NatsServerHandle, RpcHandler, ServedService } from '../src/index.ts';
import { recordWrites, tempDir } from './helpers.ts';

const IDENTITY: VerifiedIdentity = {
  tenant: 'acme.corp',
  user: 'ünï',
  session: 's 1',
  scopes: ['admin', 'console:fleet'],
};

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return isServiceError(error) ? error.code : `not a ServiceError: ${String(error)}`;
  }
  return 'resolved';
}

describe('RPC over the services API', () => {
  let server: NatsServerHandle;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let telemetry: Telemetry;
  const exporter = new InMemorySpanExporter();
  const buses: Bus[] = [];
  const served: ServedService[] = [];
  const log = createMemoryLogger('rpc-test');
  let release: () => void = () => undefined;
  const hanging = new Promise<void>((resolve) => {
    release = resolve;
  });

  async function bus(name: string): Promise<Bus> {
    const b = await connectBus({ servers: server.url, name });
    buses.push(b);
    return b;
  }

  async function serve(
    name: string,
    handlers: Record<string, RpcHandler>,
    instanceId = `${name}-1`,
  ): Promise<ServedService> {
    const s = await serveService(await bus(instanceId), {
      service: name,
      version: '1.2.3',
      instanceId,
      handlers,
      logger: log.logger,
      description: `${name} test service`,
      metadata: { store_kind: 'embedded', instance_id: 'overridden' },
      endpointMetadata: { 'echo.identity': { implemented: 'true' } },
      untracedMethods: ['echo.probe'],
    });
    served.push(s);
    return s;
  }

  beforeAll(async () => {
    telemetry = initTelemetry({ serviceName: 'rpc-test', exporter });
    dir = await tempDir('rpc');
    server = await startNatsServer({ storeDir: dir.path });
    await serve('echo', {
      'echo.identity': async (req) => {
        const span = trace.getActiveSpan()?.spanContext();
        return {
          identity: req.identity,
          body: req.body,
          method: req.method,
          traceId: span?.traceId,
          spanId: span?.spanId,
        };
      },
      'echo.probe': async () => trace.getActiveSpan()?.spanContext().traceId,
      'echo.refuse': async () => {
        throw new ServiceError('not_found', 'no such thing');
      },
      'echo.dependency_down': async () => {
        throw new ServiceError('unavailable', 'the store did not answer', { retryable: true });
      },
      'echo.refuse_with_reason': async () => {
        throw new ServiceError('rate_limited', 'over budget', { retryable: false, reason: 'budget_exceeded' });
      },
      'echo.crash': async () => {
        throw new TypeError('secret internals at /srv/app.ts:42');
      },
      'echo.huge': async () => 'x'.repeat(2 * 1024 * 1024),
      'echo.hang': async () => {
        await hanging;
        return 'late';
      },
    });
  });

  afterAll(async () => {
    release();
    for (const s of served) await s.stop();
    for (const b of buses) await b.close();
    await telemetry?.shutdown();
    await server?.stop();
    await dir?.remove();
  });

  it('delivers the identity and body and returns the result', async () => {
    const client = createRpcClient(await bus('client-1'));
    const result = (await client.call('echo', 'echo.identity', IDENTITY, { hello: ['world', 1] })) as Record<
      string,
      unknown
    >;
    expect(result).toMatchObject({ identity: IDENTITY, body: { hello: ['world', 1] }, method: 'echo.identity' });
  });

  it("runs the handler in a SERVER span that is the caller's span's child, with no CLIENT span by default", async () => {
    const client = createRpcClient(await bus('client-2b'));
    const { root, result } = await withSpan('test-root-default', {}, async (span) => ({
      root: span.spanContext(),
      result: (await client.call('echo', 'echo.identity', IDENTITY, null)) as { traceId: string; spanId: string },
    }));
    expect(result.traceId).toBe(root.traceId);
    const inTrace = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === root.traceId);
    const serverSpan = inTrace.find((s) => s.spanContext().spanId === result.spanId);
    expect(serverSpan?.kind).toBe(SpanKind.SERVER);
    expect(serverSpan?.parentSpanContext?.spanId).toBe(root.spanId);
    expect(inTrace.some((s) => s.kind === SpanKind.CLIENT)).toBe(false);
  });

  it('records a CLIENT span with the error for a call that failed, from when it began', async () => {
    const client = createRpcClient(await bus('client-2c'));
    const { root, began } = await withSpan('test-root-failing', {}, async (span) => {
      const began = Date.now();
      await expect(client.call('echo', 'echo.refuse', IDENTITY, null)).rejects.toMatchObject({ code: 'not_found' });
      return { root: span.spanContext(), began };
    });
    const failed = exporter
      .getFinishedSpans()
      .filter((s) => s.spanContext().traceId === root.traceId && s.kind === SpanKind.CLIENT);
    expect(failed).toHaveLength(1);
    expect(failed[0]?.name).toBe('echo/echo.refuse');
    expect(failed[0]?.parentSpanContext?.spanId).toBe(root.spanId);
    expect(failed[0]?.status).toMatchObject({ code: SpanStatusCode.ERROR });
    expect(failed[0]?.attributes).toMatchObject({ 'rpc.service': 'echo', 'rpc.method': 'echo.refuse' });
    // It spans the call: it began before the request was sent.
    const [seconds, nanos] = failed[0]!.startTime;
    expect(seconds * 1000 + nanos / 1e6).toBeGreaterThanOrEqual(began - 1);
  });

  it("runs the handler in a SERVER span under the caller's CLIENT span with rpcClientSpans all", async () => {
    const all = initTelemetry({ serviceName: 'rpc-test-all', rpcClientSpans: 'all' });
    onTestFinished(async () => {
      initTelemetry({ serviceName: 'rpc-test-errors', rpcClientSpans: 'errors' });
      await all.shutdown();
    });
    const client = createRpcClient(await bus('client-2'));
    const { rootTrace, result } = await withSpan('test-root', {}, async (root) => ({
      rootTrace: root.spanContext().traceId,
      result: (await client.call('echo', 'echo.identity', IDENTITY, null)) as { traceId: string; spanId: string },
    }));
    expect(result.traceId).toBe(rootTrace);
    const spans = exporter.getFinishedSpans();
    const serverSpan = spans.find((s) => s.spanContext().spanId === result.spanId);
    const clientSpan = spans.find((s) => s.kind === SpanKind.CLIENT && s.spanContext().traceId === rootTrace);
    expect(serverSpan?.kind).toBe(SpanKind.SERVER);
    expect(serverSpan?.parentSpanContext?.spanId).toBe(clientSpan?.spanContext().spanId);
    expect(serverSpan?.attributes).toMatchObject({ 'rpc.service': 'echo', 'rpc.method': 'echo.identity' });
  });

  it('answers an untraced method (a health probe) in the caller’s trace without a span of its own', async () => {
    const client = createRpcClient(await bus('client-probe'));
    const { rootTrace, answered } = await withSpan('probe-root', {}, async (root) => ({
      rootTrace: root.spanContext().traceId,
      answered: await client.call('echo', 'echo.probe', IDENTITY, null),
    }));
    expect(answered).toBe(rootTrace);
    const inTrace = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === rootTrace);
    expect(inTrace.map((s) => s.kind)).toEqual([SpanKind.INTERNAL]);
  });

  it('turns a ServiceError reply into a ServiceError with the remote code and message', async () => {
    const client = createRpcClient(await bus('client-3'));
    const error = await client.call('echo', 'echo.refuse', IDENTITY, {}).catch((e: unknown) => e);
    expect(isServiceError(error)).toBe(true);
    expect(error).toMatchObject({ code: 'not_found', status: 404, message: 'no such thing' });
  });

  it("carries a refusal's retryable and reason across the wire", async () => {
    const client = createRpcClient(await bus('client-3b'));
    const error = await client.call('echo', 'echo.refuse_with_reason', IDENTITY, {}).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'rate_limited', retryable: false, reason: 'budget_exceeded' });
  });

  it('logs a dependency that did not answer (503) at warn, not as a handler failure', async () => {
    const client = createRpcClient(await bus('client-3c'));
    const error = await client.call('echo', 'echo.dependency_down', IDENTITY, {}).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'unavailable', retryable: true });
    const line = log.lines().find((l) => l.method === 'echo.dependency_down');
    expect(line).toMatchObject({ level: 40, msg: 'rpc dependency unavailable', code: 'unavailable' });
  });

  it('answers internal for any other throw, with the stack in the log and not on the wire', async () => {
    const client = createRpcClient(await bus('client-4'));
    const error = await client.call('echo', 'echo.crash', IDENTITY, {}).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'internal', message: 'internal error' });
    const line = log.lines().find((l) => l.msg === 'rpc handler failed');
    expect((line?.err as { stack?: string } | undefined)?.stack).toContain('secret internals');
    expect(line?.trace_id).toMatch(/^[0-9a-f]{32}$/);
  });

  it('answers payload_too_large (413), not internal, when the result is larger than the bus allows', async () => {
    const client = createRpcClient(await bus('client-12'));
    const error = await client.call('echo', 'echo.huge', IDENTITY, {}).catch((e: unknown) => e);
    expect(isServiceError(error)).toBe(true);
    expect(error).toMatchObject({ code: 'payload_too_large', status: 413, retryable: false });
    expect((error as Error).message).toMatch(/^the reply \(\d+ bytes\) is larger than the bus carries/);
    expect(log.lines().find((l) => l.msg === 'rpc reply too large for the bus')).toMatchObject({
      method: 'echo.huge',
      code: 'payload_too_large',
    });
  });

  it('sends the oversize answer with the services-API error headers of a 413', async () => {
    const b = await bus('client-13');
    const h = headers();
    for (const [k, v] of [
      ['ars-tenant', 't'],
      ['ars-user', 'u'],
      ['ars-session', 's'],
    ] as const)
      h.set(k, v);
    const reply = await b.nc.request(rpcSubject('echo', 'echo.huge'), '{}', { headers: h, timeout: 5_000 });
    expect(reply.headers?.get('Nats-Service-Error-Code')).toBe('413');
    expect(reply.json()).toMatchObject({ ok: false, error: { status: 413, code: 'payload_too_large' } });
  });

  it('answers invalid_request to a body that is not JSON', async () => {
    const b = await bus('client-5');
    const h = headers();
    for (const [k, v] of [
      ['ars-tenant', 't'],
      ['ars-user', 'u'],
      ['ars-session', 's'],
    ] as const)
      h.set(k, v);
    const reply = await b.nc.request(rpcSubject('echo', 'echo.identity'), '{not json', { headers: h, timeout: 5_000 });
    expect(reply.json()).toEqual({
      ok: false,
      error: { status: 400, code: 'invalid_request', message: 'request body is not valid JSON', retryable: false },
    });
  });

  it('answers identity_required to a request without identity headers', async () => {
    const b = await bus('client-6');
    const reply = await b.nc.request(rpcSubject('echo', 'echo.identity'), '{}', { timeout: 5_000 });
    expect(reply.json()).toMatchObject({ ok: false, error: { code: 'identity_required' } });
  });

  it('maps no responders to unavailable', async () => {
    const client = createRpcClient(await bus('client-7'));
    expect(await codeOf(client.call('nobody', 'nothing.here', IDENTITY, {}))).toBe('unavailable');
  });

  it('maps a missing reply to timeout', async () => {
    const client = createRpcClient(await bus('client-8'), { timeoutMs: 5_000 });
    expect(await codeOf(client.call('echo', 'echo.hang', IDENTITY, {}, { timeoutMs: 200 }))).toBe('timeout');
  });

  it('shares the load between two replicas in the queue group', async () => {
    const handler =
      (id: string): RpcHandler =>
      async () =>
        id;
    await serve('shared', { 'shared.who': handler('a') }, 'shared-a');
    await serve('shared', { 'shared.who': handler('b') }, 'shared-b');
    const client = createRpcClient(await bus('client-9'));
    const answers = await Promise.all(
      Array.from({ length: 40 }, () => client.call('shared', 'shared.who', IDENTITY, {})),
    );
    expect(new Set(answers)).toEqual(new Set(['a', 'b']));
  });

  it('is listed by discovery with its version, endpoints and instance id', async () => {
    const found = await pingServices(await bus('client-10'), { timeoutMs: 2_000 });
    const echo = found.find((s) => s.name === 'echo');
    expect(echo).toMatchObject({
      version: '1.2.3',
      description: 'echo test service',
      metadata: { instance_id: 'echo-1', store_kind: 'embedded' },
    });
    expect(echo?.endpoints).toContainEqual({
      name: 'echo-identity',
      subject: 'ars.rpc.echo.echo.identity',
      queue_group: 'echo',
      metadata: { method: 'echo.identity', implemented: 'true' },
    });
  });

  it('writes a request at once with sendAtOnce, and with the end of the turn without', async () => {
    const caller = await bus('client-at-once');
    const writes = recordWrites(caller);
    const later = createRpcClient(caller).call('echo', 'echo.probe', IDENTITY, {});
    expect(writes).toEqual([]); // held for the end of the turn
    await later;
    writes.length = 0;
    const atOnce = createRpcClient(caller, { sendAtOnce: true }).call('echo', 'echo.probe', IDENTITY, {});
    expect(writes).toEqual(['write']);
    await atOnce;
  });

  it('writes the reply to a public method at once, and to an internal _area.verb one with the end of the turn', async () => {
    const events: string[] = [];
    const answer = async () => {
      setImmediate(() => events.push('end of turn'));
      return 'ok';
    };
    const replier = await serveService(await bus('replies-1'), {
      service: 'replies',
      version: '1.0.0',
      instanceId: 'replies-1',
      handlers: { 'replies.get': answer, '_replies.get': answer },
      logger: log.logger,
    });
    served.push(replier);
    const replierBus = buses.at(-1) as Bus;
    recordWrites(replierBus, events);
    const client = createRpcClient(await bus('client-replies'));
    expect(await client.call('replies', 'replies.get', IDENTITY, {})).toBe('ok');
    await new Promise((resolve) => setImmediate(resolve));
    expect(events).toEqual(['write', 'end of turn']);
    events.length = 0;
    expect(await client.call('replies', '_replies.get', IDENTITY, {})).toBe('ok');
    expect(events).toEqual(['end of turn', 'write']);
    expect(isPublicMethod('tasks.get')).toBe(true);
    expect(isPublicMethod('_session.admit')).toBe(false);
  });

  it('discovers nothing, without an error, when no service runs', async () => {
    const found = await pingServices(await bus('client-11'), { timeoutMs: 500, name: 'absent' });
    expect(found).toEqual([]);
  });
});
