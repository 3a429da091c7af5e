import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { EventFrame, VerifiedIdentity } from '@ars/contracts';
import { storedEvents } from '@ars/service-kit/testing';
import { newCaller } from './harness.ts';
import { startSystemHarness } from './system-harness.ts';
import type { SystemHarness } from './system-harness.ts';

/**
 * A run whose MCP tool answers 10 MiB, with the real agent-registry (the
 * tool host) and artifact services: the result is stored as an artifact of
 * the run's session, the planner sees a resource_link to it and never the
 * bytes, and the call's record counts the offloaded artifact.
 */

/** agent-registry's failing fixture server (its `big` tool answers a text of `bytes` bytes), run by path. */
const FIXTURE = resolve(import.meta.dirname, '../../../agent-registry/test/mcp/fixtures/faulty-server.ts');
const MIB = 1024 * 1024;

const ofType = (events: readonly EventFrame[], type: string) => events.filter((e) => e.type === type);

describe('large MCP results in runs', () => {
  let h: SystemHarness;

  beforeAll(async () => {
    h = await startSystemHarness(['agent-registry', 'artifact'], { MCP_CALL_TIMEOUT_MS: '30000' });
  });

  afterAll(async () => {
    await h?.stop();
  });

  it('feeds the planner a resource_link to the artifact holding a 10 MiB result, and counts it offloaded', async () => {
    const caller: VerifiedIdentity = newCaller();
    await h.call(
      'agent-registry',
      'agent_config.set_revision',
      {
        agent_id: 'big-agent',
        config: {
          mcp_connections: [{ server_id: 'f', transport: 'stdio', command: process.execPath, args: [FIXTURE] }],
        },
      },
      { ...caller, scopes: ['admin'] },
    );
    const { taskId, watch } = await h.run(caller, {
      agent_id: 'big-agent',
      query: `#script tool:f__big{"bytes":${10 * MIB}};finish:done`,
    });
    expect(watch.types()).toContain('task.completed');
    expect(ofType(watch.events, 'tool.completed')[0]?.payload).toMatchObject({ ToolName: 'f__big' });
    const digest = String(ofType(watch.events, 'planner.decision').at(-1)?.payload.ReasoningTrace);
    expect(digest).toMatch(/\[resource_link: artifact:\/\/[^,\]]+, text\/plain, 10485760 bytes\]/);
    expect(digest).not.toContain('x'.repeat(1_000));

    const [offloaded] = await storedEvents(h.bus, { tenant: caller.tenant, type: 'mcp.resource_offloaded' });
    expect(offloaded?.payload).toMatchObject({
      Identity: { tenant: caller.tenant, user: caller.user, session: caller.session, run: taskId },
      Source: 'f',
      SizeBytes: 10 * MIB,
    });
    const artifactId = String(offloaded?.payload.ArtifactID);
    expect(digest).toContain(`artifact://${artifactId}`);
    const { artifact } = (await h.call(
      'artifact',
      'artifacts.get',
      { artifact_id: artifactId, include_content: false },
      caller,
    )) as {
      artifact: Record<string, unknown>;
    };
    expect(artifact).toMatchObject({ size_bytes: 10 * MIB, session: caller.session, mime_type: 'text/plain' });

    // The executor reports calls in batches (about a second).
    await vi.waitFor(
      async () => {
        const stats = (await h.call('agent-registry', 'tools.content_stats', { name: 'f__big' }, caller)) as {
          items: { invocations: number; artifacts_offloaded: number }[];
        };
        expect(stats.items).toEqual([expect.objectContaining({ invocations: 1, artifacts_offloaded: 1 })]);
      },
      { timeout: 10_000, interval: 200 },
    );
  });
});
