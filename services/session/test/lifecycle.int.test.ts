import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outcomeOf } from '@ars/service-kit/testing';
import type { Bed } from './support.ts';
import { freshIdentity, sessionEvents, startBed } from './support.ts';

describe('session lifecycle through _session.admit', () => {
  let bed: Bed;

  beforeAll(async () => {
    bed = await startBed({ env: { SESSION_IDLE_CLOSE_SECONDS: '0' } });
  });

  afterAll(async () => {
    await bed?.stop();
  });

  it('opens a session on first use with session.opened', async () => {
    const id = freshIdentity();
    const before = Date.now();
    await expect(bed.admit(id)).resolves.toMatchObject({ state: 'opened' });
    const events = await sessionEvents(bed.bus, id);
    expect(events.map((e) => e.type)).toEqual(['session.opened']);
    const opened = events[0]!;
    expect(Object.keys(opened.payload).sort()).toEqual(['OpenedAt', 'SessionID']);
    expect(opened.payload.SessionID).toBe(id.session);
    expect(Number.isInteger(opened.payload.OpenedAt)).toBe(true);
    expect(opened.payload.OpenedAt as number).toBeGreaterThanOrEqual(before);
    expect(opened).toMatchObject({ tenant: id.tenant, user: id.user, session: id.session, run: '' });
  });

  it('answers how long the admission may be reused (SESSION_ADMISSION_REUSE_SECONDS, 10 s by default)', async () => {
    const id = freshIdentity();
    await expect(bed.admit(id)).resolves.toEqual({ state: 'opened', reuse_ms: 10_000 });
    await expect(bed.admit(id)).resolves.toEqual({ state: 'open', reuse_ms: 10_000 });
  });

  it('treats a later start on an open session as a normal turn with session.touched', async () => {
    const id = freshIdentity();
    await bed.admit(id);
    await expect(bed.admit(id)).resolves.toMatchObject({ state: 'open' });
    const events = await sessionEvents(bed.bus, id);
    expect(events.map((e) => e.type)).toEqual(['session.opened', 'session.touched']);
    const touched = events[1]!;
    expect(Object.keys(touched.payload).sort()).toEqual(['LastSeen', 'SessionID']);
    expect(touched.payload.SessionID).toBe(id.session);
    expect(touched.payload.LastSeen as number).toBeGreaterThanOrEqual(events[0]!.payload.OpenedAt as number);
  });

  it('moves last_seen_at forward on a turn', async () => {
    const id = freshIdentity();
    await bed.admit(id);
    const first = (await bed.call('sessions.inspect', { identity: {} }, id)) as { session: { last_seen_at: string } };
    await bed.admit(id);
    const second = (await bed.call('sessions.inspect', { identity: {} }, id)) as { session: { last_seen_at: string } };
    expect(second.session.last_seen_at >= first.session.last_seen_at).toBe(true);
  });

  it('opens a new session exactly once when starts race', async () => {
    const id = freshIdentity();
    const states = await Promise.all(Array.from({ length: 12 }, () => bed.admit(id)));
    expect(states.filter((s) => (s as { state: string }).state === 'opened')).toHaveLength(1);
    expect(states.filter((s) => (s as { state: string }).state === 'open')).toHaveLength(11);
    const types = (await sessionEvents(bed.bus, id)).map((e) => e.type);
    expect(types.filter((t) => t === 'session.opened')).toHaveLength(1);
  });

  it('keeps sessions of different owners with the same session id apart', async () => {
    const a = freshIdentity();
    const b = { ...freshIdentity(), session: a.session };
    await expect(bed.admit(a)).resolves.toMatchObject({ state: 'opened' });
    await expect(bed.admit(b)).resolves.toMatchObject({ state: 'opened' });
  });

  it('refuses an incomplete admit body with invalid_request', async () => {
    const id = freshIdentity();
    const outcome = await outcomeOf(bed.service.rpc.call('session', '_session.admit', id, { tenant: id.tenant }));
    expect(outcome).toMatchObject({ ok: false, code: 'invalid_request' });
  });

  it('refuses a start on an erased session with session_erased', async () => {
    const id = freshIdentity();
    await bed.admit(id);
    await bed.call('sessions.delete', { identity: {} }, id);
    const outcome = await outcomeOf(bed.admit(id));
    expect(outcome).toMatchObject({ ok: false, code: 'session_erased' });
  });
});
