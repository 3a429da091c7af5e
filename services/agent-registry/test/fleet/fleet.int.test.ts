import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectBus, serveService, startNatsServer } from '@ars/bus';
import type { Bus, NatsServerHandle, RpcRequest, ServedService } from '@ars/bus';
import { contentHash } from '@ars/service-kit';
import { methodsOfService } from '@ars/contracts';
import type { EventFrame, VerifiedIdentity } from '@ars/contracts';
import { outcomeOf, startInProcess, storedEvents } from '@ars/service-kit/testing';
import type { InProcessService } from '@ars/service-kit/testing';
import { createLogger } from '@ars/telemetry';
import { agentRegistryService } from '../../src/service.ts';

/**
 * agents.* on the real agent-registry, its fleet registrations in the real
 * `ars_fleet` KV bucket of a spawned nats-server, and stand-ins of what it
 * asks others: the run-executor's task counts, figures and outcomes,
 * memory's usage and governance's budget.
 */

const CONFIG = { llm_params: { model: 'gpt-test' }, skills: ['triage'] };
const HEALTH_INTERVAL_MS = 1_000;

interface Agent {
  agent_id: string;
  registration_key: string;
  incarnation: number;
  version_hash: string;
  hosting: string;
  health: string;
  state: string;
  runs_in_flight?: number;
  runs_queued?: number;
}

