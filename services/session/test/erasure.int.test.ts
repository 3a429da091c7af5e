import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EVENTS_STREAM } from '@ars/bus';
import { ServiceError, SessionsDeleteResponse } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import { databaseName } from '@ars/service-kit';
import { outcomeOf } from '@ars/service-kit/testing';
import { openStore } from '@ars/store';
import { STATE_RECORDS_CONSUMER } from '../src/consumers/task-events.ts';
import { SESSION_TASK_TOTALS_COLLECTION, SESSION_TASKS_COLLECTION } from '../src/store/projection.repository.ts';
import { STATE_RECORDS_COLLECTION } from '../src/store/state-record.repository.ts';
import type { Bed } from './support.ts';
import {
  bodyIdentity,
  freshIdentity,
  publishRun,
  publishTask,
  readEvents,
  sessionEvents,
  sibling,
  startBed,
  waitFor,
  waitForSessionEvent,
} from './support.ts';

interface Receipt {
  session_id: string;
  erased: boolean;
  tasks_deleted: number;
  state_records_deleted: number;
  artifacts_deleted: number;
  memory_purged: boolean;
  events_purged: boolean;
  erased_at: string;
}

describe('sessions.delete (right to erasure)', () => {
  let bed: Bed;

  beforeAll(async () => {
    bed = await startBed({ persistent: true, env: { SESSION_IDLE_CLOSE_SECONDS: '0' } });
  });

  afterAll(async () => {
    await bed?.stop();
  });

  beforeEach(() => {
    bed.fakes.tasks = () => ({ tasks_deleted: 0, state_records_deleted: 0 });
    bed.fakes.artifacts = () => ({ artifacts_deleted: 0 });
    bed.fakes.memory = () => ({ purged: true });
  });

  const erase = async (identity: VerifiedIdentity) =>
    (await bed.call('sessions.delete', { identity: bodyIdentity(identity) }, identity)) as Receipt;
  const callsFor = (identity: VerifiedIdentity, endpoint: string) =>
    bed.fakes.calls.filter((c) => c.endpoint === endpoint && c.body.session === identity.session);
  const runId = () => `run-${randomUUID().slice(0, 8)}`;
  const stateRecordCount = async (identity: VerifiedIdentity) =>
    ((await bed.call('state.history', { identity: {}, limit: 500 }, identity)) as { items: unknown[] }).items.length;
  const consumerCaughtUp = () =>
    waitFor(async () => {
      const info = await bed.bus.jsm.consumers.info(EVENTS_STREAM, STATE_RECORDS_CONSUMER);
      return info.num_pending === 0 && info.num_ack_pending === 0;
    }, 'the state-record consumer to catch up');

  it('refuses a body identity differing from the verified one with identity_required, admin included', async () => {
    const me = freshIdentity(['admin', 'console:fleet']);
    await bed.admit(me);
    for (const component of ['tenant', 'user', 'session'] as const) {
      const identity = { ...bodyIdentity(me), [component]: 'someone-else' };
      const outcome = await outcomeOf(bed.call('sessions.delete', { identity }, me));
      expect(outcome).toMatchObject({ ok: false, code: 'identity_required' });
    }
    await expect(bed.admit(me)).resolves.toMatchObject({ state: 'open' });
  });

  it('erases everything of the session and answers the real counts', async () => {
    const me = freshIdentity();
    const neighbour = sibling(me);
    await bed.admit(me);
    await bed.admit(neighbour);
    await bed.call('sessions.set_title', { identity: {}, title: 'private matters' }, me);
    await publishRun(bed, me, runId());
    await publishRun(bed, me, runId(), 'task.failed');
    await publishRun(bed, neighbour, runId());
    await waitFor(async () => (await stateRecordCount(me)) === 8, 'eight state records');
    bed.fakes.tasks = () => ({ tasks_deleted: 2, state_records_deleted: 5 });
    bed.fakes.artifacts = () => ({ artifacts_deleted: 3 });
    bed.fakes.memory = () => ({ purged: true });

    const receipt = await erase(me);

    expect(SessionsDeleteResponse.safeParse(receipt).success).toBe(true);
    expect(receipt).toMatchObject({
      session_id: me.session,
      erased: true,
      tasks_deleted: 2,
      state_records_deleted: 8 + 5,
      artifacts_deleted: 3,
      memory_purged: true,
      events_purged: true,
    });
    for (const endpoint of [
      'run-executor/_tasks.erase_session',
      'artifact/_artifact.erase_session',
      'memory/_memory.erase_session',
      'agent-registry/_agent.erase_session',
    ]) {
      expect(callsFor(me, endpoint).map((c) => c.body)).toEqual([bodyIdentity(me)]);
    }

    const left = await readEvents(bed.bus, bodyIdentity(me));
    expect(left.map((e) => e.type)).toEqual(['session.erased']);
    const erased = left[0]!;
    expect(Object.keys(erased.payload).sort()).toEqual([
      'ArtifactsDeleted',
      'ErasedAt',
      'MemoryPurged',
      'SessionID',
      'StateRecordsDeleted',
    ]);
    expect(erased.payload).toEqual({
      SessionID: me.session,
      StateRecordsDeleted: 13,
      ArtifactsDeleted: 3,
      MemoryPurged: true,
      ErasedAt: Date.parse(receipt.erased_at),
    });
    const neighbourTypes = (await readEvents(bed.bus, bodyIdentity(neighbour))).map((e) => e.type);
    expect(neighbourTypes).toEqual(expect.arrayContaining(['session.opened', 'task.spawned', 'task.completed']));
    expect(await stateRecordCount(neighbour)).toBe(4);
  });

  it('hides the erased session from every read', async () => {
    const me = freshIdentity();
    const neighbour = sibling(me);
    await bed.admit(me);
    await bed.admit(neighbour);
    await bed.call('sessions.set_title', { identity: {}, title: 'findable words' }, me);
    await erase(me);
    const notFound = { ok: false, code: 'not_found' };
    expect(await outcomeOf(bed.call('sessions.inspect', { identity: {} }, me))).toMatchObject(notFound);
    expect(await outcomeOf(bed.call('state.history', { identity: {} }, me))).toMatchObject(notFound);
    expect(await outcomeOf(bed.call('sessions.set_title', { identity: {}, title: 'x' }, me))).toMatchObject(notFound);
    const list = (await bed.call('sessions.list', { identity: {} }, neighbour)) as { items: { session_id: string }[] };
    expect(list.items.map((s) => s.session_id)).toEqual([neighbour.session]);
    const search = (await bed.call('search.sessions', { identity: {}, query: 'findable' }, neighbour)) as {
      items: unknown[];
    };
    expect(search.items).toEqual([]);
  });

  it('refuses every later start on the erased id with session_erased', async () => {
    const me = freshIdentity();
    await bed.admit(me);
    await erase(me);
    for (let i = 0; i < 2; i += 1) {
      expect(await outcomeOf(bed.admit(me))).toMatchObject({ ok: false, code: 'session_erased' });
    }
  });

  it('tombstones a session id that was never used', async () => {
    const me = freshIdentity();
    const receipt = await erase(me);
    expect(receipt).toMatchObject({ tasks_deleted: 0, state_records_deleted: 0, artifacts_deleted: 0 });
    expect(await outcomeOf(bed.admit(me))).toMatchObject({ ok: false, code: 'session_erased' });
  });

  it('answers the same receipt to a repeated delete without erasing again', async () => {
    const me = freshIdentity();
    await bed.admit(me);
    bed.fakes.tasks = () => ({ tasks_deleted: 4, state_records_deleted: 1 });
    const first = await erase(me);
    const second = await erase(me);
    expect(second).toEqual(first);
    expect(callsFor(me, 'run-executor/_tasks.erase_session')).toHaveLength(1);
    const receipts = (await sessionEvents(bed.bus, me)).filter((e) => e.type === 'session.erased');
    expect(receipts).toHaveLength(1);
  });

  it('records nothing of task events that reach an erased session', async () => {
    const me = freshIdentity();
    await bed.admit(me);
    await erase(me);
    const run = runId();
    await publishTask(bed, me, 'task.spawned', run);
    await publishTask(bed, me, 'task.started', run);
    await consumerCaughtUp();
    const types = (await readEvents(bed.bus, bodyIdentity(me))).map((e) => e.type);
    expect(types).toEqual(['session.erased', 'task.spawned', 'task.started']);
    expect(await outcomeOf(bed.admit(me))).toMatchObject({ ok: false, code: 'session_erased' });
    // Nothing of the events stayed in the store: records, task rows, the task total.
    // The service's own database, as startService opens it: <DATA_DIR>/<service>/<database>.
    const store = await openStore({ dataDir: join(bed.dataDir, 'session'), database: databaseName('session') });
    try {
      const owned = { tenant: me.tenant, user: me.user, session_id: me.session };
      for (const name of [STATE_RECORDS_COLLECTION, SESSION_TASKS_COLLECTION, SESSION_TASK_TOTALS_COLLECTION]) {
        expect({ name, count: await store.collection(name).countDocuments(owned) }).toEqual({ name, count: 0 });
      }
    } finally {
      await store.close();
    }
  });

  it('finishes an interrupted erasure when the service comes back', async () => {
    const me = freshIdentity();
    await bed.admit(me);
    await publishRun(bed, me, runId());
    await waitFor(async () => (await stateRecordCount(me)) === 4, 'four state records');
    bed.fakes.tasks = () => ({ tasks_deleted: 1, state_records_deleted: 2 });
    let artifactCalls = 0;
    bed.fakes.artifacts = () => {
      artifactCalls += 1;
      if (artifactCalls === 1) throw new ServiceError('unavailable', 'artifact store is down');
      return { artifacts_deleted: 6 };
    };

    const interrupted = await outcomeOf(bed.call('sessions.delete', { identity: {} }, me));
    expect(interrupted).toMatchObject({ ok: false, code: 'unavailable' });
    // The tombstone came first: the session is refused at once.
    expect(await outcomeOf(bed.admit(me))).toMatchObject({ ok: false, code: 'session_erased' });
    expect((await sessionEvents(bed.bus, me)).map((e) => e.type)).not.toContain('session.erased');

    await bed.restart();

    const events = await waitForSessionEvent(bed.bus, me, 'session.erased');
    expect(events.map((e) => e.type)).toEqual(['session.erased']);
    expect(events[0]!.payload).toMatchObject({ StateRecordsDeleted: 4 + 2, ArtifactsDeleted: 6, MemoryPurged: true });
    expect(await readEvents(bed.bus, bodyIdentity(me))).toHaveLength(1);
    expect(artifactCalls).toBe(2);
    // Finished steps are not repeated on resume.
    expect(callsFor(me, 'run-executor/_tasks.erase_session')).toHaveLength(1);
    expect(callsFor(me, 'memory/_memory.erase_session')).toHaveLength(1);
    const receipt = await erase(me);
    expect(receipt).toMatchObject({
      tasks_deleted: 1,
      state_records_deleted: 6,
      artifacts_deleted: 6,
      memory_purged: true,
    });
  });

  it('retries an unfinished erasure periodically until every step succeeded', async () => {
    await bed.restart({ SESSION_ERASURE_RETRY_SECONDS: '0.2' });
    try {
      const me = freshIdentity();
      await bed.admit(me);
      let memoryCalls = 0;
      bed.fakes.memory = () => {
        memoryCalls += 1;
        if (memoryCalls <= 2) throw new ServiceError('timeout', 'memory did not answer');
        return { purged: true };
      };
      const interrupted = await outcomeOf(bed.call('sessions.delete', { identity: {} }, me));
      expect(interrupted).toMatchObject({ ok: false, code: 'unavailable' });
      const events = await waitForSessionEvent(bed.bus, me, 'session.erased');
      expect(events[0]!.payload).toMatchObject({ SessionID: me.session, MemoryPurged: true });
      expect(memoryCalls).toBe(3);
    } finally {
      await bed.restart({ SESSION_ERASURE_RETRY_SECONDS: '3600' });
    }
  });
});
