import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ArsClient } from '@ars/client';
import { mintToken, startTestSystem, uniqueIdentity } from '@ars/testkit';
import type { TestSystem } from '@ars/testkit';
import { startWatched } from './support/runs.ts';

/**
 * Governance of LLM calls over the real gateway: calls of a tier that
 * constrains nothing are admitted by the executor from the posture it
 * keeps, and their costs recorded together; a posture an admin sets is
 * announced before its reply, so it governs the very next run, however the
 * services are laid out (one process, or one per service).
 */

const OPEN_POSTURE = { identity: {}, default_tier: 'default', tiers: [{ name: 'default' }] };

describe.each(['one-process', 'split'] as const)('governance of LLM calls end to end (%s)', (mode) => {
  let sys: TestSystem;
  let admin: ArsClient;

  async function client(prefix: string, scopes: readonly string[] = []): Promise<ArsClient> {
    const token = await mintToken(sys.baseUrl, { ...uniqueIdentity(prefix), scopes });
    return sys.client({ token });
  }

  /** Starts a run and waits for its end; every event of it, in order. */
  async function run(user: ArsClient, query: string) {
    const watched = await startWatched(user, { query });
    try {
      const end = await watched.log.terminal({ timeoutMs: 30_000 });
      return { end, types: watched.log.types(), frames: [...watched.log.frames] };
    } finally {
      await watched.log.close();
    }
  }

  beforeAll(async () => {
    sys = await startTestSystem({ mode });
    admin = await client('gov-admin', ['admin']);
  });

  afterAll(async () => {
    await admin?.call('governance.set_posture', OPEN_POSTURE).catch(() => undefined);
    await sys?.stop();
  });

  it('counts the costs of calls admitted without asking, and a budget set right after governs the next run', async () => {
    const user = await client('gov-user');
    // The built-in posture: its tier constrains nothing, so the executor admits these calls itself.
    const warm = await run(user, '#script cost:0.25;tool:echo{"a":1};finish:warm');
    expect(warm.end.type).toBe('task.completed');
    expect(warm.types.filter((type) => type === 'llm.cost.recorded')).toHaveLength(2);

    await admin.call('governance.set_posture', {
      identity: {},
      default_tier: 'default',
      tiers: [{ name: 'default', budget: { ceiling: 0.75, currency: 'USD', period: 'total' } }],
    });
    try {
      // The warm run's two calls were recorded before its end: they count against the budget set after it.
      const posture = await user.call<{ budgets: { tier: string; spent: number; ceiling: number }[] }>(
        'governance.posture',
        { identity: {} },
      );
      expect(posture.budgets).toEqual([expect.objectContaining({ tier: 'default', spent: 0.5, ceiling: 0.75 })]);

      // Asked by governance from its first call: 0.5 spent admits it, 0.8 refuses the second.
      const refused = await run(user, '#script cost:0.3;tool:echo{};tool:echo{};finish:never');
      expect(refused.end).toMatchObject({ type: 'task.failed', payload: { ErrorCode: 'budget_exceeded' } });
      expect(refused.types.filter((type) => type === 'planner.decision')).toHaveLength(1);
      expect(refused.types).toContain('governance.budget_exceeded');
    } finally {
      await admin.call('governance.set_posture', OPEN_POSTURE);
    }

    // Lifted as fast: the next run's calls are admitted again.
    const lifted = await run(user, '#script cost:0.3;tool:echo{};finish:done');
    expect(lifted.end.type).toBe('task.completed');
  });

  it('refuses a model outside a listed tier from the next run on, without a restart', async () => {
    const user = await client('gov-models');
    expect((await run(user, '#script finish:before')).end.type).toBe('task.completed');
    await admin.call('governance.set_posture', {
      identity: {},
      default_tier: 'default',
      tiers: [{ name: 'default', models: ['some-other-model'] }],
    });
    try {
      const refused = await run(user, '#script finish:never');
      expect(refused.end).toMatchObject({ type: 'task.failed', payload: { ErrorCode: 'model_not_allowed' } });
      expect(refused.types).not.toContain('planner.decision');
    } finally {
      await admin.call('governance.set_posture', OPEN_POSTURE);
    }
    expect((await run(user, '#script finish:after')).end.type).toBe('task.completed');
  });
});
