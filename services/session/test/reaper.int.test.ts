import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bed } from './support.ts';
import { freshIdentity, sessionEvents, sibling, startBed, waitForSessionEvent } from './support.ts';

interface ListResponse {
  items: { session_id: string; status: string; closed_reason?: string; closed_at?: string }[];
}

describe('idle reaper', () => {
  let bed: Bed;

  beforeAll(async () => {
    bed = await startBed({ env: { SESSION_IDLE_CLOSE_SECONDS: '1', SESSION_REAP_INTERVAL_SECONDS: '0.2' } });
  });

  afterAll(async () => {
    await bed?.stop();
  });

  it('closes an idle session with session.gc_reaped then session.closed', async () => {
    const id = freshIdentity();
    await bed.admit(id);
    const events = await waitForSessionEvent(bed.bus, id, 'session.closed');
    expect(events.map((e) => e.type)).toEqual(['session.opened', 'session.gc_reaped', 'session.closed']);
    const [, reaped, closed] = events;
    expect(Object.keys(reaped!.payload).sort()).toEqual(['ReapedAt', 'Reason', 'SessionID']);
    expect(reaped!.payload).toMatchObject({ SessionID: id.session, Reason: 'idle' });
    expect(Object.keys(closed!.payload).sort()).toEqual(['ClosedAt', 'Reason', 'SessionID']);
    expect(closed!.payload).toMatchObject({ SessionID: id.session, Reason: 'idle' });
    expect(Number.isInteger(closed!.payload.ClosedAt)).toBe(true);
    expect((closed!.payload.ClosedAt as number) - (events[0]!.payload.OpenedAt as number)).toBeGreaterThanOrEqual(1000);
  });

  it('reopens a reaped session on the next start with its history intact', async () => {
    const id = freshIdentity();
    await bed.admit(id);
    await bed.call('sessions.set_title', { identity: {}, title: 'kept across the close' }, id);
    await waitForSessionEvent(bed.bus, id, 'session.closed');
    await expect(bed.admit(id)).resolves.toMatchObject({ state: 'reopened' });
    const events = await sessionEvents(bed.bus, id);
    const reopened = events.at(-1)!;
    expect(reopened.type).toBe('session.reopened');
    expect(Object.keys(reopened.payload).sort()).toEqual(['PriorClosedReason', 'ReopenedAt', 'SessionID']);
    expect(reopened.payload).toMatchObject({ SessionID: id.session, PriorClosedReason: 'idle' });
    const inspected = (await bed.call('sessions.inspect', { identity: {} }, id)) as {
      session: { status: string; title: string; closed_at?: string; created_at: string };
    };
    expect(inspected.session).toMatchObject({ status: 'open', title: 'kept across the close' });
    expect(inspected.session.closed_at).toBeUndefined();
  });

  it('lists closed sessions next to open ones', async () => {
    const id = freshIdentity();
    const later = sibling(id);
    await bed.admit(id);
    await waitForSessionEvent(bed.bus, id, 'session.closed');
    await bed.admit(later);
    const list = (await bed.call('sessions.list', { identity: {} }, id)) as ListResponse;
    const byId = new Map(list.items.map((s) => [s.session_id, s]));
    expect(byId.get(id.session)).toMatchObject({ status: 'closed', closed_reason: 'idle' });
    expect(byId.get(later.session)).toMatchObject({ status: 'open' });
    const closedOnly = (await bed.call(
      'sessions.list',
      { identity: {}, filter: { status: ['closed'] } },
      id,
    )) as ListResponse;
    expect(closedOnly.items.map((s) => s.session_id)).toContain(id.session);
    expect(closedOnly.items.map((s) => s.session_id)).not.toContain(later.session);
  });

  it('does not reap a session that keeps being used', async () => {
    const id = freshIdentity();
    await bed.admit(id);
    // A negative check needs time to pass: keep the session busy for almost two idle periods.
    const until = Date.now() + 1_800;
    while (Date.now() < until) {
      await bed.admit(id);
      await sleep(300);
    }
    const types = (await sessionEvents(bed.bus, id)).map((e) => e.type);
    expect(types).not.toContain('session.closed');
  });
});
