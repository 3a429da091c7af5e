import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ArsClient } from '@ars/client';
import type { EventFrame, ServiceName } from '@ars/contracts';
import { SERVICE_NAMES } from '@ars/contracts';
import { mintToken, startTestSystem, uniqueIdentity, waitFor } from '@ars/testkit';
import type { TestIdentity, TestSystem } from '@ars/testkit';
import { EventLog } from './support/event-log.ts';
import { refusal, startWatched, storedEvents, streamCursor } from './support/runs.ts';

/**
 * Sessions end to end: the catalog lifecycle (opened, touched, reaped,
 * reopened), sessions.list/inspect/set_title, state.history, the right to
 * erasure across every service and the event stream, and a catalog that
 * survives a restart of every process. The idle reaper runs with a short
 * idle time so that a reopen can be seen within seconds.
 */

const IDLE_CLOSE_SECONDS = 5;
const SESSION_ENV = { SESSION_IDLE_CLOSE_SECONDS: String(IDLE_CLOSE_SECONDS), SESSION_REAP_INTERVAL_SECONDS: '0.5' };

interface SessionView {
  readonly session_id: string;
  readonly tenant: string;
  readonly user: string;
  readonly status: string;
  readonly title?: string;
  readonly title_source?: string;
}
interface StateRecordView {
  readonly seq: number;
  readonly kind: string;
  readonly task_id?: string;
  readonly status?: string;
  readonly role?: string;
  readonly content?: string;
}
interface Receipt {
  readonly session_id: string;
  readonly erased: boolean;
  readonly tasks_deleted: number;
  readonly state_records_deleted: number;
  readonly artifacts_deleted: number;
  readonly memory_purged: boolean;
  readonly events_purged: boolean;
}

const payload = (frame: EventFrame) => frame.payload as Record<string, unknown>;

