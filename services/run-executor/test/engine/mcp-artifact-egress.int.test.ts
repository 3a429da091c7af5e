import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventFrame, VerifiedIdentity } from '@ars/contracts';
import { MCP_EVERYTHING_ENTRY } from '@ars/testkit';
import { ARTIFACT_EGRESS_LIMITS } from '../../src/tools/artifact-egress.ts';
import { newCaller } from './harness.ts';
import { startSystemHarness } from './system-harness.ts';
import type { SystemHarness } from './system-harness.ts';

/**
 * A run passes artifacts to a real MCP server (server-everything over stdio,
 * hosted by the real agent-registry; artifacts in the real artifact
 * service): `artifact://<id>` arguments reach the server as the artifact's
 * content, which its `echo` tool sends back, and each call that sent one
 * publishes `mcp.artifact_egressed`. Refused egress is a tool failure the
 * run goes on from.
 */

const ofType = (events: readonly EventFrame[], type: string) => events.filter((e) => e.type === type);
const traces = (events: readonly EventFrame[]) =>
  ofType(events, 'planner.decision').map((e) => String(e.payload.ReasoningTrace));
const echo = (message: string) => `tool:ev__echo${JSON.stringify({ message })}`;
const sha = (bytes: Buffer) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

describe('artifacts passed to MCP tools in runs', () => {
  let h: SystemHarness;

  beforeAll(async () => {
    h = await startSystemHarness(['agent-registry', 'artifact'], { MCP_CALL_TIMEOUT_MS: '30000' });
  });

  afterAll(async () => {
    await h?.stop();
  });

  async function configure(caller: VerifiedIdentity): Promise<void> {
    const connection = {
      server_id: 'ev',
      transport: 'stdio',
      command: process.execPath,
      args: [MCP_EVERYTHING_ENTRY, 'stdio'],
    };
    await h.call(
      'agent-registry',
      'agent_config.set_revision',
      { agent_id: 'egress-agent', config: { mcp_connections: [connection] } },
      { ...caller, scopes: ['admin'] },
    );
  }

  async function upload(caller: VerifiedIdentity, bytes: Buffer, mime: string, name?: string): Promise<string> {
    const answer = (await h.call(
      'artifact',
      'artifacts.put',
      { content_base64: bytes.toString('base64'), mime_type: mime, ...(name === undefined ? {} : { name }) },
      caller,
    )) as { artifact: { artifact_id: string } };
    return answer.artifact.artifact_id;
  }

  it('sends a text artifact as its text and a binary one as base64, with one mcp.artifact_egressed per call', async () => {
    const caller = newCaller();
    await configure(caller);
    const text = Buffer.from('quarterly numbers: 42');
    const binary = Buffer.from([0, 1, 2, 253, 254, 255]);
    const textId = await upload(caller, text, 'text/plain', 'numbers.txt');
    const binaryId = await upload(caller, binary, 'application/octet-stream');
    const { taskId, watch } = await h.run(caller, {
      agent_id: 'egress-agent',
      query: `#script ${echo(`artifact://${textId}`)};${echo(`artifact://${binaryId}`)};finish:done`,
    });
    expect(watch.types()).toContain('task.completed');
    expect(ofType(watch.events, 'tool.completed').map((e) => e.payload.ToolName)).toEqual(['ev__echo', 'ev__echo']);
    // What the server received, as its echo tool returned it.
    expect(traces(watch.events)[1]).toContain('tool: Echo: quarterly numbers: 42');
    expect(traces(watch.events)[2]).toContain(`tool: Echo: ${binary.toString('base64')}`);

    const egressed = ofType(watch.events, 'mcp.artifact_egressed');
    expect(egressed.map((e) => e.payload)).toEqual([
      {
        Identity: { tenant: caller.tenant, user: caller.user, session: caller.session, run: taskId },
        ServerID: 'ev',
        ToolName: 'echo',
        Records: [
          {
            ArtifactID: textId,
            Name: 'numbers.txt',
            MimeType: 'text/plain',
            SizeBytes: text.length,
            SHA256: sha(text),
            PassedAs: 'text',
            Paths: ['/message'],
          },
        ],
        OccurredAt: expect.any(String),
      },
      expect.objectContaining({
        ToolName: 'echo',
        Records: [expect.objectContaining({ ArtifactID: binaryId, Name: '', SHA256: sha(binary), PassedAs: 'base64' })],
      }),
    ]);
    // Published before the call it belongs to completes.
    const types = watch.types();
    expect(types.indexOf('mcp.artifact_egressed')).toBeLessThan(types.indexOf('tool.completed'));
  });

  it("refuses, as tool failures, another user's artifact and one over the cap; nothing is sent or announced", async () => {
    const caller = newCaller();
    await configure(caller);
    const otherId = await upload({ ...caller, user: 'mallory' }, Buffer.from('not yours'), 'text/plain');
    const bigId = await upload(caller, Buffer.alloc(ARTIFACT_EGRESS_LIMITS.maxBytes + 1, 0x61), 'text/plain');
    const { watch } = await h.run(caller, {
      agent_id: 'egress-agent',
      query: `#script ${echo(`artifact://${otherId}`)};${echo(`artifact://${bigId}`)};finish:done`,
    });
    expect(watch.types()).toContain('task.completed');
    const failures = ofType(watch.events, 'tool.failed').map((e) => e.payload);
    expect(failures).toEqual([
      expect.objectContaining({
        ToolName: 'ev__echo',
        ErrorClass: 'permanent',
        ErrorMessage: `artifact ${otherId} cannot be passed to MCP server ev: it does not exist or the run's owner may not read it`,
      }),
      expect.objectContaining({
        ToolName: 'ev__echo',
        ErrorClass: 'permanent',
        ErrorMessage: `artifact ${bigId} is ${ARTIFACT_EGRESS_LIMITS.maxBytes + 1} bytes: the artifacts of one MCP tool call may total at most ${ARTIFACT_EGRESS_LIMITS.maxBytes} bytes (${ARTIFACT_EGRESS_LIMITS.maxBytes} left)`,
      }),
    ]);
    expect(ofType(watch.events, 'tool.completed')).toEqual([]);
    expect(ofType(watch.events, 'mcp.artifact_egressed')).toEqual([]);
    expect(traces(watch.events).join('\n')).not.toContain('not yours');
  });
});
