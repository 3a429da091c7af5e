import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENTS_STREAM } from '@ars/bus';
import { STATE_RECORDS_CONSUMER } from '../src/consumers/task-events.ts';
import type { Bed } from './support.ts';
import { freshIdentity, publishRun, sibling, startBed, waitFor } from './support.ts';

interface History {
  items: { seq: number; kind: string; task_id?: string; status?: string }[];
}

describe('session catalog across restarts', () => {
  let bed: Bed;

  beforeAll(async () => {
    bed = await startBed({ persistent: true, env: { SESSION_IDLE_CLOSE_SECONDS: '0' } });
  });

  afterAll(async () => {
    await bed?.stop();
  });

  it('keeps sessions, titles and tombstones when the service restarts on the same data directory', async () => {
    const id = freshIdentity();
    const other = sibling(id);
    const erased = sibling(id);
    await bed.admit(id);
    await bed.admit(other);
    await bed.admit(erased);
    await bed.call('sessions.set_title', { identity: {}, title: 'survives restarts' }, id);
    await bed.call('sessions.delete', { identity: {} }, erased);

    await bed.restart();

    const list = (await bed.call('sessions.list', { identity: {} }, id)) as { items: { session_id: string }[] };
    expect(list.items.map((s) => s.session_id).sort()).toEqual([id.session, other.session].sort());
    const inspected = (await bed.call('sessions.inspect', { identity: {} }, id)) as { session: { title: string } };
    expect(inspected.session.title).toBe('survives restarts');
    await expect(bed.admit(id)).resolves.toMatchObject({ state: 'open' });
    await expect(bed.admit(erased)).rejects.toMatchObject({ code: 'session_erased' });
  });

  it('records nothing twice when the state-record consumer replays the whole stream', async () => {
    const id = freshIdentity();
    bed.fakes.queries.set(`${id.session}-r1`, 'first question');
    await bed.admit(id);
    await publishRun(bed, id, `${id.session}-r1`);
    const before = await waitFor(async () => {
      const history = (await bed.call('state.history', { identity: {} }, id)) as History;
      return history.items.length === 4 ? history : undefined;
    }, 'four state records');

    // A fresh durable consumer starts again from the first retained event.
    await bed.service.stop();
    await bed.bus.jsm.consumers.delete(EVENTS_STREAM, STATE_RECORDS_CONSUMER);
    await bed.restart();
    await waitFor(async () => {
      const info = await bed.bus.jsm.consumers.info(EVENTS_STREAM, STATE_RECORDS_CONSUMER);
      return info.num_pending === 0 && info.num_ack_pending === 0;
    }, 'the replay to finish');

    const after = (await bed.call('state.history', { identity: {} }, id)) as History;
    expect(after.items).toEqual(before.items);
    const inspected = (await bed.call('sessions.inspect', { identity: {} }, id)) as { session: { task_count: number } };
    expect(inspected.session.task_count).toBe(1);
  });
});