describe('sessions end to end', () => {
  let sys: TestSystem;

  async function clientFor(identity: TestIdentity, scopes: readonly string[] = []): Promise<ArsClient> {
    return sys.client({ token: await mintToken(sys.baseUrl, { ...identity, scopes }) });
  }

  /** Starts a run and waits for its terminal event. */
  async function runToEnd(client: ArsClient, query: string, session?: string): Promise<string> {
    const run = await startWatched(client, { query }, session === undefined ? {} : { session });
    try {
      await run.log.terminal();
      return run.taskId;
    } finally {
      await run.log.close();
    }
  }

  const history = (client: ArsClient, body: Record<string, unknown> = {}) =>
    client.call<{ session_id: string; items: StateRecordView[] }>('state.history', { identity: {}, ...body });

  /** Waits until the session's state records show the task's final transition (recorded from the stream). */
  const historyOf = (client: ArsClient, taskId: string, status = 'complete') =>
    waitFor(
      async () => {
        const page = await history(client);
        return page.items.some((r) => r.task_id === taskId && r.status === status) ? page.items : undefined;
      },
      { message: `state.history recording ${status} of ${taskId}` },
    );

  beforeAll(async () => {
    sys = await startTestSystem({ env: SESSION_ENV });
  });

  afterAll(async () => {
    await sys?.stop();
  });

  describe('lifecycle', () => {
    it('opens a session on its first start with session.opened', async () => {
      const identity = uniqueIdentity('open');
      const client = await clientFor(identity);
      const log = new EventLog(client, { lastEventId: await streamCursor(client) });
      try {
        await client.call('start', { identity: {}, query: '#script finish:hi' });
        // The admission is not waited for by the start: the two may arrive in either order.
        await log.next('task.spawned');
        await log.next('session.opened');
        expect(log.types().filter((type) => type === 'session.opened')).toHaveLength(1);
        expect(payload(log.frames.find((f) => f.type === 'session.opened')!)).toMatchObject({
          SessionID: identity.session,
        });
      } finally {
        await log.close();
      }
    });

    it('records a later start on the open session as session.touched, not a second session.opened', async () => {
      const identity = uniqueIdentity('touch');
      const client = await clientFor(identity);
      await runToEnd(client, '#script finish:first');
      const log = new EventLog(client, { lastEventId: await streamCursor(client) });
      try {
        await client.call('start', { identity: {}, query: '#script finish:second' });
        const touched = await log.next('session.touched');
        expect(payload(touched)).toMatchObject({ SessionID: identity.session });
        await log.next('task.spawned');
        const opened = await storedEvents(client, { session: identity.session, types: ['session.opened'] });
        expect(opened).toHaveLength(1);
        expect(log.types()).not.toContain('session.reopened');
      } finally {
        await log.close();
      }
    });

    it('reopens a session the idle reaper closed, with session.reopened naming idle and its history intact', async () => {
      const identity = uniqueIdentity('reopen');
      const client = await clientFor(identity);
      const log = new EventLog(client, { lastEventId: await streamCursor(client) });
      try {
        const first = await runToEnd(client, '#script finish:before the nap');
        await historyOf(client, first);
        const reaped = await log.next('session.gc_reaped', undefined, { timeoutMs: (IDLE_CLOSE_SECONDS + 10) * 1000 });
        const closed = await log.next('session.closed');
        expect(payload(reaped)).toMatchObject({ SessionID: identity.session });
        expect(payload(closed)).toMatchObject({ SessionID: identity.session, Reason: 'idle' });
        const inspected = await client.call<{ session: SessionView }>('sessions.inspect', { identity: {} });
        expect(inspected.session.status).toBe('closed');

        await client.call('start', { identity: {}, query: '#script finish:after the nap' });
        const reopened = await log.next('session.reopened');
        expect(payload(reopened)).toMatchObject({ SessionID: identity.session, PriorClosedReason: 'idle' });
        const after = await client.call<{ session: SessionView }>('sessions.inspect', { identity: {} });
        expect(after.session.status).toBe('open');
        const records = (await history(client)).items;
        expect(records.some((r) => r.task_id === first && r.kind === 'turn')).toBe(true);
      } finally {
        await log.close();
      }
    }, 30_000);
  });

  describe('catalog reads and titles', () => {
    it("lists every session of the caller's tenant and user, and no one else's", async () => {
      const identity = uniqueIdentity('list');
      const client = await clientFor(identity);
      const stranger = uniqueIdentity('list-other');
      const sibling = { ...uniqueIdentity('list-sib'), tenant: identity.tenant };
      await runToEnd(client, '#script finish:one');
      await runToEnd(client, '#script finish:two', `${identity.session}-b`);
      await runToEnd(await clientFor(sibling), '#script finish:sibling');
      await runToEnd(await clientFor(stranger), '#script finish:stranger');

      const list = await client.call<{ items: SessionView[] }>('sessions.list', { identity: {} });
      expect(list.items.map((s) => s.session_id).sort()).toEqual([identity.session, `${identity.session}-b`].sort());
      expect(list.items.every((s) => s.tenant === identity.tenant && s.user === identity.user)).toBe(true);
    });

    it('inspects a session with its task counts and artifact count', async () => {
      const identity = uniqueIdentity('inspect');
      const client = await clientFor(identity);
      const taskId = await runToEnd(client, '#script finish:done');
      await client.call('artifacts.put', {
        identity: {},
        content_base64: Buffer.from('x').toString('base64'),
        mime_type: 'text/plain',
      });
      // The counts are projected from the task and artifact events: wait until both arrived.
      const inspected = await waitFor(
        async () => {
          const view = await client.call<{
            session: SessionView;
            task_counts: Record<string, number>;
            artifact_count: number;
            last_task_id?: string;
          }>('sessions.inspect', { identity: {} });
          return view.task_counts['complete'] === 1 && view.artifact_count === 1 ? view : undefined;
        },
        { message: 'sessions.inspect counting one complete task and one artifact' },
      );
      expect(inspected.session).toMatchObject({ session_id: identity.session, tenant: identity.tenant });
      expect(inspected.last_task_id).toBe(taskId);
    });

    it('names a session from its first turn, and a manual title replaces it with session.title_changed', async () => {
      const identity = uniqueIdentity('title');
      const client = await clientFor(identity);
      const log = new EventLog(client, { lastEventId: await streamCursor(client) });
      try {
        await client.call('start', { identity: {}, query: 'Plan a trip to Lisbon\nwith details' });
        expect(payload(await log.next('session.title_changed'))).toMatchObject({
          SessionID: identity.session,
          Source: 'auto',
        });
        const auto = await client.call<{ session: SessionView }>('sessions.inspect', { identity: {} });
        expect(auto.session).toMatchObject({ title: 'Plan a trip to Lisbon', title_source: 'auto' });

        const set = await client.call<{ session: SessionView }>('sessions.set_title', {
          identity: {},
          title: 'Lisbon, May',
        });
        expect(set.session).toMatchObject({ title: 'Lisbon, May', title_source: 'manual' });
        await log.next('session.title_changed', (f) => payload(f)['Source'] === 'manual');
        const listed = await client.call<{ items: SessionView[] }>('sessions.list', { identity: {} });
        expect(listed.items.find((s) => s.session_id === identity.session)?.title).toBe('Lisbon, May');
      } finally {
        await log.close();
      }
    });

    it('sets the title of a sibling session of the same owner named by session_id', async () => {
      const identity = uniqueIdentity('title-sib');
      const client = await clientFor(identity);
      const sibling = `${identity.session}-b`;
      await runToEnd(client, '#script finish:one', sibling);
      // The session service records the sibling from the run's events, a moment after they are on the stream.
      await waitFor(async () => {
        const listed = await client.call<{ items: SessionView[] }>('sessions.list', { identity: {} });
        return listed.items.some((s) => s.session_id === sibling) || undefined;
      });
      const set = await client.call<{ session: SessionView }>('sessions.set_title', {
        identity: {},
        session_id: sibling,
        title: 'the other one',
      });
      expect(set.session).toMatchObject({ session_id: sibling, title: 'the other one', title_source: 'manual' });
    });

    it("lists a session's task transitions and turns in order with state.history", async () => {
      const identity = uniqueIdentity('history');
      const client = await clientFor(identity);
      const taskId = await runToEnd(client, '#script finish:answer');
      const records = await historyOf(client, taskId);
      const seqs = records.map((r) => r.seq);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      expect(new Set(seqs).size).toBe(seqs.length);
      expect(records.filter((r) => r.kind === 'task_state').map((r) => r.status)).toEqual([
        'pending',
        'running',
        'complete',
      ]);
      expect(records.find((r) => r.kind === 'turn')).toMatchObject({
        task_id: taskId,
        content: '#script finish:answer',
      });
    });

    it("answers state.history for another user's session with 404 not_found", async () => {
      const identity = uniqueIdentity('history-own');
      const client = await clientFor(identity);
      await runToEnd(client, '#script finish:private');
      const other = await clientFor({ ...uniqueIdentity('history-other'), tenant: identity.tenant });
      const error = await refusal(history(other, { identity: { user: identity.user, session: identity.session } }));
      expect(error).toMatchObject({ status: 404, code: 'not_found' });
    });
  });

  describe('erasure of a session with runs, an artifact and memory', () => {
    let identity: TestIdentity;
    let client: ArsClient;
    let sibling: string;
    let taskIds: string[];
    let siblingTaskId: string;
    let artifactId: string;
    let siblingArtifactId: string;
    let receipt: Receipt;
    let erased: EventFrame;

    const memoryGet = (tier: string, key: string, session?: string) =>
      client.call<{ item: { value: unknown } }>(
        'memory.get',
        { identity: {}, tier, key },
        session === undefined ? {} : { session },
      );

    beforeAll(async () => {
      identity = uniqueIdentity('erase');
      client = await clientFor(identity);
      sibling = `${identity.session}-kept`;
      const admin = await clientFor(identity, ['admin']);
      const put = async (session: string) =>
        (
          await client.call<{ artifact: { artifact_id: string } }>(
            'artifacts.put',
            {
              identity: {},
              content_base64: Buffer.from(`bytes of ${session}`).toString('base64'),
              mime_type: 'text/plain',
            },
            { session },
          )
        ).artifact.artifact_id;

      taskIds = [
        await runToEnd(client, '#script tool:echo{"n":1};finish:first'),
        await runToEnd(client, '#script finish:second'),
      ];
      siblingTaskId = await runToEnd(client, '#script finish:kept', sibling);
      artifactId = await put(identity.session);
      siblingArtifactId = await put(sibling);
      await admin.call('memory.put', { identity: {}, tier: 'session', key: 'scratch', value: { note: 'erase me' } });
      await admin.call('memory.put', { identity: {}, tier: 'user', key: 'profile', value: { name: 'kept' } });
      await client.call('agent_config.session.skills.upsert', {
        identity: {},
        skill: { name: 'greet', content: 'Hi.' },
      });
      await client.call('agent_config.session.set_user_prompt', { identity: {}, prompt: 'Answer briefly.' });
      await admin.call(
        'memory.put',
        { identity: {}, tier: 'session', key: 'scratch', value: { note: 'keep me' } },
        { session: sibling },
      );
      for (const taskId of taskIds) await historyOf(client, taskId);

      const log = new EventLog(client, { lastEventId: await streamCursor(client) });
      try {
        receipt = await client.call<Receipt>('sessions.delete', { identity: {} });
        erased = await log.next('session.erased');
      } finally {
        await log.close();
      }
    }, 60_000);

    it('answers sessions.delete with the real counts and publishes them in session.erased', () => {
      expect(receipt).toMatchObject({
        session_id: identity.session,
        erased: true,
        tasks_deleted: 2,
        artifacts_deleted: 1,
        memory_purged: true,
        events_purged: true,
      });
      expect(receipt.state_records_deleted).toBeGreaterThanOrEqual(8);
      expect(payload(erased)).toMatchObject({
        SessionID: identity.session,
        StateRecordsDeleted: receipt.state_records_deleted,
        ArtifactsDeleted: 1,
        MemoryPurged: true,
      });
    });

    it('answers a repeated sessions.delete with the same receipt', async () => {
      const again = await client.call<Receipt>('sessions.delete', { identity: {} });
      expect(again).toEqual(receipt);
    });

    it('leaves no task: tasks.get is not_found and tasks.list is empty', async () => {
      for (const taskId of taskIds) {
        expect(await refusal(client.call('tasks.get', { identity: {}, task_id: taskId }))).toMatchObject({
          status: 404,
          code: 'not_found',
        });
      }
      const list = await client.call<{ items: unknown[] }>('tasks.list', { identity: {} });
      expect(list.items).toEqual([]);
    });

    it('leaves no artifact: artifacts.get is not_found and artifacts.list of the session is empty', async () => {
      expect(await refusal(client.call('artifacts.get', { identity: {}, artifact_id: artifactId }))).toMatchObject({
        status: 404,
        code: 'not_found',
      });
      const list = await client.call<{ items: unknown[] }>('artifacts.list', {
        identity: {},
        filter: { session: identity.session },
      });
      expect(list.items).toEqual([]);
    });

    it('leaves no state history: state.history is not_found', async () => {
      expect(await refusal(history(client))).toMatchObject({ status: 404, code: 'not_found' });
    });

    it("leaves no session memory, and keeps the user's own tier, which belongs to no session", async () => {
      expect(await refusal(memoryGet('session', 'scratch'))).toMatchObject({ status: 404, code: 'not_found' });
      expect((await memoryGet('user', 'profile')).item.value).toEqual({ name: 'kept' });
    });

    it('leaves only the session.erased receipt of the session in the event stream', async () => {
      const stored = await storedEvents(client, { session: identity.session });
      expect(stored.map((f) => f.type)).toEqual(['session.erased']);
      expect(stored[0]!.sequence).toBe(erased.sequence);
    });

    it('no longer lists or inspects the session', async () => {
      const list = await client.call<{ items: SessionView[] }>('sessions.list', { identity: {} });
      expect(list.items.map((s) => s.session_id)).toEqual([sibling]);
      expect(await refusal(client.call('sessions.inspect', { identity: {} }))).toMatchObject({
        status: 404,
        code: 'not_found',
      });
    });

    it('leaves no session skill, and refuses every later write under the session with 410 session_erased', async () => {
      const skills = await client.call<{ items: unknown[] }>('agent_config.session.skills.list', { identity: {} });
      expect(skills.items).toEqual([]);
      const admin = await clientFor(identity, ['admin']);
      const writes: Array<() => Promise<unknown>> = [
        () => admin.call('memory.put', { identity: {}, tier: 'session', key: 'scratch', value: { note: 'again' } }),
        () =>
          client.call('agent_config.session.skills.upsert', { identity: {}, skill: { name: 'greet', content: 'Hi.' } }),
        () => client.call('agent_config.session.skills.delete', { identity: {}, name: 'greet' }),
        () => client.call('agent_config.session.set_user_prompt', { identity: {}, prompt: 'again' }),
        () => client.call('agent_config.session.set_source_disables', { identity: {}, sources: [] }),
      ];
      for (const write of writes) {
        expect(await refusal(write())).toMatchObject({ status: 410, code: 'session_erased' });
      }
      expect(await refusal(memoryGet('session', 'scratch'))).toMatchObject({ status: 404, code: 'not_found' });
    });

    it('refuses every later start on the session with 410 session_erased', async () => {
      for (const query of ['again', '#script finish:again']) {
        expect(await refusal(client.call('start', { identity: {}, query }))).toMatchObject({
          status: 410,
          code: 'session_erased',
        });
      }
    });

    it("leaves the owner's other session untouched", async () => {
      const detail = await client.call<{ task: { status: string } }>(
        'tasks.get',
        { identity: {}, task_id: siblingTaskId },
        { session: sibling },
      );
      expect(detail.task.status).toBe('complete');
      const artifact = await client.call<{ artifact: { artifact_id: string } }>(
        'artifacts.get',
        { identity: {}, artifact_id: siblingArtifactId, include_content: false },
        { session: sibling },
      );
      expect(artifact.artifact.artifact_id).toBe(siblingArtifactId);
      expect((await memoryGet('session', 'scratch', sibling)).item.value).toEqual({ note: 'keep me' });
      expect((await storedEvents(client, { session: sibling }, sibling)).length).toBeGreaterThan(0);
    });
  });

  it('leaves nothing of a run that was live during the erasure after session.erased', async () => {
    const identity = uniqueIdentity('erase-live');
    const client = await clientFor(identity);
    const run = await startWatched(client, { query: '#script tool:wait{ms:1000};tool:echo{"n":2};finish:done' });
    try {
      await run.log.next('tool.invoked');
      await client.call('sessions.delete', { identity: {} });
      // A run of another session, started after the erasure, that outlasts the erased run's remaining steps.
      const later = await startWatched(await clientFor({ ...identity, session: `${identity.session}-later` }), {
        query: '#script tool:wait{ms:1500};finish:done',
      });
      await later.log.terminal();
      await later.log.close();
      const stored = await storedEvents(client, { session: identity.session });
      expect(stored.map((f) => f.type)).toEqual(['session.erased']);
    } finally {
      await run.log.close();
    }
  });

  it('keeps the catalog, tasks and state history across a restart of every process', async () => {
    const identity = uniqueIdentity('restart');
    const client = await clientFor(identity);
    const taskId = await runToEnd(client, '#script finish:remember me');
    await client.call('sessions.set_title', { identity: {}, title: 'survives restarts' });
    const before = await historyOf(client, taskId);

    const services = SERVICE_NAMES.filter((name): name is ServiceName => name !== 'gateway');
    await sys.system.killService('gateway');
    await Promise.all(services.map((name) => sys.system.killService(name)));
    expect(sys.system.processes().map((p) => p.name)).toEqual(['nats-server']);
    await Promise.all(services.map((name) => sys.system.startServiceProcess(name)));
    await sys.system.startServiceProcess('gateway');

    // The dev issuer's key lives as long as the gateway process: a fresh token for the same identity.
    const again = await clientFor(identity);
    const list = await again.call<{ items: SessionView[] }>('sessions.list', { identity: {} });
    expect(list.items).toEqual([
      expect.objectContaining({ session_id: identity.session, title: 'survives restarts', title_source: 'manual' }),
    ]);
    const detail = await again.call<{ task: { status: string } }>('tasks.get', { identity: {}, task_id: taskId });
    expect(detail.task.status).toBe('complete');
    expect((await history(again)).items).toEqual(before);
  }, 90_000);
});
