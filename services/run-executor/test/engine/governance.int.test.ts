import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventFrame, VerifiedIdentity } from '@ars/contracts';
import { newCaller, serveGovernanceFake, startEngineHarness, TERMINAL_TYPES, untilRedelivered } from './harness.ts';
import type { EngineHarness } from './harness.ts';
import { startSystemHarness } from './system-harness.ts';
import type { SystemHarness } from './system-harness.ts';

/**
 * Governance around every LLM call, with the real governance and
 * agent-registry services: budgets, the max-tokens cap, rate-limit waits,
 * model allow-lists and provider failover change what a run does.
 */

const ofType = (events: readonly EventFrame[], type: string) => events.filter((e) => e.type === type);

/** A chat-completions server that always fails with 503 (asking the SDK to retry at once), recording each request's key. */
function startFailingProvider(): Promise<{ server: Server; url: string; keys: string[] }> {
  const keys: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    keys.push(String(req.headers.authorization ?? ''));
    req.resume();
    req.on('end', () => {
      res.writeHead(503, { 'content-type': 'application/json', 'retry-after-ms': '1' });
      res.end(JSON.stringify({ error: { message: 'overloaded', type: 'server_error' } }));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, keys }),
    ),
  );
}

describe('governance around LLM calls', () => {
  let h: SystemHarness;
  let failing: Awaited<ReturnType<typeof startFailingProvider>>;
  const admin: VerifiedIdentity = { tenant: 'ops', user: 'root', session: 'console', scopes: ['admin'] };

  async function setPosture(tier: Record<string, unknown>): Promise<void> {
    await h.call(
      'governance',
      'governance.set_posture',
      { default_tier: 'standard', tiers: [{ name: 'standard', ...tier }] },
      admin,
    );
  }

  beforeAll(async () => {
    failing = await startFailingProvider();
    h = await startSystemHarness(['governance', 'agent-registry']);
    await setPosture({
      models: ['scripted', 'test-model'],
      budget: { ceiling: 1, currency: 'USD', period: 'total' },
      max_tokens: 500,
      max_tokens_policy: 'clip',
      rate_limit: { capacity: 3, refill_tokens: 1, refill_every_ms: 1_000, on_limit: 'wait', max_wait_ms: 10_000 },
      failover: [
        { name: 'primary', kind: 'openai', base_url: failing.url },
        { name: 'backup', kind: 'scripted' },
      ],
    });
  });

  afterAll(async () => {
    await h?.stop();
    await new Promise((resolve) => failing?.server.close(resolve));
  });

  it('stops further calls once the budget is crossed and fails the run with budget_exceeded, without retrying it', async () => {
    const caller = newCaller();
    const { taskId, watch } = await h.run(caller, { query: '#script cost:0.6;tool:echo{};tool:echo{};finish:never' });
    const events = watch.events;
    expect(ofType(events, 'llm.cost.recorded').map((e) => (e.payload.Cost as { total: number }).total)).toEqual([
      0.6, 0.6,
    ]);
    expect(ofType(events, 'planner.decision')).toHaveLength(2);
    expect(ofType(events, 'governance.budget_exceeded').map((e) => e.payload)).toEqual([
      expect.objectContaining({ Tier: 'standard', Model: 'scripted', Ceiling: 1, Currency: 'USD', TotalCost: 1.2 }),
    ]);
    expect(
      events
        .filter((e) => e.type.startsWith('task.') && e.type !== 'task.spawned' && e.type !== 'task.started')
        .map((e) => e.payload),
    ).toEqual([{ TaskID: taskId, ErrorCode: 'budget_exceeded' }]);
    expect(await h.tasks.getTask(taskId)).toMatchObject({
      status: 'failed',
      error_code: 'budget_exceeded',
      cost_usd: 1.2,
    });

    // The tenant's next run is refused at its first call.
    const next = await h.run(caller, { query: '#script finish:never' });
    expect(ofType(next.watch.events, 'planner.decision')).toHaveLength(0);
    expect(next.watch.events.at(-1)?.payload).toEqual({ TaskID: next.taskId, ErrorCode: 'budget_exceeded' });
  });

  it('clips the max tokens the provider is asked for to the tier cap', async () => {
    const caller = newCaller();
    await h.call('run-executor', 'runs.set_overrides', { overrides: { max_tokens: 2000 } }, caller);
    const { watch } = await h.run(caller, { query: '#script inspect' });
    const seen = JSON.parse(String(ofType(watch.events, 'planner.decision')[0]?.payload.ReasoningTrace)) as {
      params: { max_tokens: number };
    };
    expect(seen.params.max_tokens).toBe(500);
    expect(ofType(watch.events, 'governance.maxtokens_exceeded').map((e) => e.payload)).toEqual([
      expect.objectContaining({ Tier: 'standard', Model: 'scripted', Requested: 2000, Cap: 500 }),
    ]);
  });

  it('fails a run whose model the tier does not allow with model_not_allowed', async () => {
    const caller = newCaller();
    await h.call('run-executor', 'runs.set_overrides', { overrides: { model: 'forbidden-model' } }, caller);
    const { taskId, watch } = await h.run(caller, { query: '#script finish:never' });
    expect(ofType(watch.events, 'planner.decision')).toHaveLength(0);
    expect(watch.events.at(-1)?.payload).toEqual({ TaskID: taskId, ErrorCode: 'model_not_allowed' });
  });

  it('waits out a rate limit (wait policy) and completes', async () => {
    const caller = newCaller();
    const started = Date.now();
    const { watch } = await h.run(caller, {
      query: '#script tool:echo{};tool:echo{};tool:echo{};tool:echo{};finish:done',
    });
    expect(watch.events.at(-1)?.type).toBe('task.completed');
    const limited = ofType(watch.events, 'governance.rate_limited');
    expect(limited.length).toBeGreaterThanOrEqual(1);
    expect(limited[0]?.payload).toMatchObject({
      Tier: 'standard',
      Model: 'scripted',
      Capacity: 3,
      RefillTokens: 1,
      RefillEvery: 1_000_000_000,
    });
    // Five calls through a bucket of three refilled one a second: two refills waited for.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    expect(ofType(watch.events, 'planner.decision')).toHaveLength(5);
  });

  it('fails over to the next provider of the chain on a provider error, with the tenant key for the first', async () => {
    const caller = newCaller();
    const callerAdmin = { ...caller, scopes: ['admin'] };
    await h.call(
      'governance',
      'governance.rotate_key',
      { provider: 'primary', key: 'sk-primary-test-key-000' },
      callerAdmin,
    );
    await h.call(
      'agent-registry',
      'agent_config.set_revision',
      {
        agent_id: 'oai',
        config: {
          llm_provider: { provider_name: 'primary', provider: 'openai', base_url: failing.url, model: 'test-model' },
        },
      },
      callerAdmin,
    );
    const before = failing.keys.length;
    const { watch } = await h.run(caller, { query: '#script tool:echo{};finish:served by backup', agent_id: 'oai' });
    expect(watch.events.at(-1)?.type).toBe('task.completed');
    expect(ofType(watch.events, 'governance.failover').map((e) => e.payload)).toEqual([
      {
        Identity: { tenant: caller.tenant, user: caller.user, session: caller.session, run: watch.events[0]?.run },
        FromProvider: 'primary',
        ToProvider: 'backup',
        HopIndex: 1,
        AccumCostUSD: 0,
        Reason: expect.any(String),
      },
    ]);
    // One call to the primary (the SDK retries a 503 once), none for the second step: the run stays on the backup.
    const hits = failing.keys.slice(before);
    expect(hits).toEqual(['Bearer sk-primary-test-key-000', 'Bearer sk-primary-test-key-000']);
    expect(ofType(watch.events, 'planner.decision')).toHaveLength(2);
    expect(ofType(watch.events, 'llm.cost.recorded').map((e) => e.payload.Model)).toEqual(['test-model', 'test-model']);
  });

  describe('a long rate-limit wait', () => {
    beforeAll(async () => {
      await setPosture({
        rate_limit: { capacity: 1, refill_tokens: 1, refill_every_ms: 60_000, on_limit: 'wait', max_wait_ms: 120_000 },
      });
    });

    it('ends at once when the run is cancelled, without calling the provider', async () => {
      const caller = newCaller();
      const { taskId, watch } = await h.start(caller, { query: '#script tool:echo{};finish:never' });
      await watch.until((e) => e.type === 'governance.rate_limited');
      const asked = Date.now();
      await h.call('run-executor', 'cancel', { identity: { run: taskId } }, caller);
      const terminal = await watch.terminal();
      watch.stop();
      expect(terminal.type).toBe('task.cancelled');
      expect(Date.now() - asked).toBeLessThan(5_000);
      expect(ofType(watch.events, 'planner.decision')).toHaveLength(1);
    });
  });

  describe('governance not answering', () => {
    beforeAll(async () => {
      await setPosture({ models: ['scripted'] });
    });

    it('makes no LLM call while governance is away: the run is handed back, and completes once governance is back', async () => {
      // Governance alone: a run never runs without its configuration, so agent-registry stays.
      await h.peers.stop(['governance']);
      const caller = newCaller();
      const { taskId, watch } = await h.start(caller, { query: '#script tool:echo{};finish:fine' });
      await untilRedelivered(h.bus);
      expect(watch.types().filter((type) => type.startsWith('planner.') || type.startsWith('llm.'))).toEqual([]);
      expect(watch.types().some((type) => TERMINAL_TYPES.includes(type))).toBe(false);
      expect(await h.tasks.getTask(taskId)).toMatchObject({ status: expect.not.stringMatching(/completed|failed/) });

      await h.peers.restart('governance');
      const terminal = await watch.terminal(30_000);
      watch.stop();
      expect(terminal.type).toBe('task.completed');
      expect(ofType(watch.events, 'planner.decision')).toHaveLength(2);
      expect(ofType(watch.events, 'llm.cost.recorded')).toHaveLength(2);
    });
  });
});

