import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNatsServer } from '@ars/bus';
import type { NatsServerHandle } from '@ars/bus';
import type { VerifiedIdentity } from '@ars/contracts';
import { outcomeOf, startInProcess } from '@ars/service-kit/testing';
import type { InProcessService } from '@ars/service-kit/testing';
import { agentRegistryService } from '../../src/service.ts';
import { EVERYTHING_BIN, waitFor } from './support.ts';

/**
 * Two agent-registry replicas on one store and one NATS: `_mcp.cancel_call`
 * reaches whichever replica the queue group picks, and must still stop a
 * call in flight on the other one (the receiving replica broadcasts it).
 */
describe('MCP calls across two agent-registry replicas', () => {
  let dir: string;
  let nats: NatsServerHandle;
  const replicas: InProcessService[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ars-mcp-replicas-'));
    nats = await startNatsServer({ storeDir: join(dir, 'nats') });
    for (let i = 0; i < 2; i++) {
      replicas.push(
        await startInProcess(agentRegistryService, {
          natsUrl: nats.url,
          env: { DATA_DIR: join(dir, 'data'), STORE_ENGINE: 'sqlite' },
          inMemoryStore: false,
        }),
      );
    }
  });

  afterAll(async () => {
    for (const replica of replicas) await replica.stop();
    await nats?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('cancels a long call whichever replica holds it, every time', async () => {
    const who: VerifiedIdentity = { tenant: `t-${randomUUID()}`, user: 'alice', session: 's-1', scopes: ['admin'] };
    const [a] = replicas;
    await a!.call(
      'agent_config.set_revision',
      {
        identity: {},
        agent_id: 'a',
        config: { mcp_connections: [{ server_id: 'everything', transport: 'stdio', command: EVERYTHING_BIN, args: ['stdio'] }] },
      },
      who,
    );
    const internal = (method: string, body: Record<string, unknown>, timeoutMs = 60_000) =>
      outcomeOf(
        a!.rpc.call('agent-registry', method, who, { tenant: who.tenant, user: who.user, session: who.session, ...body }, {
          timeoutMs,
        }),
      );
    // Warm both replicas' connections, so that the timed calls measure the cancel, not a server start.
    for (let i = 0; i < 6; i++) {
      await internal('_mcp.call_tool', {
        agent_id: 'a',
        run: 'r-1',
        server_id: 'everything',
        tool: 'echo',
        arguments: { message: 'warm' },
        call_id: randomUUID(),
        timeout_ms: 20_000,
      });
    }
    // With one cancel sent per call, a replica that only cancelled its own calls would miss about half of them.
    for (let round = 0; round < 6; round++) {
      const callId = randomUUID();
      const started = Date.now();
      const pending = internal('_mcp.call_tool', {
        agent_id: 'a',
        run: 'r-1',
        server_id: 'everything',
        tool: 'trigger-long-running-operation',
        arguments: { duration: 30, steps: 3 },
        call_id: callId,
        timeout_ms: 45_000,
      });
      // Once the call is in flight somewhere: a cancel that arrives first finds nothing on either replica.
      await new Promise((resolve) => setTimeout(resolve, 300));
      await waitFor(async () => (await internal('_mcp.cancel_call', { call_id: callId })).ok);
      expect(await pending).toMatchObject({ ok: false, code: 'conflict' });
      expect(Date.now() - started).toBeLessThan(10_000);
    }
  }, 120_000);
});
