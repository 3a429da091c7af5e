import { describe, expect, it } from 'vitest';
import type { RpcClient } from '@ars/bus';
import { isServiceError } from '@ars/contracts';
import { connectedOnly } from '../src/discovery/bus-discovery.ts';

const caller = { tenant: 't', user: 'u', session: 's', scopes: [] };

function recordingClient(): RpcClient & { sent: string[] } {
  const sent: string[] = [];
  return {
    sent,
    call: async (_service, method) => {
      sent.push(method);
      return { ok: method };
    },
  };
}

describe("the gateway's RPC client", () => {
  it('sends calls while the bus connection is up', async () => {
    const inner = recordingClient();
    const rpc = connectedOnly(inner, { isConnected: () => true });
    await expect(rpc.call('run-executor', 'start', caller, { query: 'q' })).resolves.toEqual({ ok: 'start' });
    expect(inner.sent).toEqual(['start']);
  });

  it('refuses a call at once with unavailable, sending nothing, while the connection is down; sends again once it is back', async () => {
    const inner = recordingClient();
    let connected = false;
    const rpc = connectedOnly(inner, { isConnected: () => connected });
    const refused = await rpc.call('run-executor', 'start', caller, { query: 'q' }).catch((error: unknown) => error);
    expect(isServiceError(refused) && refused.code).toBe('unavailable');
    expect(isServiceError(refused) && refused.retryable).toBe(true);
    expect(inner.sent).toEqual([]);
    connected = true;
    await rpc.call('run-executor', 'start', caller, { query: 'q' });
    expect(inner.sent).toEqual(['start']);
  });
});
