import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VerifiedIdentity } from '@ars/contracts';
import { startArtifactService } from './artifact-service.ts';
import type { ArtifactProcess } from './artifact-service.ts';
import { faulty, startMcpHarness, waitFor } from './support.ts';
import type { McpHarness } from './support.ts';

/**
 * Large MCP results are stored as artifacts of the caller's session and
 * replaced by resource_link blocks, with the real artifact service (its own
 * process) on the test's nats-server.
 */

interface Reply {
  content: Record<string, unknown>[];
  structured_content?: Record<string, unknown>;
  is_error: boolean;
  bytes_out: number;
  offloaded?: { artifact_id: string; size_bytes: number; mime_type: string }[];
}

const MIB = 1024 * 1024;
const OFFLOADED_KEYS = ['ArtifactID', 'Identity', 'OccurredAt', 'SizeBytes', 'Source'];

describe('offloading large MCP results to artifacts', () => {
  let h: McpHarness;
  let artifacts: ArtifactProcess;

  beforeAll(async () => {
    h = await startMcpHarness({ MCP_OFFLOAD_MAX_BYTES: String(12 * MIB) });
    artifacts = await startArtifactService(h.natsUrl, h.service.rpc);
  });

  afterAll(async () => {
    await artifacts?.stop();
    await h?.stop();
  });

  async function tenantWith(): Promise<VerifiedIdentity> {
    const who = h.caller();
    await h.configure(who, 'a', [faulty('f')]);
    return who;
  }

  async function call(who: VerifiedIdentity, tool: string, args: Record<string, unknown>): Promise<Reply> {
    const outcome = await h.callTool(who, { agent_id: 'a', server_id: 'f', tool, arguments: args, timeout_ms: 30_000 });
    if (!outcome.ok) throw new Error(`${tool} refused: ${JSON.stringify(outcome)}`);
    return outcome.result as Reply;
  }

  const metadata = (who: VerifiedIdentity, id: string) =>
    h.service.rpc.call(
      'artifact',
      'artifacts.get',
      { ...who, scopes: [] },
      {
        identity: {},
        artifact_id: id,
        include_content: false,
      },
    ) as Promise<{ artifact: Record<string, unknown> }>;

  it('stores a 10 MiB text result as an artifact of the run session and answers a resource_link to it', async () => {
    const who = await tenantWith();
    const reply = await call(who, 'big', { bytes: 10 * MIB });
    expect(reply.offloaded).toEqual([
      { artifact_id: expect.any(String), size_bytes: 10 * MIB, mime_type: 'text/plain' },
    ]);
    const id = reply.offloaded?.[0]?.artifact_id ?? '';
    expect(reply.content).toEqual([
      expect.objectContaining({
        type: 'resource_link',
        uri: `artifact://${id}`,
        mimeType: 'text/plain',
        size: 10 * MIB,
      }),
    ]);
    expect(reply.bytes_out).toBeGreaterThan(10 * MIB);
    expect(JSON.stringify(reply).length).toBeLessThan(2_048);
    const { artifact } = await metadata(who, id);
    expect(artifact).toMatchObject({
      size_bytes: 10 * MIB,
      tenant: who.tenant,
      user: who.user,
      session: who.session,
      source: 'mcp:f',
      namespace: 'mcp_offload',
      checksum: `sha256:${createHash('sha256')
        .update('x'.repeat(10 * MIB))
        .digest('hex')}`,
    });
    const [event] = await waitFor(async () => {
      const events = await h.events(who.tenant, 'mcp.resource_offloaded');
      return events.length > 0 ? events : undefined;
    });
    expect(Object.keys(event?.payload as object).sort()).toEqual(OFFLOADED_KEYS);
    expect(event?.payload).toMatchObject({
      Identity: { tenant: who.tenant, user: who.user, session: who.session, run: 'r-1' },
      ArtifactID: id,
      Source: 'f',
      SizeBytes: 10 * MIB,
    });
  });

  it('keeps a result within the threshold inline', async () => {
    const who = await tenantWith();
    const reply = await call(who, 'big', { bytes: 60_000 });
    expect(reply.offloaded).toBeUndefined();
    expect(reply.content[0]).toMatchObject({ type: 'text' });
  });

  it('stores the largest parts first, until what stays is within the threshold', async () => {
    const who = await tenantWith();
    const reply = await call(who, 'mixed', { image_bytes: 300_000, rows_bytes: 100_000 });
    expect(reply.offloaded?.map((p) => [p.mime_type, p.size_bytes])).toEqual([
      ['image/png', 300_000],
      ['application/json', Buffer.byteLength(JSON.stringify({ rows: 'y'.repeat(100_000) }))],
    ]);
    expect(reply.structured_content).toBeUndefined();
    expect(reply.content.map((b) => [b.type, b.mimeType])).toEqual([
      ['text', undefined],
      ['resource_link', 'image/png'],
      ['resource_link', 'application/json'],
    ]);
    // A structure small enough stays where it was.
    const small = await call(who, 'mixed', { image_bytes: 300_000, rows_bytes: 1_000 });
    expect(small.offloaded).toHaveLength(1);
    expect(small.structured_content).toEqual({ rows: 'y'.repeat(1_000) });
  });

  it('names the server and the uri of an embedded resource it stores', async () => {
    const who = await tenantWith();
    const reply = await call(who, 'embedded', { bytes: 100_000 });
    expect(reply.offloaded).toEqual([expect.objectContaining({ mime_type: 'text/csv', size_bytes: 100_000 })]);
    const event = await waitFor(async () => (await h.events(who.tenant, 'mcp.resource_offloaded'))[0]);
    expect(event.payload).toMatchObject({ Source: 'f big://embedded', SizeBytes: 100_000 });
  });

  it('stores a large resource read and answers where it went', async () => {
    const who = await tenantWith();
    const read = await h.call<{ contents: Record<string, unknown>[] }>(
      'mcp.servers.read_resource',
      { server_id: 'f', agent_id: 'a', uri: 'big://doc' },
      { ...who, scopes: [] },
    );
    expect(read.contents).toEqual([
      {
        uri: 'big://doc',
        mime_type: 'text/plain',
        artifact_id: expect.any(String),
        size_bytes: 200_000,
        resource_link: expect.objectContaining({ type: 'resource_link', size: 200_000 }),
      },
    ]);
    const event = await waitFor(async () => (await h.events(who.tenant, 'mcp.resource_offloaded'))[0]);
    expect(event.payload).toMatchObject({
      Identity: { tenant: who.tenant, user: who.user, session: who.session, run: '' },
      ArtifactID: read.contents[0]?.artifact_id,
      Source: 'f big://doc',
    });
  });

  it('refuses a result over MCP_OFFLOAD_MAX_BYTES result_too_large, storing nothing, and keeps serving', async () => {
    const who = await tenantWith();
    const outcome = await h.callTool(who, {
      agent_id: 'a',
      server_id: 'f',
      tool: 'big',
      arguments: { bytes: 13 * MIB },
    });
    expect(outcome).toMatchObject({ ok: false, code: 'payload_too_large' });
    const listed = (await h.service.rpc.call(
      'artifact',
      'artifacts.list',
      { ...who, scopes: [] },
      { identity: {} },
    )) as {
      items: unknown[];
    };
    expect(listed.items).toEqual([]);
    await expect(call(who, 'echo', { text: 'still here' })).resolves.toMatchObject({ is_error: false });
  });
});
