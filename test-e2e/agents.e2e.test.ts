import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ArsClient } from '@ars/client';
import { mintToken, startTestSystem, uniqueIdentity } from '@ars/testkit';
import type { TestIdentity, TestSystem } from '@ars/testkit';
import { refusal, startWatched, storedEvents, storedRunEvents } from './support/runs.ts';

/**
 * The agent fleet end to end, over HTTP against the whole system: an agent
 * registered by its first revision, read by any caller of its tenant,
 * controlled only by an admin, and its control enforced by the executors
 * (a drained agent takes no new run; a restart returns it to service).
 */

interface Caller {
  readonly identity: TestIdentity;
  readonly client: ArsClient;
}

const AGENT = 'e2e-fleet';

describe('agents end to end', () => {
  let sys: TestSystem;
  let admin: Caller;
  let member: Caller;

  async function caller(identity: TestIdentity, scopes: readonly string[]): Promise<Caller> {
    const token = await mintToken(sys.baseUrl, { ...identity, scopes });
    return { identity, client: sys.client({ token }) };
  }

  /** Starts a run of the agent until `accepted` says the answer is the one wanted (the executors' watch lags by ms). */
  async function startUntil(want: 'refused' | 'accepted', deadlineMs = 10_000): Promise<unknown> {
    const deadline = Date.now() + deadlineMs;
    for (;;) {
      const attempt = startWatched(member.client, { query: '#script finish:ok', agent_id: AGENT });
      const outcome = await attempt.then(
        (run) => ({ run }),
        (error: unknown) => ({ error }),
      );
      if ('run' in outcome) {
        const terminal = await outcome.run.log.terminal();
        await outcome.run.log.close();
        if (want === 'accepted') return terminal;
      } else if (want === 'refused') {
        return refusal(Promise.reject(outcome.error));
      } else throw outcome.error;
      if (Date.now() > deadline) throw new Error(`start never ${want}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  beforeAll(async () => {
    sys = await startTestSystem();
    const base = uniqueIdentity('fleet');
    admin = await caller(base, ['admin']);
    member = await caller({ ...base, user: `${base.user}-member` }, []);
    await admin.client.call('agent_config.set_revision', {
      identity: {},
      agent_id: AGENT,
      config: { llm_provider: { provider_name: 'scripted', provider: 'scripted' } },
    });
  }, 120_000);

  afterAll(async () => {
    await sys?.stop();
  });

  it('registers the agent at its first revision and lets any caller of the tenant read it', async () => {
    const { agent } = await member.client.call<{ agent: Record<string, unknown> }>('agents.get', {
      identity: {},
      agent_id: AGENT,
    });
    expect(agent).toMatchObject({ agent_id: AGENT, incarnation: 0, hosting: 'run-executor', state: 'running' });
    const list = await member.client.call<{ items: { agent_id: string }[] }>('agents.list', { identity: {} });
    expect(list.items.map((a) => a.agent_id)).toContain(AGENT);
    const registered = await storedEvents(admin.client, { types: ['agent.registered'] });
    expect(registered.map((e) => e.payload.AgentID)).toContain(AGENT);
  });

  it('refuses fleet control to a caller without the admin claim (403)', async () => {
    for (const verb of ['drain', 'pause', 'force_stop', 'restart', 'deregister']) {
      const refused = await refusal(member.client.call(`agents.${verb}`, { identity: {}, agent_id: AGENT }));
      expect(refused).toMatchObject({ status: 403, code: 'identity_scope_required' });
    }
  });

  it('fans agents.list in across tenants for console:fleet, audited, and refuses it (403) without the claim', async () => {
    const other = await caller(uniqueIdentity('fleet-other'), ['admin']);
    await other.client.agent_config.set_revision({ agent_id: 'e2e-other', config: { llm_params: { model: 'm' } } });
    const watcher = await caller(uniqueIdentity('fleet-watch'), ['console:fleet']);
    const tenants = [admin.identity.tenant, other.identity.tenant];

    const named = await watcher.client.agents.list({ filter: { tenant_ids: tenants, text: 'e2e-' } });
    // By tenant, then agent id: the two tenants differ before either ends, so sorting the keys sorts the tenants.
    const byTenant = [`${admin.identity.tenant}/${AGENT}`, `${other.identity.tenant}/e2e-other`].sort();
    expect(named.items.map((a) => `${a.tenant}/${a.agent_id}`)).toEqual(byTenant);
    // The run counts of another tenant's agents come with the list.
    for (const agent of named.items) expect(agent).toMatchObject({ runs_in_flight: 0, runs_queued: 0 });

    const every = await watcher.client.agents.list({ filter: { all_tenants: true, text: 'e2e-' }, limit: 500 });
    expect(every.items.map((a) => `${a.tenant}/${a.agent_id}`)).toEqual(
      expect.arrayContaining([`${admin.identity.tenant}/${AGENT}`, `${other.identity.tenant}/e2e-other`]),
    );
    const audits = await storedEvents(watcher.client, { types: ['audit.admin_scope_used'] });
    // (events.list by console:fleet is itself a crossing, audited under its own method.)
    expect(audits.filter((e) => e.payload.Method === 'agents.list').map((e) => e.payload.Reason)).toEqual([
      'filter.tenant_ids crossed under console:fleet',
      'filter.all_tenants crossed under console:fleet',
    ]);

    for (const filter of [{ tenant_ids: [other.identity.tenant] }, { tenant_ids: tenants }, { all_tenants: true }]) {
      const refused = await refusal(member.client.agents.list({ filter }));
      expect(refused).toMatchObject({ status: 403, code: 'scope_mismatch' });
    }
    const own = await member.client.agents.list({ filter: { tenant_ids: [admin.identity.tenant] } });
    expect(own.items.map((a) => a.agent_id)).toContain(AGENT);
  });

  it('drains the agent under load: no new run starts, its runs in flight complete, a restart resumes it', async () => {
    const inFlight = await Promise.all(
      [1, 2, 3].map(() =>
        startWatched(member.client, { query: '#script tool:wait{ms:1500};finish:ok', agent_id: AGENT }),
      ),
    );
    await Promise.all(inFlight.map((run) => run.log.next('tool.invoked')));
    const drained = await admin.client.call('agents.drain', {
      identity: {},
      agent_id: AGENT,
      reason: 'e2e',
      command_id: 'e2e-drain-1',
    });
    expect(drained).toMatchObject({ accepted: true, state: 'draining', command_id: 'e2e-drain-1' });
    expect(await startUntil('refused')).toMatchObject({ status: 409, code: 'conflict' });
    for (const run of inFlight) {
      expect((await run.log.terminal()).type).toBe('task.completed');
      await run.log.close();
    }
    const restarted = await admin.client.call('agents.restart', { identity: {}, agent_id: AGENT });
    expect(restarted).toMatchObject({ accepted: true, state: 'running', incarnation: 1 });
    expect(await startUntil('accepted')).toMatchObject({ type: 'task.completed' });
    const events = await storedEvents(admin.client, {
      types: ['agent.drained', 'agent.restart_requested', 'agent.restarted'],
    });
    expect(events.filter((e) => e.payload.AgentID === AGENT).map((e) => e.type)).toEqual([
      'agent.drained',
      'agent.restart_requested',
      'agent.restarted',
    ]);
  });

  it('force-stops the agent: its run in flight is hard-cancelled and no LLM token follows agent.force_stopped', async () => {
    const stopping = 'e2e-stop';
    await admin.client.call('agent_config.set_revision', {
      identity: {},
      agent_id: stopping,
      config: { llm_provider: { provider_name: 'scripted', provider: 'scripted' } },
    });
    const run = await startWatched(member.client, {
      query: '#script tool:wait{ms:30000};tool:echo{};finish:never',
      agent_id: stopping,
    });
    await run.log.next('tool.invoked');
    const stopped = await admin.client.call('agents.force_stop', { identity: {}, agent_id: stopping });
    expect(stopped).toMatchObject({ accepted: true, state: 'stopped' });
    expect((await run.log.terminal()).type).toBe('task.cancelled');
    await run.log.close();
    const [event] = (await storedEvents(admin.client, { types: ['agent.force_stopped'] })).filter(
      (e) => e.payload.AgentID === stopping,
    );
    expect(event).toBeDefined();
    const tokens = (await storedRunEvents(member.client, run.taskId)).filter(
      (e) => e.type === 'llm.completion.chunk' && e.sequence > (event?.sequence ?? 0),
    );
    expect(tokens).toEqual([]);
    const refused = await refusal(member.client.call('start', { identity: {}, query: 'again', agent_id: stopping }));
    expect(refused).toMatchObject({ status: 409, code: 'conflict' });
  });

  it('reads the agent’s metrics, memory and governance from their owners', async () => {
    const metrics = await member.client.call<{ counters: Record<string, number> }>('agents.metrics', {
      identity: {},
      agent_id: AGENT,
    });
    expect(metrics.counters.runs_completed).toBeGreaterThanOrEqual(1);
    const memory = await member.client.call('agents.memory', { identity: {}, agent_id: AGENT });
    expect(memory).toMatchObject({ agent_id: AGENT, item_count: 0 });
    const governance = await member.client.call('agents.governance', { identity: {}, agent_id: AGENT });
    expect(governance).toMatchObject({ agent_id: AGENT, tier: expect.any(String) });
    const missing = await refusal(member.client.call('agents.get', { identity: {}, agent_id: 'no-such-agent' }));
    expect(missing).toMatchObject({ status: 404, code: 'not_found' });
  });
});
