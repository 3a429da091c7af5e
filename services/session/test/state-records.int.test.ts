import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StateHistoryResponse } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import { outcomeOf } from '@ars/service-kit/testing';
import { ACTIVITY_RESOLUTION_MS } from '../src/store/session.repository.ts';
import type { Bed } from './support.ts';
import {
  bodyIdentity,
  freshIdentity,
  publishRun,
  publishTask,
  sessionEvents,
  sibling,
  startBed,
  waitFor,
  waitForSessionEvent,
} from './support.ts';

interface StateRecordView {
  seq: number;
  kind: string;
  task_id?: string;
  status?: string;
  prior_status?: string;
  role?: string;
  content?: string;
  occurred_at: string;
}
interface History {
  session_id: string;
  items: StateRecordView[];
  next_cursor?: string;
}

describe('state records from task events', () => {
  let bed: Bed;

  beforeAll(async () => {
    bed = await startBed({ env: { SESSION_IDLE_CLOSE_SECONDS: '0' } });
  });

  afterAll(async () => {
    await bed?.stop();
  });

  const history = async (identity: VerifiedIdentity, body = {}) =>
    (await bed.call('state.history', { identity: bodyIdentity(identity), ...body }, identity)) as History;

  const waitForRecords = (identity: VerifiedIdentity, count: number) =>
    waitFor(async () => {
      const h = await history(identity, { limit: 500 });
      return h.items.length >= count ? h : undefined;
    }, `${count} state records`);

  const runId = () => `run-${randomUUID().slice(0, 8)}`;

  it('records every transition of a run and its turn, in order, with prior statuses', async () => {
    const id = freshIdentity();
    const run = runId();
    bed.fakes.queries.set(run, 'How tall is the Eiffel tower?');
    await bed.admit(id);
    await publishRun(bed, id, run);
    const h = await waitForRecords(id, 4);
    expect(StateHistoryResponse.safeParse(h).success).toBe(true);
    expect(h.session_id).toBe(id.session);
    expect(h.items.map((r) => [r.kind, r.status ?? r.role, r.prior_status])).toEqual([
      ['turn', 'user', undefined],
      ['task_state', 'pending', undefined],
      ['task_state', 'running', 'pending'],
      ['task_state', 'complete', 'running'],
    ]);
    expect(h.items[0]).toMatchObject({ task_id: run, content: 'How tall is the Eiffel tower?' });
    const seqs = h.items.map((r) => r.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
  });

  it('records the turn from the query passed with _session.admit, without reading the task back', async () => {
    const id = freshIdentity();
    const run = runId();
    await bed.service.rpc.call('session', '_session.admit', id, {
      ...bodyIdentity(id),
      turn: { task_id: run, query: 'Passed along with the admission' },
    });
    await publishRun(bed, id, run);
    const h = await waitForRecords(id, 4);
    expect(h.items[0]).toMatchObject({ kind: 'turn', task_id: run, content: 'Passed along with the admission' });
    expect(bed.fakes.calls.filter((c) => c.endpoint === 'run-executor/tasks.get' && c.body.task_id === run)).toEqual(
      [],
    );
  });

  it('refuses an admission whose turn is malformed, with invalid_request', async () => {
    const id = freshIdentity();
    for (const turn of [{ task_id: '', query: 'q' }, { task_id: 'x' }, { task_id: 'x', query: 1 }, 'x']) {
      await expect(
        bed.service.rpc.call('session', '_session.admit', id, { ...bodyIdentity(id), turn }),
      ).rejects.toMatchObject({ code: 'invalid_request' });
    }
  });

  it('records failed and cancelled runs with their terminal status', async () => {
    const id = freshIdentity();
    const [failed, cancelled] = [runId(), runId()];
    await bed.admit(id);
    await publishRun(bed, id, failed, 'task.failed');
    await publishRun(bed, id, cancelled, 'task.cancelled');
    const h = await waitForRecords(id, 8);
    const terminal = h.items.filter((r) => r.kind === 'task_state' && r.prior_status === 'running');
    expect(terminal.map((r) => [r.task_id, r.status])).toEqual([
      [failed, 'failed'],
      [cancelled, 'cancelled'],
    ]);
  });

  it('pages through the history with limit and cursor, oldest first', async () => {
    const id = freshIdentity();
    await bed.admit(id);
    await publishRun(bed, id, runId());
    await publishRun(bed, id, runId());
    const all = await waitForRecords(id, 8);
    const pages: StateRecordView[] = [];
    let cursor: string | undefined;
    do {
      const page = await history(id, { limit: 3, ...(cursor === undefined ? {} : { cursor }) });
      expect(page.items.length).toBeLessThanOrEqual(3);
      pages.push(...page.items);
      cursor = page.next_cursor;
    } while (cursor !== undefined);
    expect(pages).toEqual(all.items);
  });

  it('filters the history by run and by kind', async () => {
    const id = freshIdentity();
    const [first, second] = [runId(), runId()];
    await bed.admit(id);
    await publishRun(bed, id, first);
    await publishRun(bed, id, second);
    await waitForRecords(id, 8);
    const ofSecond = await history(id, { filter: { run: second } });
    expect(new Set(ofSecond.items.map((r) => r.task_id))).toEqual(new Set([second]));
    expect(ofSecond.items).toHaveLength(4);
    const turns = await history(id, { filter: { kinds: ['turn'] } });
    expect(turns.items.map((r) => r.task_id)).toEqual([first, second]);
  });

  it('records a sub-task transitions but no turn for it', async () => {
    const id = freshIdentity();
    const [parent, child] = [runId(), runId()];
    await bed.admit(id);
    await publishTask(bed, id, 'task.spawned', parent);
    await publishTask(bed, id, 'task.spawned', child, { ParentTaskID: parent });
    const h = await waitForRecords(id, 3);
    expect(h.items.filter((r) => r.kind === 'turn').map((r) => r.task_id)).toEqual([parent]);
  });

  it('refuses a cursor it did not make with invalid_request', async () => {
    const id = freshIdentity();
    await bed.admit(id);
    const outcome = await outcomeOf(bed.call('state.history', { identity: {}, cursor: 'bm90LWEtY3Vyc29y' }, id));
    expect(outcome).toMatchObject({ ok: false, code: 'invalid_request' });
  });

  it("answers another identity's history to admin only, else not_found like a missing session", async () => {
    const owner = freshIdentity();
    await bed.admit(owner);
    await publishRun(bed, owner, runId());
    await waitForRecords(owner, 4);
    const stranger = freshIdentity();
    const refused = await outcomeOf(bed.call('state.history', { identity: bodyIdentity(owner) }, stranger));
    const missing = await outcomeOf(bed.call('state.history', { identity: bodyIdentity(sibling(owner)) }, owner));
    expect(refused).toMatchObject({ ok: false, code: 'not_found' });
    expect(missing).toEqual(refused);
    const fleet = await outcomeOf(
      bed.call('state.history', { identity: bodyIdentity(owner) }, freshIdentity(['console:fleet'])),
    );
    expect(fleet).toEqual(refused);
    const admin = (await bed.call(
      'state.history',
      { identity: bodyIdentity(owner) },
      freshIdentity(['admin']),
    )) as History;
    expect(admin.items).toHaveLength(4);
  });

  it('answers not_found for a session that was never used', async () => {
    const id = freshIdentity();
    const outcome = await outcomeOf(bed.call('state.history', { identity: {} }, id));
    expect(outcome).toMatchObject({ ok: false, code: 'not_found', message: 'state.history: not found' });
  });

  it('opens a session it first sees on the event stream', async () => {
    const id = freshIdentity();
    const run = runId();
    await publishTask(bed, id, 'task.spawned', run);
    const events = await waitForSessionEvent(bed.bus, id, 'session.opened');
    expect(events[0]!.payload).toMatchObject({ SessionID: id.session });
    await waitForRecords(id, 2);
    // The spawn that opened it is its first task.
    const inspected = (await bed.call('sessions.inspect', { identity: {} }, id)) as {
      last_task_id?: string;
      session: { task_count: number };
    };
    expect(inspected.session.task_count).toBe(1);
    expect(inspected.last_task_id).toBe(run);
  });

  it('counts tasks per status and artifacts in sessions.inspect', async () => {
    const id = freshIdentity();
    const [done, running] = [runId(), runId()];
    await bed.admit(id);
    await publishRun(bed, id, done);
    await publishTask(bed, id, 'task.spawned', running);
    await publishTask(bed, id, 'task.started', running);
    for (const artifact of ['a1', 'a2', 'a3']) {
      await bed.publisher.publish({
        type: 'artifacts.uploaded',
        identity: bodyIdentity(id),
        payload: { artifact_id: `${id.session}-${artifact}`, size_bytes: 3 },
      });
    }
    await bed.publisher.publish({
      type: 'artifacts.deleted',
      identity: bodyIdentity(id),
      payload: { artifact_id: `${id.session}-a2` },
    });
    const inspected = await waitFor(async () => {
      const r = (await bed.call('sessions.inspect', { identity: {} }, id)) as {
        task_counts: { running: number; complete: number };
        artifact_count: number;
        last_task_id?: string;
        session: { task_count: number };
      };
      // Both runs' events and the artifact events reach the session on two consumers: wait for all of them.
      return r.task_counts.running === 1 && r.task_counts.complete === 1 && r.artifact_count === 2 ? r : undefined;
    }, 'the counters');
    expect(inspected.task_counts).toEqual({ pending: 0, running: 1, paused: 0, complete: 1, failed: 0, cancelled: 0 });
    expect(inspected.session.task_count).toBe(2);
    expect(inspected.last_task_id).toBe(running);
  });

  it('moves last_seen_at forward with task activity a second or more after the last', async () => {
    const id = freshIdentity();
    await bed.admit(id);
    const first = (await bed.call('sessions.inspect', { identity: {} }, id)) as { session: { last_seen_at: string } };
    await sleep(ACTIVITY_RESOLUTION_MS + 50);
    await publishRun(bed, id, runId());
    await waitFor(async () => {
      const now = (await bed.call('sessions.inspect', { identity: {} }, id)) as { session: { last_seen_at: string } };
      return now.session.last_seen_at > first.session.last_seen_at;
    }, 'last_seen_at to move');
  });

  it('writes no last_seen_at for task activity within a second of the last, but still counts the task', async () => {
    const id = freshIdentity();
    await bed.admit(id);
    type Inspected = { session: { last_seen_at: string; task_count: number } };
    const first = (await bed.call('sessions.inspect', { identity: {} }, id)) as Inspected;
    await publishRun(bed, id, runId());
    // Every event of the run was stamped before this instant.
    const publishedWithin = Date.now() - Date.parse(first.session.last_seen_at);
    // The consumer handles events in stream order: once a later session's
    // spawn is counted, every event of the run above was handled.
    const barrier = freshIdentity();
    await bed.admit(barrier);
    await publishTask(bed, barrier, 'task.spawned', runId());
    await waitFor(async () => {
      const now = (await bed.call('sessions.inspect', { identity: {} }, barrier)) as Inspected;
      return now.session.task_count === 1;
    }, 'the barrier spawn');
    const after = (await bed.call('sessions.inspect', { identity: {} }, id)) as Inspected;
    expect(after.session.task_count).toBe(1);
    // A machine stalled for a second between the admission and the events sees them move it, as it should.
    if (publishedWithin < ACTIVITY_RESOLUTION_MS) expect(after.session.last_seen_at).toBe(first.session.last_seen_at);
    else expect(after.session.last_seen_at > first.session.last_seen_at).toBe(true);
  });

  describe('automatic titles', () => {
    it('names the session from its first query with session.title_changed Source auto', async () => {
      const id = freshIdentity();
      const [first, second] = [runId(), runId()];
      bed.fakes.queries.set(first, '  Plan a trip to Lisbon\nwith two kids in May');
      bed.fakes.queries.set(second, 'Something else entirely');
      await bed.admit(id);
      await publishTask(bed, id, 'task.spawned', first);
      await publishTask(bed, id, 'task.spawned', second);
      const events = await waitForSessionEvent(bed.bus, id, 'session.title_changed');
      const changed = events.filter((e) => e.type === 'session.title_changed');
      expect(changed).toHaveLength(1);
      expect(changed[0]!.payload).toEqual({ SessionID: id.session, Source: 'auto' });
      await waitForRecords(id, 4);
      const inspected = (await bed.call('sessions.inspect', { identity: {} }, id)) as {
        session: { title: string; title_source: string };
      };
      expect(inspected.session).toMatchObject({ title: 'Plan a trip to Lisbon', title_source: 'auto' });
      const getCall = bed.fakes.calls.find((c) => c.endpoint === 'run-executor/tasks.get' && c.body.task_id === first);
      expect(getCall?.body.caller).toMatchObject({ tenant: id.tenant, user: id.user, session: id.session });
    });

    it('reports session.naming_failed with the error class when the query cannot be read', async () => {
      const id = freshIdentity();
      await bed.admit(id);
      await publishTask(bed, id, 'task.spawned', runId()); // the fake tasks.get does not know it: not_found
      const events = await waitForSessionEvent(bed.bus, id, 'session.naming_failed');
      const failed = events.find((e) => e.type === 'session.naming_failed')!;
      expect(failed.payload).toEqual({ SessionID: id.session, ErrorClass: 'not_found' });
      const h = await waitForRecords(id, 2);
      expect(h.items[0]).toMatchObject({ kind: 'turn', role: 'user' });
      expect(h.items[0]!.content).toBeUndefined();
    });

    it('reports empty_query when the first query has no visible text', async () => {
      const id = freshIdentity();
      const run = runId();
      bed.fakes.queries.set(run, ' \n\t ');
      await bed.admit(id);
      await publishTask(bed, id, 'task.spawned', run);
      const events = await waitForSessionEvent(bed.bus, id, 'session.naming_failed');
      expect(events.find((e) => e.type === 'session.naming_failed')!.payload).toEqual({
        SessionID: id.session,
        ErrorClass: 'empty_query',
      });
    });

    it('never replaces a manual title', async () => {
      const id = freshIdentity();
      const run = runId();
      bed.fakes.queries.set(run, 'An automatic title');
      await bed.admit(id);
      await bed.call('sessions.set_title', { identity: {}, title: 'Mine' }, id);
      await publishTask(bed, id, 'task.spawned', run);
      await waitForRecords(id, 2);
      const inspected = (await bed.call('sessions.inspect', { identity: {} }, id)) as {
        session: { title: string; title_source: string };
      };
      expect(inspected.session).toMatchObject({ title: 'Mine', title_source: 'manual' });
      const sources = (await sessionEvents(bed.bus, id))
        .filter((e) => e.type === 'session.title_changed')
        .map((e) => e.payload.Source);
      expect(sources).toEqual(['manual']);
    });
  });
});