describe('an executor that never reached governance', () => {
  let h: EngineHarness;

  beforeAll(async () => {
    h = await startEngineHarness();
    await h.governance.served.stop();
  });

  afterAll(async () => {
    await h?.stop();
  });

  it('runs nothing un-governed: the run waits, without an LLM call, until governance answers', async () => {
    const caller = newCaller();
    const { watch } = await h.start(caller, { query: '#script cost:5;finish:fine' });
    await untilRedelivered(h.bus);
    expect(watch.types().filter((type) => type.startsWith('planner.') || type.startsWith('llm.'))).toEqual([]);
    const governance = await serveGovernanceFake(h.bus);
    try {
      const terminal = await watch.terminal(30_000);
      watch.stop();
      expect(terminal.type).toBe('task.completed');
      expect(governance.recorded.map((r) => r.cost_usd)).toEqual([5]);
    } finally {
      await governance.served.stop();
    }
  });
});

describe('calls of a tier that constrains nothing, with the real governance', () => {
  let h: SystemHarness;
  const admin: VerifiedIdentity = { tenant: 'ops', user: 'root', session: 'console', scopes: ['admin'] };
  /** The governance endpoints asked, in order (every request crosses `ars.rpc.governance.<endpoint>`). */
  const asked: string[] = [];
  const askedOf = (from: number) => asked.slice(from).filter((endpoint) => endpoint.startsWith('_governance.'));

  beforeAll(async () => {
    h = await startSystemHarness(['governance', 'agent-registry']);
    h.bus.nc.subscribe('ars.rpc.governance.>', {
      callback: (error, msg) => {
        if (error === null) asked.push(msg.subject.slice('ars.rpc.governance.'.length));
      },
    });
    await h.bus.nc.flush();
  });

  afterAll(async () => {
    await h?.stop();
  });

  async function spendOf(caller: VerifiedIdentity) {
    const reply = (await h.call('governance', '_governance.tenant_budget', { tenant: caller.tenant }, caller)) as {
      spend: { period: string; spent_usd: number; calls: number }[];
    };
    return reply.spend.find((window) => window.period === 'total');
  }

  it("admits them without asking governance, and records the run's costs in one request before its end", async () => {
    const caller = newCaller();
    // Once so that the posture is known; the second run is the one counted.
    await h.run(caller, { query: '#script finish:warm' });
    const from = asked.length;
    const { watch } = await h.run(caller, {
      query: '#script cost:0.25;tool:echo{"a":1};tool:echo{"b":2};finish:done',
    });
    expect(ofType(watch.events, 'task.completed')).toHaveLength(1);
    expect(ofType(watch.events, 'llm.cost.recorded')).toHaveLength(3);
    // The posture's digest may be asked again (a notice of another service's write drops it): nothing else is.
    expect(askedOf(from).filter((endpoint) => endpoint !== '_governance.admission_posture')).toEqual([
      '_governance.record_costs',
    ]);
    // The warm-up's call and the three: recorded by the time the run ended.
    expect(await spendOf(caller)).toMatchObject({ calls: 4, spent_usd: 0.75 });
  });

  it('admits by governance from the first run after a posture with a budget is set, and again without once it is lifted', async () => {
    const caller = newCaller();
    await h.run(caller, { query: '#script finish:warm' });
    await h.call(
      'governance',
      'governance.set_posture',
      {
        default_tier: 'standard',
        tiers: [{ name: 'standard', budget: { ceiling: 0.5, currency: 'USD', period: 'total' } }],
      },
      admin,
    );
    try {
      const from = asked.length;
      const { watch } = await h.run(caller, { query: '#script cost:0.3;tool:echo{};tool:echo{};finish:never' });
      const terminal = watch.events.find((e) => TERMINAL_TYPES.includes(e.type));
      expect(terminal).toMatchObject({ type: 'task.failed', payload: { ErrorCode: 'budget_exceeded' } });
      expect(askedOf(from).filter((endpoint) => endpoint === '_governance.admit_llm_call')).toHaveLength(3);
    } finally {
      await h.call(
        'governance',
        'governance.set_posture',
        { default_tier: 'default', tiers: [{ name: 'default' }] },
        admin,
      );
    }
    const other = newCaller();
    const from = asked.length;
    const { watch } = await h.run(other, { query: '#script cost:0.3;tool:echo{};finish:done' });
    expect(ofType(watch.events, 'task.completed')).toHaveLength(1);
    expect(askedOf(from).filter((endpoint) => endpoint === '_governance.admit_llm_call')).toEqual([]);
  });
});
