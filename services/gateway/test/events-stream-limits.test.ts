import { afterEach, describe, expect, it, vi } from 'vitest';
import { getEvent } from '@ars/contracts';
import { createHarness, openEventStream } from './support/harness.ts';
import type { Harness } from './support/harness.ts';
import type { AppendEvent } from './support/memory-event-log.ts';
import { SseReader } from './support/sse-reader.ts';

const OWN = { tenant: 't1', user: 'u1', session: 's1' } as const;
const event = (run: string, extra: Partial<AppendEvent> = {}): AppendEvent => ({
  ...OWN,
  run,
  type: 'task.started',
  payload: { TaskID: run.padEnd(200, 'x'), PriorState: 'pending' },
  ...extra,
});

let h: Harness | undefined;
const aborts: AbortController[] = [];

afterEach(async () => {
  for (const abort of aborts.splice(0)) abort.abort();
  await h?.close();
  h = undefined;
});

async function open(limits: Parameters<typeof createHarness>[0]) {
  h = await createHarness(limits);
  const { response, abort } = await openEventStream(h);
  aborts.push(abort);
  expect(response.statusCode).toBe(200);
  return response;
}

describe('events.subscribe: connection limits', () => {
  it('writes a heartbeat comment on a quiet stream', async () => {
    const response = await open({ events: { heartbeatMs: 100 } });
    const reader = new SseReader(response.stream());
    await reader.until((r) => r.blocks.some((block) => block.comment === 'hb'));
    expect(reader.frames).toEqual([]);
  });

  it('closes an idle subscription with bus.subscription_idle_closed', async () => {
    const response = await open({ events: { heartbeatMs: 100, idleCloseMs: 300 } });
    const reader = new SseReader(response.stream());
    await reader.until((r) => r.named('replay.complete').length > 0);
    h!.log.append(event('mine'));
    h!.log.append(event('theirs', { session: 'other' }));
    await reader.waitEnd(3_000);
    const [first, notice] = reader.frames;
    expect(first?.frame.sequence).toBe(1);
    expect(notice?.frame).toMatchObject({ type: 'bus.subscription_idle_closed', sequence: 2, ...OWN });
    expect(notice?.id).toBe('2');
    expect(notice!.frame.payload.IdleSeconds).toBeGreaterThanOrEqual(0.3);
    expect(getEvent('bus.subscription_idle_closed')!.payload.safeParse(notice!.frame.payload).success).toBe(true);
    expect(h!.hub.size).toBe(0);
  });

  it('never closes an idle subscription when the idle limit is 0', async () => {
    const response = await open({ events: { heartbeatMs: 50, idleCloseMs: 0 } });
    const reader = new SseReader(response.stream());
    await reader.until((r) => r.blocks.filter((block) => block.comment === 'hb').length >= 4);
    expect(reader.ended).toBe(false);
  });

  it('drops a subscriber whose socket stays backed up past its buffer, naming what it missed', async () => {
    const response = await open({ events: { heartbeatMs: 60_000, subscriberBufferBytes: 8_192 } });
    await vi.waitFor(() => expect(h!.hub.size).toBe(1));
    // Nobody reads the response yet: the socket backs up, then the bounded queue overflows.
    for (let i = 0; i < 300; i++) h!.log.append(event(`r${i}`));
    await vi.waitFor(() => expect(h!.hub.size).toBe(0));
    const reader = new SseReader(response.stream());
    await reader.waitEnd();
    const frames = reader.frames;
    const notice = frames.at(-1)!;
    const delivered = frames.slice(0, -1).map((block) => block.frame.sequence);
    expect(notice.frame.type).toBe('bus.dropped');
    const payload = notice.frame.payload as Record<string, number>;
    expect(payload.FromSeq).toBe(delivered.at(-1)! + 1);
    expect(payload.DroppedCount).toBe(payload.ToSeq! - payload.FromSeq! + 1);
    expect(notice.id).toBe(String(payload.ToSeq));
    expect(notice.frame.sequence).toBe(payload.ToSeq);
    expect(payload.ToSeq).toBeLessThan(300);
    expect(delivered).toEqual(Array.from({ length: delivered.length }, (_, i) => i + 1));
  });
});
