import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectBus, startNatsServer } from '../src/index.ts';
import type { Bus, NatsServerHandle } from '../src/index.ts';
import { createReplyMux, ReplyMuxError } from '../src/reply-mux.ts';
import { tempDir } from './helpers.ts';

const bytes = (text: string) => new TextEncoder().encode(text);

async function reasonOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ReplyMuxError) return error.reason;
    throw error;
  }
  throw new Error('expected a failure');
}

describe('createReplyMux', () => {
  let server: NatsServerHandle;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let bus: Bus;

  beforeAll(async () => {
    dir = await tempDir('reply-mux');
    server = await startNatsServer({ storeDir: dir.path });
    bus = await connectBus({ servers: server.url, name: 'reply-mux-test' });
    bus.nc.subscribe('mux.echo', {
      callback: (_e, msg) => {
        msg.respond(msg.data);
      },
    });
    // Answers after the delay the request names, in ms.
    bus.nc.subscribe('mux.slow', {
      callback: (_e, msg) => {
        setTimeout(() => msg.respond(msg.data), Number(new TextDecoder().decode(msg.data)));
      },
    });
    bus.nc.subscribe('mux.silent', { callback: () => undefined });
    await bus.nc.flush();
  });

  afterAll(async () => {
    await bus?.close();
    await server?.stop();
    await dir?.remove();
  });

  it('matches each reply to its request, whatever order they come back in', async () => {
    const mux = createReplyMux(bus.nc);
    const delays = [60, 5, 30, 0, 45];
    const replies = await Promise.all(
      delays.map((d) => mux.request('mux.slow', bytes(String(d)), { timeoutMs: 5_000 }).then((m) => m.string())),
    );
    expect(replies).toEqual(delays.map(String));
    mux.close();
  });

  it('times out a short request while a longer one still gets its reply', async () => {
    const mux = createReplyMux(bus.nc);
    const short = mux.request('mux.silent', bytes('x'), { timeoutMs: 100 });
    const long = mux.request('mux.slow', bytes('250'), { timeoutMs: 5_000 });
    const started = Date.now();
    expect(await reasonOf(short)).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(2_000);
    expect((await long).string()).toBe('250');
    mux.close();
  });

  it('reports no responders at once instead of waiting for the timeout', async () => {
    const mux = createReplyMux(bus.nc);
    const started = Date.now();
    expect(await reasonOf(mux.request('mux.nobody', bytes('x'), { timeoutMs: 10_000 }))).toBe('no_responders');
    expect(Date.now() - started).toBeLessThan(5_000);
    mux.close();
  });

  it('refuses a request larger than max_payload without sending it', async () => {
    const mux = createReplyMux(bus.nc);
    const tooBig = new Uint8Array(bus.nc.info!.max_payload + 1);
    const failure = mux.request('mux.echo', tooBig, { timeoutMs: 1_000 });
    await expect(failure).rejects.toMatchObject({ reason: 'publish_failed', message: /max_payload/ });
    expect((await mux.request('mux.echo', bytes('still fine'), { timeoutMs: 1_000 })).string()).toBe('still fine');
    mux.close();
  });

  it('fails pending requests when closed, and requests on a closed connection at once', async () => {
    const own = await connectBus({ servers: server.url, name: 'reply-mux-closing' });
    const mux = createReplyMux(own.nc);
    const pending = mux.request('mux.silent', bytes('x'), { timeoutMs: 30_000 });
    await own.nc.flush();
    await own.close();
    expect(await reasonOf(pending)).toBe('closed');
    expect(await reasonOf(mux.request('mux.echo', bytes('x'), { timeoutMs: 30_000 }))).toBe('closed');
  });
});
