import { describe, expect, it, vi } from 'vitest';
import { GOVERNANCE_ADMISSION_POSTURE, ServiceError } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import type { InternalCaller } from '@ars/bus';
import { createMemoryLogger } from '@ars/telemetry';
import { createAdmissionPosture, UNANSWERED_RETRY_MS } from '../../src/engine/admission-posture.ts';

/**
 * Which tiers admit every LLM call, as the engine keeps governance's
 * answer: asked once and shared, dropped at a configuration notice (an
 * answer under way at the notice used by no call), kept no longer than its
 * bound, and failing towards asking governance.
 */

const caller: VerifiedIdentity = { tenant: 't', user: 'u', session: 's', scopes: [] };

const POSTURE = {
  default_tier: 'standard',
  tiers: [
    { name: 'standard', open: true },
    { name: 'gold', open: false },
    { name: 'free', open: true },
  ],
};

/** An RPC client answering `_governance.admission_posture` from `answer`; counts the requests. */
function governance(answer: () => Promise<unknown> | unknown = () => POSTURE) {
  const asked: string[] = [];
  const rpc: InternalCaller = {
    call: async (_service, endpoint) => {
      asked.push(endpoint);
      return answer();
    },
  };
  return { rpc, asked };
}

/** A watch the test fires by hand (`watchConfigChanges` in the service). */
function notices() {
  let onChange: (() => void) | undefined;
  let stopped = false;
  return {
    watch: (listener: () => void) => {
      onChange = listener;
      return { stop: () => void (stopped = true) };
    },
    notify: () => onChange?.(),
    get stopped() {
      return stopped;
    },
  };
}

function posture(rpc: InternalCaller, options: { cacheMs?: number; watch?: ReturnType<typeof notices>['watch'] } = {}) {
  const log = createMemoryLogger('admission-posture-test');
  const kept = createAdmissionPosture({
    rpc,
    logger: log.logger,
    cacheMs: options.cacheMs ?? 60_000,
    timeoutMs: 100,
    ...(options.watch === undefined ? {} : { watch: options.watch }),
  });
  return { kept, log };
}

describe('the admission posture an executor keeps', () => {
  it('answers the tier a call falls under when it is open, and nothing for a constraining tier', async () => {
    const { rpc, asked } = governance();
    const { kept } = posture(rpc);
    expect(await kept.openTier(caller, undefined)).toBe('standard');
    expect(await kept.openTier(caller, 'free')).toBe('free');
    expect(await kept.openTier(caller, 'gold')).toBeUndefined();
    // A tier the posture does not have falls under the default tier, as governance resolves it.
    expect(await kept.openTier(caller, 'retired')).toBe('standard');
    expect(asked).toEqual([GOVERNANCE_ADMISSION_POSTURE.name]);
  });

  it('reports nothing open when the default tier constrains and a call names no tier', async () => {
    const { rpc } = governance(() => ({ ...POSTURE, default_tier: 'gold' }));
    const { kept } = posture(rpc);
    expect(await kept.openTier(caller, undefined)).toBeUndefined();
    expect(await kept.openTier(caller, 'unknown')).toBeUndefined();
    expect(await kept.openTier(caller, 'free')).toBe('free');
  });

  it('shares one request among the calls that ask while it is under way', async () => {
    let answer!: (value: unknown) => void;
    const { rpc, asked } = governance(() => new Promise((resolve) => (answer = resolve)));
    const { kept } = posture(rpc);
    const tiers = Promise.all([kept.openTier(caller, undefined), kept.openTier(caller, 'gold')]);
    answer(POSTURE);
    expect(await tiers).toEqual(['standard', undefined]);
    expect(asked).toHaveLength(1);
  });

  it('asks again after a configuration notice, and an answer under way at the notice admits nothing', async () => {
    const changes = notices();
    const answers: ((value: unknown) => void)[] = [];
    const { rpc, asked } = governance(() => new Promise((resolve) => answers.push(resolve)));
    const { kept } = posture(rpc, { watch: changes.watch });
    const before = kept.openTier(caller, undefined);
    changes.notify();
    answers[0]?.(POSTURE);
    // Asked before the posture changed: governance decides this call.
    expect(await before).toBeUndefined();
    const after = kept.openTier(caller, undefined);
    answers[1]?.({ default_tier: 'standard', tiers: [{ name: 'standard', open: false }] });
    expect(await after).toBeUndefined();
    expect(asked).toHaveLength(2);
    changes.notify();
    const third = kept.openTier(caller, undefined);
    answers[2]?.(POSTURE);
    expect(await third).toBe('standard');
    expect(asked).toHaveLength(3);
  });

  it('keeps an answer no longer than cacheMs', async () => {
    vi.useFakeTimers();
    try {
      const { rpc, asked } = governance();
      const { kept } = posture(rpc, { cacheMs: 5_000 });
      await kept.openTier(caller, undefined);
      await vi.advanceTimersByTimeAsync(4_999);
      await kept.openTier(caller, undefined);
      expect(asked).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(1);
      await kept.openTier(caller, undefined);
      expect(asked).toHaveLength(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it('leaves every call to governance while it does not answer, asking again once a second, and logs once', async () => {
    vi.useFakeTimers();
    try {
      let down = true;
      const { rpc, asked } = governance(() => {
        if (down) throw new ServiceError('unavailable', 'no responders');
        return POSTURE;
      });
      const { kept, log } = posture(rpc);
      expect(await kept.openTier(caller, undefined)).toBeUndefined();
      expect(await kept.openTier(caller, undefined)).toBeUndefined();
      expect(asked).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(UNANSWERED_RETRY_MS);
      expect(await kept.openTier(caller, undefined)).toBeUndefined();
      expect(asked).toHaveLength(2);
      down = false;
      await vi.advanceTimersByTimeAsync(UNANSWERED_RETRY_MS);
      expect(await kept.openTier(caller, undefined)).toBe('standard');
      expect(asked).toHaveLength(3);
      expect(log.lines().filter((l) => String(l.msg).startsWith('governance did not answer'))).toHaveLength(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('treats an answer that fails its schema (or a governance without the endpoint) as no answer', async () => {
    for (const answer of [
      () => ({ tiers: 'all' }),
      () => {
        throw new ServiceError('unimplemented', 'unknown endpoint');
      },
    ]) {
      const { rpc } = governance(answer);
      const { kept } = posture(rpc);
      expect(await kept.openTier(caller, undefined)).toBeUndefined();
    }
  });

  it('admits nothing itself with cacheMs 0, asking governance nothing, and stops its watch', async () => {
    const changes = notices();
    const { rpc, asked } = governance();
    const { kept } = posture(rpc, { cacheMs: 0, watch: changes.watch });
    expect(await kept.openTier(caller, undefined)).toBeUndefined();
    expect(asked).toEqual([]);
    const on = posture(rpc, { watch: changes.watch });
    on.kept.stop();
    expect(changes.stopped).toBe(true);
  });
});