describe('agent fleet (agents.*)', () => {
  let dir: string;
  let nats: NatsServerHandle;
  let bus: Bus;
  let service: InProcessService;
  const standIns: ServedService[] = [];
  /** Runs `_tasks.agent_runs` answers, by tenant and agent. */
  const running = new Map<string, { pending: number; running: number }>();
  /** Outcomes `_tasks.agent_outcomes` answers (the health pass). */
  const outcomes: { tenant: string; agent_id: string; completed: number; failed: number; cancelled: number }[] = [];

  const admin = (tenant = `t-${randomUUID()}`): VerifiedIdentity => ({
    tenant,
    user: 'alice',
    session: 's-1',
    scopes: ['admin'],
  });
  const call = <T = Record<string, unknown>>(method: string, body: Record<string, unknown>, who: VerifiedIdentity) =>
    service.call(method, { identity: {}, ...body }, who) as Promise<T>;
  const outcome = (method: string, body: Record<string, unknown>, who: VerifiedIdentity) =>
    outcomeOf(call(method, body, who));
  const events = (tenant: string, type: string): Promise<EventFrame[]> => storedEvents(service.bus, { tenant, type });
  const register = (who: VerifiedIdentity, agentId: string, config: Record<string, unknown> = CONFIG) =>
    call('agent_config.set_revision', { agent_id: agentId, config }, who);
  const get = async (who: VerifiedIdentity, agentId: string) =>
    (await call<{ agent: Agent }>('agents.get', { agent_id: agentId }, who)).agent;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ars-fleet-'));
    nats = await startNatsServer({ storeDir: dir });
    bus = await connectBus({ servers: nats.url, name: 'fleet-stand-ins' });
    const logger = createLogger({ name: 'stand-ins', level: 'silent' });
    const serve = (name: string, handlers: Record<string, (r: RpcRequest) => Promise<unknown>>) =>
      serveService(bus, { service: name, version: '0.0.1', instanceId: `stand-in-${name}`, handlers, logger });
    standIns.push(
      await serve('run-executor', {
        '_tasks.agent_runs': async ({ body }) => {
          const b = body as { tenant: string; agent_ids: string[] };
          const items = b.agent_ids.map((id) => ({
            agent_id: id,
            ...(running.get(`${b.tenant}/${id}`) ?? { pending: 0, running: 0 }),
          }));
          return { items, complete: true };
        },
        '_tasks.agent_metrics': async () => ({
          counters: { runs_started: 3, runs_completed: 2, runs_failed: 1, tokens_in: 120, llm_cost: 0.25 },
          complete: true,
        }),
        '_tasks.agent_outcomes': async () => ({ items: outcomes }),
      }),
      await serve('memory', {
        '_memory.tenant_usage': async () => ({
          item_count: 2,
          size_bytes: 40,
          health: 'healthy',
          tiers: [{ tier: 'tenant', item_count: 2, size_bytes: 40 }],
        }),
      }),
      await serve('governance', {
        '_governance.effective_overrides': async ({ body }) => ({
          tenant: (body as { tenant: string }).tenant,
          overrides: {},
        }),
        '_governance.tenant_budget': async () => ({
          tier: 'standard',
          budgets: [{ tier: 'standard', limit_usd: 10, used_usd: 1 }],
          spend: [],
          overrides: { max_tokens: 100 },
        }),
      }),
    );
    service = await startInProcess(agentRegistryService, {
      natsUrl: nats.url,
      env: { FLEET_HEALTH_INTERVAL_MS: String(HEALTH_INTERVAL_MS) },
    });
  });

  afterAll(async () => {
    await service?.stop();
    for (const s of standIns) await s.stop();
    await bus?.close();
    await nats?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('implements all 13 agents.* methods of the registry', async () => {
    const names = methodsOfService('agent-registry')
      .map((m) => m.name)
      .filter((n) => n.startsWith('agents.'));
    expect(names).toHaveLength(13);
    const outcomes = await Promise.all(names.map((m) => outcome(m, { agent_id: 'default' }, admin())));
    expect(outcomes.filter((o) => !o.ok && o.code === 'unimplemented')).toEqual([]);
  });

  describe('registration', () => {
    it('registers an agent at its first revision and publishes agent.registered', async () => {
      const who = admin();
      await register(who, 'helper');
      const agent = await get(who, 'helper');
      expect(agent).toMatchObject({
        agent_id: 'helper',
        incarnation: 0,
        version_hash: contentHash(CONFIG),
        hosting: 'run-executor',
        health: 'unknown',
        state: 'running',
        runs_in_flight: 0,
        runs_queued: 0,
      });
      const [registered] = await events(who.tenant, 'agent.registered');
      expect(registered?.payload).toEqual({
        AgentID: 'helper',
        RegistrationKey: agent.registration_key,
        Incarnation: 0,
        VersionHash: contentHash(CONFIG),
        Hosting: 'run-executor',
        RegisteredAt: expect.any(Number),
      });
    });

    it('takes a new revision as the version hash, and restart reports the change once', async () => {
      const who = admin();
      await register(who, 'helper');
      const next = { ...CONFIG, llm_params: { model: 'gpt-other' } };
      await register(who, 'helper', next);
      expect((await get(who, 'helper')).version_hash).toBe(contentHash(next));
      await call('agents.restart', { agent_id: 'helper' }, who);
      await call('agents.restart', { agent_id: 'helper' }, who);
      const restarted = await events(who.tenant, 'agent.restarted');
      expect(restarted.map((e) => (e.payload as Record<string, unknown>).VersionHashChanged)).toEqual([true, false]);
      expect(Object.keys(restarted[0]?.payload as object).sort()).toEqual(
        ['AgentID', 'Incarnation', 'RegistrationKey', 'RestartedAt', 'VersionHash', 'VersionHashChanged'].sort(),
      );
      expect((await get(who, 'helper')).incarnation).toBe(2);
    });

    it('lists the default agent and every configured agent, filtered and paged', async () => {
      const who = admin();
      await register(who, 'alpha');
      await register(who, 'beta');
      const all = await call<{ items: Agent[] }>('agents.list', {}, who);
      expect(all.items.map((a) => a.agent_id)).toEqual(['alpha', 'beta', 'default']);
      const first = await call<{ items: Agent[]; next_cursor?: string }>('agents.list', { limit: 2 }, who);
      expect(first.items.map((a) => a.agent_id)).toEqual(['alpha', 'beta']);
      const rest = await call<{ items: Agent[] }>('agents.list', { limit: 2, cursor: first.next_cursor }, who);
      expect(rest.items.map((a) => a.agent_id)).toEqual(['default']);
      await call('agents.drain', { agent_id: 'beta' }, who);
      const draining = await call<{ items: Agent[] }>('agents.list', { filter: { state: 'draining' } }, who);
      expect(draining.items.map((a) => a.agent_id)).toEqual(['beta']);
    });

    it('answers 404 for an agent without a configuration', async () => {
      const outcomeOfGet = await outcome('agents.get', { agent_id: 'nobody' }, admin());
      expect(outcomeOfGet).toMatchObject({ ok: false, code: 'not_found' });
    });
  });

  describe('control', () => {
    it('refuses every control without the admin claim', async () => {
      const who = admin();
      await register(who, 'helper');
      for (const verb of ['deregister', 'drain', 'force_stop', 'pause', 'restart']) {
        const refused = await outcome(`agents.${verb}`, { agent_id: 'helper' }, { ...who, scopes: ['console:fleet'] });
        expect(refused).toMatchObject({ ok: false, code: 'identity_scope_required' });
      }
      expect((await get(who, 'helper')).state).toBe('running');
    });

    it('drains an agent once, publishing agent.drained with the reason', async () => {
      const who = admin();
      await register(who, 'helper');
      const first = await call('agents.drain', { agent_id: 'helper', reason: 'deploy' }, who);
      expect(first).toMatchObject({ agent_id: 'helper', command: 'drain', accepted: true, state: 'draining' });
      const again = await call('agents.drain', { agent_id: 'helper' }, who);
      expect(again).toMatchObject({ accepted: false, state: 'draining' });
      const drained = await events(who.tenant, 'agent.drained');
      expect(drained).toHaveLength(1);
      expect(drained[0]?.payload).toEqual({
        AgentID: 'helper',
        Command: 'drain',
        Reason: 'deploy',
        IssuedAt: Date.parse(String((first as { issued_at: string }).issued_at)),
      });
      expect(drained[0]?.user).toBe('alice');
    });

    it('answers a repeated command id with the first response and applies it once', async () => {
      const who = admin();
      await register(who, 'helper');
      const body = { agent_id: 'helper', command_id: 'cmd-1' };
      const first = await call('agents.restart', body, who);
      const second = await call('agents.restart', body, who);
      expect(second).toEqual(first);
      expect((await get(who, 'helper')).incarnation).toBe(1);
      expect(await events(who.tenant, 'agent.restart_requested')).toHaveLength(1);
      const reused = await outcome('agents.pause', body, who);
      expect(reused).toMatchObject({ ok: false, code: 'conflict' });
    });

    it('pauses, force-stops and restarts, refusing a drain of a stopped agent', async () => {
      const who = admin();
      await register(who, 'helper');
      expect(await call('agents.pause', { agent_id: 'helper' }, who)).toMatchObject({ state: 'paused' });
      expect(await call('agents.force_stop', { agent_id: 'helper' }, who)).toMatchObject({ state: 'stopped' });
      expect(await outcome('agents.drain', { agent_id: 'helper' }, who)).toMatchObject({ ok: false, code: 'conflict' });
      expect(await call('agents.restart', { agent_id: 'helper' }, who)).toMatchObject({
        state: 'running',
        incarnation: 1,
      });
      expect(await events(who.tenant, 'agent.paused')).toHaveLength(1);
      expect(await events(who.tenant, 'agent.force_stopped')).toHaveLength(1);
    });

    it('refuses to deregister an agent with runs in flight unless forced', async () => {
      const who = admin();
      await register(who, 'helper');
      running.set(`${who.tenant}/helper`, { pending: 0, running: 1 });
      const refused = await outcome('agents.deregister', { agent_id: 'helper', command_id: 'd-1' }, who);
      expect(refused).toMatchObject({ ok: false, code: 'conflict' });
      expect((await get(who, 'helper')).state).toBe('running');
      // The refused command id is free again.
      const forced = await call('agents.deregister', { agent_id: 'helper', command_id: 'd-1', force: true }, who);
      expect(forced).toMatchObject({ accepted: true, state: 'deregistered' });
      const [deregistered] = await events(who.tenant, 'agent.deregistered');
      expect(Object.keys(deregistered?.payload as object).sort()).toEqual([
        'AgentID',
        'DeregisteredAt',
        'RegistrationKey',
      ]);
      expect(await outcome('agents.get', { agent_id: 'helper' }, who)).toMatchObject({ ok: false, code: 'not_found' });
      const listed = await call<{ items: Agent[] }>('agents.list', {}, who);
      expect(listed.items.map((a) => a.agent_id)).not.toContain('helper');
    });

    it('registers a deregistered agent again at its next revision, with a new key', async () => {
      const who = admin();
      await register(who, 'helper');
      const before = await get(who, 'helper');
      await call('agents.deregister', { agent_id: 'helper' }, who);
      await register(who, 'helper', { ...CONFIG, skills: [] });
      const after = await get(who, 'helper');
      expect(after.registration_key).not.toBe(before.registration_key);
      expect(after).toMatchObject({ state: 'running', incarnation: 0 });
      expect(await events(who.tenant, 'agent.registered')).toHaveLength(2);
    });

    it('refuses force on a verb other than deregister, and an unknown member', async () => {
      const who = admin();
      await register(who, 'helper');
      const forced = await outcome('agents.drain', { agent_id: 'helper', force: true }, who);
      expect(forced).toMatchObject({ ok: false, code: 'invalid_request' });
      expect(forced.ok === false && forced.message).toContain('force');
      const unknown = await outcome('agents.pause', { agent_id: 'helper', hard: true }, who);
      expect(unknown).toMatchObject({ ok: false, code: 'invalid_request' });
    });
  });

  describe('reads', () => {
    it('answers get with the run counts of the run-executor', async () => {
      const who = admin();
      await register(who, 'busy');
      running.set(`${who.tenant}/busy`, { pending: 2, running: 3 });
      expect(await get(who, 'busy')).toMatchObject({ runs_in_flight: 3, runs_queued: 2 });
    });

    it('answers governance, memory and metrics from their owners', async () => {
      const who = admin();
      await register(who, 'helper');
      const governance = await call('agents.governance', { agent_id: 'helper' }, who);
      expect(governance).toMatchObject({ agent_id: 'helper', tier: 'standard', overrides: { max_tokens: 100 } });
      const memory = await call('agents.memory', { agent_id: 'helper' }, who);
      expect(memory).toMatchObject({ agent_id: 'helper', item_count: 2, size_bytes: 40, health: 'healthy' });
      const metrics = await call('agents.metrics', { agent_id: 'helper', since: '2026-01-01T00:00:00Z' }, who);
      expect(metrics).toMatchObject({ agent_id: 'helper', counters: { runs_started: 3, runs_failed: 1 } });
      const backwards = await outcome(
        'agents.metrics',
        { agent_id: 'helper', since: '2026-02-01T00:00:00Z', until: '2026-01-01T00:00:00Z' },
        who,
      );
      expect(backwards).toMatchObject({ ok: false, code: 'invalid_request' });
    });

    it('answers permissions, skills and tools from the configuration', async () => {
      const who = admin();
      await register(who, 'helper', { ...CONFIG, tool_exposure: { mode: 'allow_list', tools: ['echo'] } });
      const skill = (name: string) => ({ name, content: `${name} first.`, triggers: [] });
      // The agent's own skill, a tenant skill its membership names, and one it does not.
      await call('agent_config.skills.upsert', { agent_id: 'helper', skill: skill('own') }, who);
      await call('agent_config.skills.upsert', { skill: skill('triage') }, who);
      await call('agent_config.skills.upsert', { skill: skill('unlisted') }, who);
      const permissions = await call<{ permissions: { resource: string }[] }>(
        'agents.permissions',
        { agent_id: 'helper' },
        who,
      );
      expect(permissions.permissions.map((p) => p.resource)).toEqual(['tool:echo']);
      const tools = await call<{ items: { name: string }[] }>('agents.tools', { agent_id: 'helper' }, who);
      expect(tools.items.map((t) => t.name)).toEqual(['echo']);
      const skills = await call<{ items: { name: string; scope: string }[] }>(
        'agents.skills',
        { agent_id: 'helper' },
        who,
      );
      expect(skills.items.map((k) => [k.name, k.scope])).toEqual([
        ['own', 'agent'],
        ['triage', 'tenant'],
      ]);
    });

    it('lets a caller without claims read its own tenant', async () => {
      const who = admin();
      await register(who, 'helper');
      const reader = { ...who, user: 'bob', scopes: [] };
      expect((await get(reader, 'helper')).agent_id).toBe('helper');
    });
  });

  it('reports health from the runs ended in the last interval', async () => {
    const who = admin();
    await register(who, 'flaky');
    outcomes.push({ tenant: who.tenant, agent_id: 'flaky', completed: 1, failed: 3, cancelled: 0 });
    const deadline = Date.now() + 10_000;
    let reports: EventFrame[] = [];
    while (reports.length === 0 && Date.now() < deadline) {
      reports = await events(who.tenant, 'agent.health');
      if (reports.length === 0) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(reports[0]?.payload).toEqual({ AgentID: 'flaky', Health: 'failing', ReportedAt: expect.any(Number) });
    const agent = await get(who, 'flaky');
    expect(agent.health).toBe('failing');
    expect(agent).toHaveProperty('last_reported_at');
  });
});
