import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceError } from '@ars/contracts';
import {
  connectBus,
  headers,
  isConnectionUp,
  isStreamUnreachable,
  publishToStream,
  startNatsServer,
  StreamPublishError,
} from '../src/index.ts';
import type { Bus, NatsServerHandle } from '../src/index.ts';
import { tempDir } from './helpers.ts';

const bytes = (text: string) => new TextEncoder().encode(text);

describe('publishToStream', () => {
  let server: NatsServerHandle;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let bus: Bus;

  beforeAll(async () => {
    dir = await tempDir('stream-publish');
    server = await startNatsServer({ storeDir: dir.path });
    bus = await connectBus({ servers: server.url, name: 'stream-publish-test' });
    await bus.jsm.streams.add({ name: 'SP', subjects: ['sp.>'], duplicate_window: 60_000_000_000 });
  });

  afterAll(async () => {
    await bus?.close();
    await server?.stop();
    await dir?.remove();
  });

  it('resolves to the stream and sequence, and drops a second message with the same id', async () => {
    const first = await publishToStream(bus.nc, 'sp.a', bytes('one'), { msgId: 'm-1' });
    const again = await publishToStream(bus.nc, 'sp.a', bytes('one'), { msgId: 'm-1' });
    const other = await publishToStream(bus.nc, 'sp.a', bytes('two'));
    expect(first).toEqual({ stream: 'SP', seq: first.seq, duplicate: false });
    expect(again).toEqual({ stream: 'SP', seq: first.seq, duplicate: true });
    expect(other.seq).toBe(first.seq + 1);
    const stored = await bus.jsm.streams.getMessage('SP', { seq: first.seq });
    expect(stored?.header.get('Nats-Msg-Id')).toBe('m-1');
  });

  it('keeps the headers it was given beside the id', async () => {
    const h = headers();
    h.set('ars-source', 'test');
    const ack = await publishToStream(bus.nc, 'sp.b', bytes('x'), { msgId: 'm-2', headers: h });
    const stored = await bus.jsm.streams.getMessage('SP', { seq: ack.seq });
    expect(stored?.header.get('ars-source')).toBe('test');
    expect(stored?.header.get('Nats-Msg-Id')).toBe('m-2');
  });

  it('reports a refusal with the JetStream error code', async () => {
    const h = headers();
    h.set('Nats-Expected-Last-Subject-Sequence', '999999');
    const failure = await publishToStream(bus.nc, 'sp.c', bytes('x'), { headers: h }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(StreamPublishError);
    expect((failure as StreamPublishError).code).toBe(10071);
    // A refusal stays one: trying again would not store it.
    expect(isStreamUnreachable(failure)).toBe(false);
  });

  it('reports a subject no stream takes as 503 at once', async () => {
    const started = Date.now();
    const failure = await publishToStream(bus.nc, 'nostream.x', bytes('x'), { timeoutMs: 10_000 }).catch(
      (e: unknown) => e,
    );
    expect(failure).toMatchObject({ name: 'StreamPublishError', code: 503 });
    expect(Date.now() - started).toBeLessThan(5_000);
    // No stream answered (as while nats-server restarts): a later try may store it, also behind a wrapper.
    expect(isStreamUnreachable(failure)).toBe(true);
    expect(isStreamUnreachable(new ServiceError('unavailable', 'not stored', { cause: failure }))).toBe(true);
  });

  it('reports no acknowledgement in time as 408, which a later try may store', async () => {
    // A subscriber that never answers stands for a stream that does not acknowledge.
    const silent = bus.nc.subscribe('silent.x', { callback: () => undefined });
    const failure = await publishToStream(bus.nc, 'silent.x', bytes('x'), { timeoutMs: 200 }).catch((e: unknown) => e);
    silent.unsubscribe();
    expect(failure).toMatchObject({ name: 'StreamPublishError', code: 408 });
    expect(isStreamUnreachable(failure)).toBe(true);
    expect(isStreamUnreachable(new Error('other'))).toBe(false);
    expect(isStreamUnreachable(undefined)).toBe(false);
  });
});

describe('publishToStream across a nats-server crash', () => {
  let server: NatsServerHandle;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let bus: Bus;

  beforeAll(async () => {
    dir = await tempDir('stream-publish-crash');
    server = await startNatsServer({ storeDir: dir.path });
    bus = await connectBus({ servers: server.url, name: 'stream-publish-crash-test' });
    await bus.jsm.streams.add({ name: 'SPC', subjects: ['spc.>'] });
  });

  afterAll(async () => {
    await bus?.close();
    await server?.stop();
    await dir?.remove();
  });

  const disconnected = async () => {
    for (let i = 0; !(i > 0 && !isConnectionUp(bus.nc)); i++) {
      if (i > 500) throw new Error('the client did not notice the server going away');
      await sleep(10);
    }
  };

  it('fails a publish whose acknowledgement was due when the connection dropped at once, and refuses one while it is down unsent', async () => {
    // A stopped server takes the message and never answers; the crash then drops the connection.
    await server.freeze();
    const started = Date.now();
    const pending = publishToStream(bus.nc, 'spc.a', bytes('due'), { timeoutMs: 30_000 }).catch((e: unknown) => e);
    await sleep(100);
    server.kill();
    process.kill(server.pid, 'SIGCONT');
    const dropped = await pending;
    expect(dropped).toMatchObject({ name: 'StreamPublishError', code: 0 });
    expect(isStreamUnreachable(dropped)).toBe(true);
    expect(Date.now() - started).toBeLessThan(20_000);

    await disconnected();
    const at = Date.now();
    const refused = await publishToStream(bus.nc, 'spc.a', bytes('refused'), { timeoutMs: 30_000 }).catch(
      (e: unknown) => e,
    );
    expect(Date.now() - at).toBeLessThan(1_000);
    expect(refused).toMatchObject({ name: 'StreamPublishError', code: 503 });
    expect(isStreamUnreachable(refused)).toBe(true);

    server = await server.restart();
    for (let i = 0; !isConnectionUp(bus.nc); i++) {
      if (i > 1_000) throw new Error('the client did not reconnect');
      await sleep(10);
    }
    const ack = await publishToStream(bus.nc, 'spc.a', bytes('after'), { timeoutMs: 10_000 });
    // The refused message was never sent, and the one due at the crash never stored.
    expect(ack.seq).toBe(1);
  }, 60_000);
});
