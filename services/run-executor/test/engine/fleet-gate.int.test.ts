import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLEET_BUCKET, openKv, RUNS_STREAM } from '@ars/bus';
import type { KV } from '@ars/bus';
import type { AgentState, EventFrame, FleetEntry, VerifiedIdentity } from '@ars/contracts';
import { outcomeOf } from '@ars/service-kit/testing';
import { fleetKeyOf } from '../../src/engine/fleet-gate.ts';
import { consumerName } from '../../src/engine/priority.ts';
import { newCaller, startEngineHarness } from './harness.ts';
import type { EngineHarness, RunWatch } from './harness.ts';

/**
 * Fleet control's effect on real runs: the whole run-executor on a spawned
 * nats-server, the agents' states written to the real `ars_fleet` KV bucket
 * as agent-registry writes them (the `FleetEntry` contract).
 */

const index = (watch: RunWatch, predicate: (e: EventFrame) => boolean) => watch.events.findIndex(predicate);
const invoked = (tool: string) => (e: EventFrame) => e.type === 'tool.invoked' && e.payload.ToolName === tool;

describe('fleet gate', () => {
  let h: EngineHarness;
  let kv: KV;
  /** The last entry written per tenant and agent (incarnations and command ids follow on). */
  const written = new Map<string, FleetEntry>();
  let commands = 0;

  /** Writes the agent's registration as agent-registry does on a fleet command. */
  async function setState(
    caller: VerifiedIdentity,
    agentId: string,
    state: AgentState,
    extra: Partial<FleetEntry> = {},
  ): Promise<void> {
    const key = fleetKeyOf(caller.tenant, agentId);
    const now = new Date().toISOString();
    const previous = written.get(key);
    commands += 1;
    const entry: FleetEntry = {
      tenant: caller.tenant,
      agent_id: agentId,
      registration_key: 'key',
      incarnation: previous?.incarnation ?? 0,
      version_hash: 'sha256:v',
      started_version_hash: 'sha256:v',
      revision_id: null,
      hosting: 'run-executor',
      health: 'unknown',
      registered_at: previous?.registered_at ?? now,
      changed_at: now,
      command_id: `cmd-${commands}`,
      reason: 'test',
      state,
      ...extra,
    };
    written.set(key, entry);
    await kv.put(key, JSON.stringify(entry));
  }

  /** Resolves once a run was handed back by a claim and offered again (its message redelivered). */
  async function untilHeldBack(before: number, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while ((await h.bus.jsm.consumers.info(RUNS_STREAM, consumerName('normal'))).num_redelivered <= before) {
      if (Date.now() > deadline) throw new Error('no run was held back');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  const redelivered = async () => (await h.bus.jsm.consumers.info(RUNS_STREAM, consumerName('normal'))).num_redelivered;

  beforeAll(async () => {
    h = await startEngineHarness(
      { EXECUTOR_CONCURRENCY: '2', AGENT_CONFIG_CACHE_MS: '600000' },
      { persistentStore: true },
    );
    h.agentConfigs.set('worker', {});
    kv = await openKv(h.bus, FLEET_BUCKET);
  });

  afterAll(async () => {
    await h?.stop();
  });

  it('refuses a start of a draining agent while its queued and in-flight runs complete', async () => {
    const caller = newCaller();
    // Two slots: the first two runs take them, the third waits on the queue.
    const slow = '#script tool:wait{ms:600};finish:ok';
    const runs = [await h.start(caller, { query: slow, agent_id: 'worker' })];
    runs.push(await h.start(caller, { query: slow, agent_id: 'worker' }));
    runs.push(await h.start(caller, { query: '#script finish:queued', agent_id: 'worker' }));
    const keyed = { query: '#script finish:keyed', agent_id: 'worker', idempotency_key: 'k-1' };
    const first = (await h.call('start', keyed, caller)) as { task_id: string };
    await setState(caller, 'worker', 'draining');
    // Executors learn the state from their watch of the bucket, a moment after the write: a start in that
    // moment is admitted like one made just before the drain (docs/decisions.md, "Fleet"). Probe until refused.
    const deadline = Date.now() + 5_000;
    let refused = await outcomeOf(h.call('start', { query: '#script finish:probe', agent_id: 'worker' }, caller));
    while (refused.ok && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      refused = await outcomeOf(h.call('start', { query: '#script finish:probe', agent_id: 'worker' }, caller));
    }
    expect(refused).toMatchObject({ ok: false, code: 'conflict' });
    expect(refused.ok === false && refused.message).toContain('draining');
    // A repeat of a start made before the drain still answers its task.
    expect(await h.call('start', keyed, caller)).toMatchObject({ task_id: first.task_id, reused: true });
    for (const { watch } of runs) expect((await watch.terminal(15_000)).type).toBe('task.completed');
    // Another agent of the tenant is not affected.
    const other = await h.start(caller, { query: '#script finish:ok' });
    expect((await other.watch.terminal()).type).toBe('task.completed');
  });

  it('holds a paused agent’s new runs on the queue and parks its in-flight run at the next step boundary', async () => {
    const caller = newCaller();
    const inFlight = await h.start(caller, {
      query: '#script tool:wait{ms:300};tool:echo{};finish:ok',
      agent_id: 'worker',
    });
    await inFlight.watch.until(invoked('wait'));
    await setState(caller, 'worker', 'paused');
    const requested = await inFlight.watch.until((e) => e.type === 'pause.requested');
    expect(String(requested.payload.Reason)).toContain('agent paused by fleet control');
    const before = await redelivered();
    const queued = await h.start(caller, { query: '#script finish:later', agent_id: 'worker' });
    await untilHeldBack(before);
    expect((await h.tasks.getTask(queued.taskId))?.status).toBe('pending');
    expect(queued.watch.types()).not.toContain('task.started');
    expect(index(inFlight.watch, invoked('echo'))).toBe(-1);

    // agents.restart of a paused agent resumes it.
    await setState(caller, 'worker', 'running', { incarnation: 1 });
    expect((await inFlight.watch.terminal(15_000)).type).toBe('task.completed');
    const resumed = index(inFlight.watch, (e) => e.type === 'pause.resumed');
    expect(resumed).toBeGreaterThan(index(inFlight.watch, (e) => e.type === 'pause.requested'));
    expect(index(inFlight.watch, invoked('echo'))).toBeGreaterThan(resumed);
    expect((await queued.watch.terminal(15_000)).type).toBe('task.completed');
  });

  it('hard-cancels a force-stopped agent’s run in flight and refuses its new starts', async () => {
    const caller = newCaller();
    const inFlight = await h.start(caller, { query: '#script tool:wait{ms:30000};finish:ok', agent_id: 'worker' });
    await inFlight.watch.until(invoked('wait'));
    const stoppedAt = Date.now();
    await setState(caller, 'worker', 'stopped');
    const terminal = await inFlight.watch.terminal(10_000);
    expect(terminal.type).toBe('task.cancelled');
    expect(Date.now() - stoppedAt).toBeLessThan(10_000);
    expect(inFlight.watch.events.some((e) => e.type === 'control.applied' && e.payload.Outcome === 'hard_cancel')).toBe(
      true,
    );
    const refused = await outcomeOf(h.call('start', { query: 'again', agent_id: 'worker' }, caller));
    expect(refused).toMatchObject({ ok: false, code: 'conflict' });
  });

  it('refuses a deregistered agent’s starts and cancels its runs in flight', async () => {
    const caller = newCaller();
    const inFlight = await h.start(caller, { query: '#script tool:wait{ms:30000};finish:ok', agent_id: 'worker' });
    await inFlight.watch.until(invoked('wait'));
    await setState(caller, 'worker', 'deregistered');
    expect((await inFlight.watch.terminal(10_000)).type).toBe('task.cancelled');
    const refused = await outcomeOf(h.call('start', { query: 'again', agent_id: 'worker' }, caller));
    expect(refused).toMatchObject({ ok: false, code: 'conflict' });
  });

  it('reloads the agent’s cached configuration when its incarnation goes up', async () => {
    const caller = newCaller();
    const scripted = (answer: string) => ({
      llm_provider: { provider_name: 'test', provider: 'scripted', script: [{ finish: answer }] },
    });
    const answer = async () => {
      const { watch } = await h.start(caller, { query: 'x', agent_id: 'reloaded' });
      await watch.terminal();
      return watch.events
        .filter((e) => e.type === 'llm.completion.chunk' && e.payload.Kind === 'text')
        .map((e) => e.payload.Delta)
        .join('');
    };
    h.agentConfigs.set('reloaded', scripted('first'));
    await setState(caller, 'reloaded', 'running');
    expect(await answer()).toBe('first');
    h.agentConfigs.set('reloaded', scripted('second'));
    // Cached for ten minutes: the new configuration is not seen yet.
    expect(await answer()).toBe('first');
    await setState(caller, 'reloaded', 'running', { incarnation: 1 });
    const deadline = Date.now() + 5_000;
    let latest = await answer();
    while (latest !== 'second' && Date.now() < deadline) latest = await answer();
    expect(latest).toBe('second');
  });

  it('resumes a run the fleet parked when it comes back on another executor', async () => {
    const caller = newCaller();
    const run = await h.start(caller, { query: '#script tool:wait{ms:300};tool:echo{};finish:ok', agent_id: 'worker' });
    await run.watch.until(invoked('wait'));
    await setState(caller, 'worker', 'paused');
    await run.watch.until((e) => e.type === 'pause.requested');
    // The stopping executor hands the parked run back; the next one holds it while the agent is paused.
    await h.restart();
    await setState(caller, 'worker', 'running', { incarnation: 1 });
    expect((await run.watch.terminal(20_000)).type).toBe('task.completed');
    expect(index(run.watch, (e) => e.type === 'pause.resumed')).toBeLessThan(index(run.watch, invoked('echo')));
  });

  it('keeps an agent paused across an executor restart', async () => {
    const caller = newCaller();
    await setState(caller, 'worker', 'paused');
    await h.restart();
    const before = await redelivered();
    const queued = await h.start(caller, { query: '#script finish:after restart', agent_id: 'worker' });
    await untilHeldBack(before);
    // The harness's task repository reads the first executor's store: the run's events say it was not claimed.
    expect(queued.watch.types()).not.toContain('task.started');
    await setState(caller, 'worker', 'running', { incarnation: 1 });
    expect((await queued.watch.terminal(15_000)).type).toBe('task.completed');
  });
});
