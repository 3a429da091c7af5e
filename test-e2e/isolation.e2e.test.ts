import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ArsClient } from '@ars/client';
import type { EventFrame } from '@ars/contracts';
import { mintToken, startTestSystem, uniqueIdentity } from '@ars/testkit';
import type { TestIdentity, TestSystem } from '@ars/testkit';
import { EventLog } from './support/event-log.ts';
import { refusal, streamCursor } from './support/runs.ts';
import type { Started } from './support/runs.ts';

/**
 * Isolation end to end: two tenants, two users, two sessions. Tenant B's
 * caller carries the same user and session names as tenant A's owner, so
 * nothing may rest on names alone. SSE, task reads, the artifacts.list
 * folding table and the admin fan-in of the event stream.
 */

interface Party {
  readonly identity: TestIdentity;
  readonly token: string;
  readonly client: ArsClient;
}

const triple = (f: EventFrame | TestIdentity) => `${f.tenant}/${f.user}/${f.session}`;
const payload = (frame: EventFrame) => frame.payload as Record<string, unknown>;

describe('isolation end to end', () => {
  let sys: TestSystem;
  /** Tenant A, user 1, session 1. */
  let owner: Party;
  /** Tenant A, user 1, session 2. */
  let ownerOtherSession: Party;
  /** Tenant A, user 2. */
  let colleague: Party;
  /** Tenant B, with the owner's user and session names. */
  let namesake: Party;
  let parties: Party[];

  async function party(identity: TestIdentity, scopes: readonly string[] = []): Promise<Party> {
    const token = await mintToken(sys.baseUrl, { ...identity, scopes });
    return { identity, token, client: sys.client({ token }) };
  }

  beforeAll(async () => {
    sys = await startTestSystem();
    const a = uniqueIdentity('iso-a');
    const b = uniqueIdentity('iso-b');
    owner = await party(a);
    ownerOtherSession = await party({ ...a, session: `${a.session}-2` });
    colleague = await party({ ...uniqueIdentity('iso-a2'), tenant: a.tenant });
    namesake = await party({ ...a, tenant: b.tenant });
    parties = [owner, ownerOtherSession, colleague, namesake];
  });

  afterAll(async () => {
    await sys?.stop();
  });

  describe('event stream and task reads', () => {
    const runs = new Map<Party, string>();
    const logs = new Map<Party, EventLog>();

    beforeAll(async () => {
      for (const p of parties) logs.set(p, new EventLog(p.client, { lastEventId: await streamCursor(p.client) }));
      await Promise.all(
        parties.map(async (p) => {
          const started = await p.client.call<Started>('start', {
            identity: {},
            query: `#script tool:echo{"who":"${triple(p.identity)}"};finish:done`,
          });
          runs.set(p, started.task_id);
        }),
      );
      for (const p of parties) await logs.get(p)!.next('task.completed', (f) => f.run === runs.get(p));
      // A second run of each party, started after every first run ended: its end on a stream
      // means every earlier event of the other parties had its chance to (wrongly) arrive there.
      for (const p of parties) {
        const second = await p.client.call<Started>('start', { identity: {}, query: '#script finish:barrier' });
        await logs.get(p)!.next('task.completed', (f) => f.run === second.task_id);
      }
    }, 60_000);

    afterAll(async () => {
      for (const log of logs.values()) await log.close();
    });

    it('delivers each subscriber only the events of its own tenant, user and session', () => {
      for (const p of parties) {
        const frames = logs.get(p)!.frames;
        expect(frames.length).toBeGreaterThan(10);
        expect(new Set(frames.map(triple))).toEqual(new Set([triple(p.identity)]));
        const foreignRuns = parties.filter((q) => q !== p).map((q) => runs.get(q));
        expect(frames.filter((f) => foreignRuns.includes(f.run))).toEqual([]);
      }
    });

    it("lists only the caller's own tasks of its current session in tasks.list", async () => {
      for (const p of parties) {
        const list = await p.client.call<{
          items: { task_id: string; tenant: string; user: string; session: string }[];
        }>('tasks.list', { identity: {} });
        expect(list.items.length).toBe(2);
        expect(list.items.map((t) => t.task_id)).toContain(runs.get(p));
        expect(new Set(list.items.map((t) => `${t.tenant}/${t.user}/${t.session}`))).toEqual(
          new Set([triple(p.identity)]),
        );
      }
    });

    it("answers tasks.get for another user's or another tenant's task with 404 not_found", async () => {
      const ownerTask = runs.get(owner)!;
      for (const other of [colleague, namesake]) {
        expect(await refusal(other.client.call('tasks.get', { identity: {}, task_id: ownerTask }))).toMatchObject({
          status: 404,
          code: 'not_found',
        });
      }
    });

    it("answers an admin's tasks.get of another tenant's task 404 unless the admin names that tenant, audited", async () => {
      const admin = await party(uniqueIdentity('iso-admin'), ['admin']);
      const taskId = runs.get(namesake)!;
      expect(await refusal(admin.client.call('tasks.get', { identity: {}, task_id: taskId }))).toMatchObject({
        status: 404,
        code: 'not_found',
      });
      const log = new EventLog(admin.client, { lastEventId: await streamCursor(admin.client) });
      try {
        const detail = await admin.client.call<{ task: { task_id: string; tenant: string } }>('tasks.get', {
          identity: { tenant: namesake.identity.tenant },
          task_id: taskId,
        });
        expect(detail.task).toMatchObject({ task_id: taskId, tenant: namesake.identity.tenant });
        const audit = await log.next('audit.admin_scope_used');
        expect(payload(audit)).toMatchObject({
          Method: 'tasks.get',
          Actor: { tenant: admin.identity.tenant, user: admin.identity.user, session: admin.identity.session },
          Impersonating: { tenant: namesake.identity.tenant },
          Reason: 'tenant crossed under admin',
        });
      } finally {
        await log.close();
      }
    });

    it('refuses tasks.list fan-in across tenants without admin, and grants it to admin', async () => {
      const filter = { tenant_ids: [namesake.identity.tenant] };
      expect(await refusal(owner.client.call('tasks.list', { identity: {}, filter }))).toMatchObject({ status: 403 });
      const admin = await party(uniqueIdentity('iso-admin'), ['admin']);
      const list = await admin.client.call<{ items: { task_id: string; tenant: string }[] }>('tasks.list', {
        identity: {},
        filter,
      });
      expect(list.items.map((t) => t.task_id)).toContain(runs.get(namesake));
      expect(list.items.every((t) => t.tenant === namesake.identity.tenant)).toBe(true);
    });
  });

  describe('artifacts.list folding table', () => {
    const ids = new Map<Party, string>();
    const list = (p: Party, identity: Record<string, string> = {}, filter?: Record<string, string>) =>
      p.client
        .call<{ items: { artifact_id: string }[] }>('artifacts.list', {
          identity,
          ...(filter === undefined ? {} : { filter }),
        })
        .then((page) => page.items.map((a) => a.artifact_id).sort());
    const idsOf = (...ps: Party[]) => ps.map((p) => ids.get(p)!).sort();

    beforeAll(async () => {
      for (const p of parties) {
        const put = await p.client.call<{ artifact: { artifact_id: string } }>('artifacts.put', {
          identity: {},
          content_base64: Buffer.from(triple(p.identity)).toString('base64'),
          mime_type: 'text/plain',
        });
        ids.set(p, put.artifact.artifact_id);
      }
    });

    it("folds an own call without filter to every session of the caller's own user", async () => {
      expect(await list(owner)).toEqual(idsOf(owner, ownerOtherSession));
    });

    it('narrows to one session with filter.session, without a claim', async () => {
      expect(await list(owner, {}, { session: owner.identity.session })).toEqual(idsOf(owner));
    });

    it('refuses another user without a claim with 403 identity_scope_required', async () => {
      expect(await refusal(list(owner, { user: colleague.identity.user }))).toMatchObject({
        status: 403,
        code: 'identity_scope_required',
      });
    });

    it('refuses another tenant without a claim with 403 scope_mismatch', async () => {
      expect(await refusal(list(owner, { tenant: namesake.identity.tenant }))).toMatchObject({
        status: 403,
        code: 'scope_mismatch',
      });
    });

    it('reads a named user of the tenant with console:fleet and audits the crossing', async () => {
      const fleet = await party({ ...uniqueIdentity('iso-fleet'), tenant: owner.identity.tenant }, ['console:fleet']);
      const log = new EventLog(fleet.client, { lastEventId: await streamCursor(fleet.client) });
      try {
        expect(await list(fleet, { user: colleague.identity.user })).toEqual(idsOf(colleague));
        const audit = await log.next('audit.admin_scope_used');
        expect(payload(audit)).toMatchObject({
          Method: 'artifacts.list',
          Actor: { tenant: fleet.identity.tenant, user: fleet.identity.user, session: fleet.identity.session },
          Impersonating: { tenant: owner.identity.tenant, user: colleague.identity.user },
        });
      } finally {
        await log.close();
      }
    });

    it('fans across every user of the tenant for admin when the body names no user', async () => {
      const admin = await party({ ...uniqueIdentity('iso-admin'), tenant: owner.identity.tenant }, ['admin']);
      expect(await list(admin)).toEqual(idsOf(owner, ownerOtherSession, colleague));
    });

    it("audits an admin's tenant-wide artifacts.list with audit.admin_scope_used", async () => {
      const admin = await party({ ...uniqueIdentity('iso-admin'), tenant: owner.identity.tenant }, ['admin']);
      const log = new EventLog(admin.client, { lastEventId: await streamCursor(admin.client) });
      try {
        await list(admin);
        // A crossing naming a user is audited; once its audit is on the stream, the earlier one had to be too.
        await list(admin, { user: colleague.identity.user });
        await log.next('audit.admin_scope_used', (f) => {
          const impersonating = payload(f)['Impersonating'] as { user?: string } | undefined;
          return impersonating?.user === colleague.identity.user;
        });
        const audits = log.frames.filter((f) => f.type === 'audit.admin_scope_used');
        expect(audits.map((f) => payload(f)['Method'])).toEqual(['artifacts.list', 'artifacts.list']);
      } finally {
        await log.close();
      }
    });

    it("audits an admin's cross-tenant tasks.list and pause.list with audit.admin_scope_used", async () => {
      const admin = await party(uniqueIdentity('iso-admin'), ['admin']);
      const log = new EventLog(admin.client, { lastEventId: await streamCursor(admin.client) });
      try {
        const filter = { tenant_ids: [namesake.identity.tenant] };
        const tasks = await admin.client.call<{ items: { tenant: string }[] }>('tasks.list', { identity: {}, filter });
        expect(tasks.items.every((t) => t.tenant === namesake.identity.tenant)).toBe(true);
        await admin.client.call('pause.list', { identity: {}, filter });
        // Each call's audit is published before the call is forwarded: both are on the stream in call order.
        await log.next('audit.admin_scope_used', (f) => payload(f)['Method'] === 'pause.list');
        const audits = log.frames.filter((f) => f.type === 'audit.admin_scope_used');
        expect(audits.map((f) => payload(f))).toMatchObject(
          ['tasks.list', 'pause.list'].map((method) => ({
            Method: method,
            Actor: { tenant: admin.identity.tenant, user: admin.identity.user, session: admin.identity.session },
            Impersonating: { tenant: namesake.identity.tenant, user: '*', session: '*' },
            Reason: 'filter.tenant_ids crossed under admin',
          })),
        );
      } finally {
        await log.close();
      }
    });

    it('reads another tenant with admin', async () => {
      const admin = await party(uniqueIdentity('iso-admin'), ['admin']);
      const other = { tenant: namesake.identity.tenant, user: namesake.identity.user };
      expect(await list(admin, other)).toEqual(idsOf(namesake));
    });

    it("never lets another user read an artifact's bytes: artifacts.get is 404 not_found", async () => {
      expect(
        await refusal(colleague.client.call('artifacts.get', { identity: {}, artifact_id: ids.get(owner)! })),
      ).toMatchObject({ status: 404, code: 'not_found' });
    });
  });

  describe('admin fan-in of the event stream', () => {
    it('refuses admin=1 to a scopeless caller with 403 scope_mismatch', async () => {
      const iterator = owner.client.subscribe({ admin: true, reconnect: false })[Symbol.asyncIterator]();
      expect(await iterator.next().catch((caught: unknown) => caught)).toMatchObject({
        status: 403,
        code: 'scope_mismatch',
      });
    });

    for (const scope of ['admin', 'console:fleet']) {
      it(`grants admin=1 to ${scope}: events of every tenant arrive, and audit.admin_scope_used is published`, async () => {
        const watcher = await party(uniqueIdentity('iso-watch'), [scope]);
        const log = new EventLog(watcher.client, { admin: true, lastEventId: await streamCursor(watcher.client) });
        try {
          const audit = await log.next('audit.admin_scope_used', (f) => f.tenant === watcher.identity.tenant);
          expect(payload(audit)).toMatchObject({
            Tenant: watcher.identity.tenant,
            User: watcher.identity.user,
            Session: watcher.identity.session,
          });
          expect(Number.isInteger(payload(audit)['SubscriberID'])).toBe(true);
          const a = await owner.client.call<Started>('start', { identity: {}, query: '#script finish:a' });
          const b = await namesake.client.call<Started>('start', { identity: {}, query: '#script finish:b' });
          const spawnedA = await log.next('task.spawned', (f) => f.run === a.task_id);
          const spawnedB = await log.next('task.spawned', (f) => f.run === b.task_id);
          expect(spawnedA.tenant).toBe(owner.identity.tenant);
          expect(spawnedB.tenant).toBe(namesake.identity.tenant);
        } finally {
          await log.close();
        }
      });
    }
  });
});
