import { describe, expect, it, vi } from 'vitest';
import { GOVERNANCE_ADMIT_LLM_CALL, refuse, refusalOf, ServiceError, SESSION_ADMIT } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import { callInternal, callInternalWithinBudget } from '../src/index.ts';
import type { InternalCaller } from '../src/index.ts';

const CALLER: VerifiedIdentity = { tenant: 't', user: 'u', session: 's', scopes: [] };
const TRIPLE = { tenant: 't', user: 'u', session: 's' };

/** A caller that answers with `answer` and records what it was asked. */
function fakeRpc(answer: () => unknown) {
  const calls: { service: string; method: string; body: unknown; timeoutMs: number | undefined }[] = [];
  const rpc: InternalCaller = {
    async call(service, method, _identity, body, options) {
      calls.push({ service, method, body, timeoutMs: options?.timeoutMs });
      return answer();
    },
  };
  return { rpc, calls };
}

describe('callInternal', () => {
  it("sends the body to the endpoint's owner and returns the parsed reply", async () => {
    const { rpc, calls } = fakeRpc(() => ({ state: 'opened', reuse_ms: 250, added_later: 'ignored' }));
    const reply = await callInternal(rpc, SESSION_ADMIT, CALLER, TRIPLE, { timeoutMs: 1_000 });
    expect(reply).toEqual({ state: 'opened', reuse_ms: 250 });
    expect(calls).toEqual([{ service: 'session', method: '_session.admit', body: TRIPLE, timeoutMs: 1_000 }]);
  });

  it('refuses an invalid request with invalid_request and sends nothing', async () => {
    const { rpc, calls } = fakeRpc(() => ({ state: 'open' }));
    const body = { ...TRIPLE, session: '' };
    await expect(callInternal(rpc, SESSION_ADMIT, CALLER, body)).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('invalid _session.admit request: session:'),
    });
    expect(calls).toEqual([]);
  });

  it('treats a reply that fails its schema as internal, not as a result', async () => {
    const { rpc } = fakeRpc(() => ({ tier: 'standard', max_tokens: 'lots' }));
    const body = { identity: { ...TRIPLE, run: 'r' }, model: 'm', requested_max_tokens: 10 };
    await expect(callInternal(rpc, GOVERNANCE_ADMIT_LLM_CALL, CALLER, body)).rejects.toMatchObject({
      code: 'internal',
      message: expect.stringContaining('malformed _governance.admit_llm_call reply from governance'),
    });
  });

  it("passes the owner's refusal through with its typed reason", async () => {
    const { rpc } = fakeRpc(() => {
      throw refuse(SESSION_ADMIT, 'session_erased', 'erased');
    });
    const error = await callInternal(rpc, SESSION_ADMIT, CALLER, TRIPLE).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'session_erased', retryable: false });
    expect(refusalOf(SESSION_ADMIT, error)).toBe('session_erased');
  });
});

describe('callInternalWithinBudget', () => {
  it('asks an owner with no responders again until it answers, within the budget, telling onWait once', async () => {
    let up = false;
    const { rpc, calls } = fakeRpc(() => {
      if (!up) throw new ServiceError('unavailable', 'no responders');
      return { state: 'open' };
    });
    setTimeout(() => (up = true), 120);
    const onWait = vi.fn();
    await expect(
      callInternalWithinBudget(rpc, SESSION_ADMIT, CALLER, TRIPLE, { timeoutMs: 2_000, onWait }),
    ).resolves.toEqual({ state: 'open' });
    expect(calls.length).toBeGreaterThan(1);
    expect(onWait).toHaveBeenCalledTimes(1);
    // Each ask waits only for what is left of the budget.
    expect(calls.every((c) => (c.timeoutMs ?? 0) <= 2_000)).toBe(true);
  });

  it('throws unavailable once the budget is spent', async () => {
    const { rpc, calls } = fakeRpc(() => {
      throw new ServiceError('unavailable', 'no responders');
    });
    const started = Date.now();
    await expect(
      callInternalWithinBudget(rpc, SESSION_ADMIT, CALLER, TRIPLE, { timeoutMs: 300 }),
    ).rejects.toMatchObject({ code: 'unavailable' });
    expect(calls.length).toBeGreaterThan(1);
    expect(Date.now() - started).toBeLessThan(300);
  });

  it('throws a timeout, a refusal or unimplemented at once', async () => {
    for (const failure of [
      new ServiceError('timeout', 'slow'),
      new ServiceError('unimplemented', 'not here'),
      refuse(SESSION_ADMIT, 'session_erased', 'erased'),
    ]) {
      const { rpc, calls } = fakeRpc(() => {
        throw failure;
      });
      await expect(
        callInternalWithinBudget(rpc, SESSION_ADMIT, CALLER, TRIPLE, { timeoutMs: 1_000 }),
      ).rejects.toBe(failure);
      expect(calls).toHaveLength(1);
    }
  });
});
