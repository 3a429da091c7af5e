import { describe, expect, it } from 'vitest';
import { GOVERNANCE_ADMIT_LLM_CALL, refuse, refusalOf, SESSION_ADMIT } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import { callInternal } from '../src/index.ts';
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
