import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectBus, serveService, startNatsServer } from '@ars/bus';
import type { Bus, NatsServerHandle, ServedService } from '@ars/bus';
import { ServiceError } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import { outcomeOf, startInProcess, storedEvents } from '@ars/service-kit/testing';
import type { InProcessService } from '@ars/service-kit/testing';
import { createLogger } from '@ars/telemetry';
import { agentRegistryService } from '../../src/service.ts';

/**
 * agents.list across tenants (`filter.tenant_ids`, `filter.all_tenants`) on
 * the real agent-registry and its `ars_fleet` KV bucket in a spawned
 * nats-server, with a run-executor stand-in that counts runs and gates
 * another tenant's counts as the real one does (admin or console:fleet).
 */

const CONFIG = { llm_params: { model: 'gpt-test' } };

interface Listed {
  tenant: string;
  agent_id: string;
  state: string;
  runs_in_flight?: number;
  runs_queued?: number;
}

interface Page {
  items: Listed[];
  next_cursor?: string;
}

describe('agents.list across tenants', () => {
  let dir: string;
  let nats: NatsServerHandle;
  let bus: Bus;
  let service: InProcessService;
  let standIn: ServedService;
  /** Runs `_tasks.agent_runs` answers, by tenant and agent. */
  const running = new Map<string, { pending: number; running: number }>();
  // Sorted tenant names: `<run>-a` < `<run>-b` < `<run>-c`.
  const run = `t-${randomUUID()}`;
  const [tenantA, tenantB, own] = [`${run}-a`, `${run}-b`, `${run}-c`];

  const who = (tenant: string, scopes: string[]): VerifiedIdentity => ({
    tenant,
    user: 'alice',
    session: 's-1',
    scopes,
  });
  const fleet = who(own, ['console:fleet']);
  const call = <T = Record<string, unknown>>(method: string, body: Record<string, unknown>, caller: VerifiedIdentity) =>
    service.call(method, { identity: {}, ...body }, caller) as Promise<T>;
  const list = (body: Record<string, unknown>, caller = fleet) => call<Page>('agents.list', body, caller);
  const keys = (page: Page) => page.items.map((a) => `${a.tenant}/${a.agent_id}`);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ars-fleet-tenants-'));
    nats = await startNatsServer({ storeDir: dir });
    bus = await connectBus({ servers: nats.url, name: 'fleet-tenants-stand-ins' });
    standIn = await serveService(bus, {
      service: 'run-executor',
      version: '0.0.1',
      instanceId: 'stand-in-run-executor',
      logger: createLogger({ name: 'stand-ins', level: 'silent' }),
      handlers: {
        '_tasks.agent_runs': async ({ identity, body }) => {
          const b = body as { tenant: string; agent_ids: string[] };
          const claimed = identity.scopes.includes('admin') || identity.scopes.includes('console:fleet');
          if (b.tenant !== identity.tenant && !claimed) throw new ServiceError('scope_mismatch', 'another tenant');
          const items = b.agent_ids.map((id) => ({
            agent_id: id,
            ...(running.get(`${b.tenant}/${id}`) ?? { pending: 0, running: 0 }),
          }));
          return { items, complete: true };
        },
      },
    });
    service = await startInProcess(agentRegistryService, {
      natsUrl: nats.url,
      env: { FLEET_HEALTH_INTERVAL_MS: '3600000' },
    });
    const adminA = who(tenantA, ['admin']);
    const adminB = who(tenantB, ['admin']);
    for (const [caller, agentId] of [
      [adminA, 'alpha'],
      [adminA, 'beta'],
      [adminB, 'gamma'],
    ] as const) {
      await call('agent_config.set_revision', { agent_id: agentId, config: CONFIG }, caller);
    }
    await call('agents.drain', { agent_id: 'beta' }, adminA);
    running.set(`${tenantB}/gamma`, { pending: 1, running: 2 });
  });

  afterAll(async () => {
    await service?.stop();
    await standIn?.stop();
    await bus?.close();
    await nats?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('pages the tenants named by (tenant, agent id), each agent with its tenant and run counts', async () => {
    const filter = { tenant_ids: [tenantB, tenantA] };
    const first = await list({ filter, limit: 2 });
    expect(keys(first)).toEqual([`${tenantA}/alpha`, `${tenantA}/beta`]);
    const second = await list({ filter, limit: 2, cursor: first.next_cursor });
    expect(keys(second)).toEqual([`${tenantA}/default`, `${tenantB}/default`]);
    const third = await list({ filter, limit: 2, cursor: second.next_cursor });
    expect(keys(third)).toEqual([`${tenantB}/gamma`]);
    expect(third.next_cursor).toBeUndefined();
    expect(third.items[0]).toMatchObject({ tenant: tenantB, runs_in_flight: 2, runs_queued: 1 });
  });

  it('applies the state and text filters across the tenants', async () => {
    const filter = { tenant_ids: [tenantA, tenantB] };
    expect(keys(await list({ filter: { ...filter, state: 'draining' } }))).toEqual([`${tenantA}/beta`]);
    expect(keys(await list({ filter: { ...filter, text: 'GAM' } }))).toEqual([`${tenantB}/gamma`]);
  });

  it("lists every tenant with a registration and the caller's own with all_tenants, in order", async () => {
    const page = await list({ filter: { all_tenants: true }, limit: 500 });
    const ours = keys({ items: page.items.filter((a) => [tenantA, tenantB, own].includes(a.tenant)) });
    expect(ours).toEqual([
      `${tenantA}/alpha`,
      `${tenantA}/beta`,
      `${tenantA}/default`,
      `${tenantB}/default`,
      `${tenantB}/gamma`,
      `${own}/default`,
    ]);
    const order = page.items.map((a) => [a.tenant, a.agent_id].join('\u0000'));
    expect(order).toEqual([...order].sort());
  });

  it("registers another tenant's agents met on the way under the fleet's identity in that tenant", async () => {
    const tenantD = `${run}-d`;
    await call('agent_config.set_revision', { agent_id: 'delta', config: CONFIG }, who(tenantD, ['admin']));
    await list({ filter: { tenant_ids: [tenantD] } });
    const registered = await storedEvents(service.bus, { tenant: tenantD, type: 'agent.registered' });
    const ofDefault = registered.find((e) => (e.payload as { AgentID?: string }).AgentID === 'default');
    expect(ofDefault).toMatchObject({ tenant: tenantD, user: 'agent-registry' });
  });

  it.each([
    ['another tenant', { tenant_ids: [tenantA] }],
    ['more than one tenant', { tenant_ids: [own, tenantA] }],
    ['every tenant', { all_tenants: true }],
  ])('refuses a caller without admin or console:fleet naming %s with 403 scope_mismatch', async (_label, filter) => {
    const refused = await outcomeOf(list({ filter }, who(own, [])));
    expect(refused).toMatchObject({ ok: false, code: 'scope_mismatch' });
  });

  it('lets a caller without a claim name its own tenant, and refuses all_tenants with tenant_ids', async () => {
    expect(keys(await list({ filter: { tenant_ids: [own] } }, who(own, [])))).toEqual([`${own}/default`]);
    const both = await outcomeOf(list({ filter: { all_tenants: true, tenant_ids: [tenantA] } }));
    expect(both).toMatchObject({ ok: false, code: 'invalid_request' });
  });
});
