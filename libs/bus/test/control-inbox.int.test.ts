import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ControlDeliveryError,
  connectBus,
  controlSubject,
  maxPayloadOf,
  requestControl,
  serveControlInbox,
  startNatsServer,
} from '../src/index.ts';
import type { Bus, ControlInboxReply, NatsServerHandle } from '../src/index.ts';
import { tempDir } from './helpers.ts';

async function failureOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ControlDeliveryError) return error.reason;
    throw error;
  }
  throw new Error('expected a failure');
}

describe('the control inbox', () => {
  let server: NatsServerHandle;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let runSide: Bus;
  let apiSide: Bus;

  beforeAll(async () => {
    dir = await tempDir('control-inbox');
    server = await startNatsServer({ storeDir: dir.path });
    runSide = await connectBus({ servers: server.url, name: 'control-inbox-run' });
    apiSide = await connectBus({ servers: server.url, name: 'control-inbox-api' });
  });

  afterAll(async () => {
    await apiSide?.close();
    await runSide?.close();
    await server?.stop();
    await dir?.remove();
  });

  it("delivers a control's JSON body to the live inbox and returns its answer", async () => {
    const received: unknown[] = [];
    const inbox = serveControlInbox(runSide, 'task-1', (body, reply) => {
      received.push(body);
      reply({ accepted: true });
    });
    await runSide.nc.flush();
    const answer = await requestControl(
      apiSide,
      'task-1',
      { method: 'cancel', payload: { hard: true } },
      { timeoutMs: 2_000 },
    );
    expect(answer).toEqual({ accepted: true });
    expect(received).toEqual([{ method: 'cancel', payload: { hard: true } }]);
    inbox.close();
  });

  it('returns a refusal with its code and message', async () => {
    const refusal: ControlInboxReply = {
      accepted: false,
      code: 'invalid_request',
      message: 'malformed control envelope',
    };
    const inbox = serveControlInbox(runSide, 'task-2', (_body, reply) => reply(refusal));
    await runSide.nc.flush();
    expect(await requestControl(apiSide, 'task-2', {}, { timeoutMs: 2_000 })).toEqual(refusal);
    inbox.close();
  });

  it('hands a body that is not JSON to the inbox as undefined', async () => {
    const received: unknown[] = [];
    const inbox = serveControlInbox(runSide, 'task-3', (body, reply) => {
      received.push(body);
      reply({ accepted: true });
    });
    await runSide.nc.flush();
    await apiSide.nc.request(controlSubject('task-3'), new TextEncoder().encode('{not json'), { timeout: 2_000 });
    expect(received).toEqual([undefined]);
    inbox.close();
  });

  it('fails no_live_inbox when no run listens, at once', async () => {
    const started = Date.now();
    expect(await failureOf(requestControl(apiSide, 'task-none', {}, { timeoutMs: 5_000 }))).toBe('no_live_inbox');
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('fails timeout when the inbox does not answer in time', async () => {
    const inbox = serveControlInbox(runSide, 'task-4', () => undefined);
    await runSide.nc.flush();
    expect(await failureOf(requestControl(apiSide, 'task-4', {}, { timeoutMs: 200 }))).toBe('timeout');
    inbox.close();
  });

  it('fails malformed_reply on an answer that is not a control reply', async () => {
    const sub = runSide.nc.subscribe(controlSubject('task-5'), {
      callback: (_error, msg) => {
        msg.respond(new TextEncoder().encode('{"ok":true}'));
      },
    });
    await runSide.nc.flush();
    expect(await failureOf(requestControl(apiSide, 'task-5', {}, { timeoutMs: 2_000 }))).toBe('malformed_reply');
    sub.unsubscribe();
  });

  it('stops answering once closed: the run has no live inbox any more', async () => {
    const inbox = serveControlInbox(runSide, 'task-6', (_body, reply) => reply({ accepted: true }));
    await runSide.nc.flush();
    expect(await requestControl(apiSide, 'task-6', {}, { timeoutMs: 2_000 })).toEqual({ accepted: true });
    inbox.close();
    await runSide.nc.flush();
    await expect.poll(() => failureOf(requestControl(apiSide, 'task-6', {}, { timeoutMs: 500 }))).toBe('no_live_inbox');
  });

  it("reads the server's max_payload", () => {
    expect(maxPayloadOf(apiSide)).toBe(1_048_576);
  });
});
