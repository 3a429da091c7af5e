import { describe, expect, it } from 'vitest';
import { ServiceError } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import type { RpcClient } from '@ars/bus';
import { createLogger } from '@ars/telemetry';
import { createStartDependencies } from '../../src/handlers/dependencies.ts';

const caller: VerifiedIdentity = { tenant: 't', user: 'u', session: 's', scopes: [] };
const logger = createLogger({ name: 'test', level: 'silent' });

/** An RpcClient answering per `service/endpoint` with a result or a thrown error. */
function fakeRpc(answers: Record<string, unknown>): RpcClient & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    async call(service, method) {
      const key = `${service}/${method}`;
      calls.push(key);
      const answer = answers[key];
      if (answer instanceof Error) throw answer;
      if (answer === undefined) throw new ServiceError('unavailable', `service ${service} is not available`);
      return answer;
    },
  };
}

describe('start dependencies', () => {
  it('propagates session_erased', async () => {
    const rpc = fakeRpc({ 'session/_session.admit': new ServiceError('session_erased', 'gone') });
    await expect(createStartDependencies(rpc, logger, 1000).admitSession(caller)).rejects.toMatchObject({
      code: 'session_erased',
    });
  });

  it('never skips the admission: a session service with no responders is asked again within the budget, then 503', async () => {
    const rpc = fakeRpc({ 'session/_health': { status: 'ok' } });
    await expect(createStartDependencies(rpc, logger, 300).admitSession(caller)).rejects.toMatchObject({
      code: 'unavailable',
    });
    expect(rpc.calls.filter((call) => call === 'session/_session.admit').length).toBeGreaterThan(1);
    expect(rpc.calls).not.toContain('session/_health');
  });

  it('admits once the session service answers again within the budget (its subscription back after a failover)', async () => {
    const answers: Record<string, unknown> = {};
    const rpc = fakeRpc(answers);
    setTimeout(() => (answers['session/_session.admit'] = { state: 'open', reuse_ms: 5_000 }), 120);
    await expect(createStartDependencies(rpc, logger, 2_000).admitSession(caller)).resolves.toEqual({ reuseMs: 5_000 });
  });

  it('reads how long the admission may be reused, and nothing from an answer without reuse_ms or with 0', async () => {
    const admitted = (reply: unknown) =>
      createStartDependencies(fakeRpc({ 'session/_session.admit': reply }), logger, 1000).admitSession(caller);
    await expect(admitted({ state: 'open', reuse_ms: 10_000 })).resolves.toEqual({ reuseMs: 10_000 });
    for (const reply of [{ state: 'open' }, { state: 'open', reuse_ms: 0 }]) {
      await expect(admitted(reply)).resolves.toEqual({});
    }
  });

  it('fails the start internal on an admission reply that breaks its contract (never admitted by default)', async () => {
    const admitted = (reply: unknown) =>
      createStartDependencies(fakeRpc({ 'session/_session.admit': reply }), logger, 1000).admitSession(caller);
    for (const reply of [{ state: 'open', reuse_ms: '5' }, { state: 'open', reuse_ms: -1 }, { reuse_ms: 5 }, null]) {
      await expect(admitted(reply)).rejects.toMatchObject({ code: 'internal' });
    }
  });

  it('fails unavailable when the session service is down', async () => {
    const rpc = fakeRpc({});
    await expect(createStartDependencies(rpc, logger, 1000).admitSession(caller)).rejects.toMatchObject({
      code: 'unavailable',
    });
  });

  it('fails on a timeout without probing', async () => {
    const rpc = fakeRpc({ 'session/_session.admit': new ServiceError('timeout', 'slow'), 'session/_health': {} });
    await expect(createStartDependencies(rpc, logger, 1000).admitSession(caller)).rejects.toMatchObject({
      code: 'timeout',
    });
    expect(rpc.calls).toEqual(['session/_session.admit']);
  });

  it('never skips the agent check', async () => {
    const rpc = fakeRpc({ 'agent-registry/_health': {} });
    await expect(createStartDependencies(rpc, logger, 1000).resolveAgent(caller, 'helper')).rejects.toMatchObject({
      code: 'unavailable',
    });
  });

  it('reads the revision of a resolved agent, none for the built-in default', async () => {
    const withRevision = fakeRpc({ 'agent-registry/_agent.resolve': { agent_id: 'a', revision_id: 'r', config: {} } });
    const builtin = fakeRpc({ 'agent-registry/_agent.resolve': { agent_id: 'a', revision_id: null, config: {} } });
    await expect(createStartDependencies(withRevision, logger, 1000).resolveAgent(caller, 'a')).resolves.toEqual({
      revision_id: 'r',
    });
    await expect(createStartDependencies(builtin, logger, 1000).resolveAgent(caller, 'a')).resolves.toEqual({});
  });

  it('maps resolved artifacts, and fails closed when the artifact service does not answer', async () => {
    const resolved = fakeRpc({
      'artifact/_artifact.resolve': {
        artifacts: [{ artifact_id: 'a', mime_type: 'text/plain', size_bytes: 3, namespace: 'n', source: 's' }],
      },
    });
    await expect(createStartDependencies(resolved, logger, 1000).resolveArtifacts(caller, ['a'])).resolves.toEqual([
      { artifact_id: 'a', mime_type: 'text/plain', size_bytes: 3 },
    ]);
    const missing = fakeRpc({ 'artifact/_health': {} });
    await expect(createStartDependencies(missing, logger, 300).resolveArtifacts(caller, ['a'])).rejects.toMatchObject({
      code: 'unavailable',
    });
  });
});
