import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ServiceError } from '@ars/contracts';
import type { ArtifactMetadata, CatalogueTool } from '@ars/contracts';
import { agentEgressPolicy, egressEventId, withArtifactEgress } from '../../src/tools/mcp-egress.ts';
import type { EgressRun } from '../../src/tools/mcp-egress.ts';
import type { ArtifactIo } from '../../src/tools/artifact-io.ts';
import { ToolError } from '../../src/tools/tool.ts';
import type { ToolContext, ToolDefinition } from '../../src/tools/tool.ts';

const OWNER = { tenant: 't1', user: 'u1', session: 's1' };
const QUAD = { ...OWNER, run: 'task-1' };
const CONTENT = Buffer.from('report body');

const catalogueTool: CatalogueTool = {
  name: 'kb__ingest',
  server_id: 'kb',
  server_tool: 'ingest',
  transport: 'stdio',
  description: 'ingest',
  input_schema: { type: 'object' },
  side_effect: 'idempotent',
  approval_policy: { mode: 'never', on_timeout: 'reject' },
  tags: [],
};

/** The MCP definition: records the arguments each attempt sends; fails the attempts listed as transient. */
function mcpDefinition(failAttempts: readonly number[] = []) {
  const sent: Record<string, unknown>[] = [];
  const definition: ToolDefinition = {
    name: 'kb__ingest',
    description: 'ingest',
    transport: 'stdio',
    source: 'kb',
    sideEffect: 'idempotent',
    retry: { maxAttempts: 3, backoffMs: 0 },
    approval: { mode: 'never', on_timeout: 'reject' },
    tags: [],
    args: z.record(z.string(), z.unknown()),
    async run(args, context) {
      sent.push(args);
      if (failAttempts.includes(context.attempt)) throw new ToolError('transient', 'restarting');
      return 'ok';
    },
  };
  return { definition, sent };
}

const io: ArtifactIo = {
  async read(owner, artifactId) {
    if (artifactId !== 'a-1' || owner.user !== OWNER.user) throw new ServiceError('not_found', 'not found');
    const artifact = { artifact_id: 'a-1', mime_type: 'text/plain', size_bytes: CONTENT.length, name: 'r.txt' };
    return { artifact: artifact as ArtifactMetadata, bytes: CONTENT, truncated: false };
  },
  write: () => Promise.reject(new Error('not written here')),
};

function egressRun(policy: EgressRun['policy'] = () => undefined) {
  const emitted: { type: string; payload: Record<string, unknown>; eventId?: string | undefined }[] = [];
  const run: EgressRun = {
    taskId: 'task-1',
    artifacts: io,
    events: { quad: QUAD, emit: (type, payload, eventId) => emitted.push({ type, payload, eventId }) },
    policy,
  };
  return { run, emitted };
}

const context = (callId: string, attempt = 1): ToolContext => ({
  taskId: 'task-1',
  owner: OWNER,
  callId,
  attempt,
  signal: new AbortController().signal,
});

describe('MCP tools with artifact egress', () => {
  it('sends the content and publishes one mcp.artifact_egressed per call, however many attempts', async () => {
    const { definition, sent } = mcpDefinition([1]);
    const { run, emitted } = egressRun();
    const [tool] = withArtifactEgress([definition], [catalogueTool], run);
    await expect(tool?.run({ doc: 'artifact://a-1' }, context('c1', 1))).rejects.toThrow('restarting');
    await expect(tool?.run({ doc: 'artifact://a-1' }, context('c1', 2))).resolves.toBe('ok');
    expect(sent).toEqual([{ doc: 'report body' }, { doc: 'report body' }]);
    expect(emitted).toHaveLength(1);
    expect(emitted[0]).toMatchObject({
      type: 'mcp.artifact_egressed',
      eventId: egressEventId('task-1', 'c1'),
      payload: {
        Identity: QUAD,
        ServerID: 'kb',
        ToolName: 'ingest',
        Records: [expect.objectContaining({ ArtifactID: 'a-1', Name: 'r.txt', PassedAs: 'text', Paths: ['/doc'] })],
      },
    });
    expect(Object.keys(emitted[0]?.payload ?? {}).sort()).toEqual([
      'Identity',
      'OccurredAt',
      'Records',
      'ServerID',
      'ToolName',
    ]);
  });

  it('passes a call without references through untouched and publishes nothing', async () => {
    const { definition, sent } = mcpDefinition();
    const { run, emitted } = egressRun(() => 'never allowed');
    const [tool] = withArtifactEgress([definition], [catalogueTool], run);
    const args = { q: 'artifact:// is a scheme' };
    await tool?.run(args, context('c2'));
    expect(sent[0]).toBe(args);
    expect(emitted).toEqual([]);
  });

  it('refuses the call without sending it when the policy refuses egress to the server', async () => {
    const { definition, sent } = mcpDefinition();
    const { run, emitted } = egressRun(agentEgressPolicy({ sourceDisables: ['kb'] }));
    const [tool] = withArtifactEgress([definition], [catalogueTool], run);
    await expect(tool?.run({ doc: 'artifact://a-1' }, context('c3'))).rejects.toThrow(
      "artifacts may not be passed to MCP server kb: the run's sources disable server kb",
    );
    expect(sent).toEqual([]);
    expect(emitted).toEqual([]);
  });

  it('refuses an unreadable artifact without sending the call or publishing', async () => {
    const { definition, sent } = mcpDefinition();
    const { run, emitted } = egressRun();
    const [tool] = withArtifactEgress([definition], [catalogueTool], run);
    const error = await tool?.run({ doc: 'artifact://a-2' }, context('c4')).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ToolError);
    expect((error as ToolError).errorClass).toBe('permanent');
    expect(sent).toEqual([]);
    expect(emitted).toEqual([]);
  });

  it('leaves definitions the catalogue does not list as they are', () => {
    const { definition } = mcpDefinition();
    const [tool] = withArtifactEgress([definition], [], egressRun().run);
    expect(tool).toBe(definition);
  });
});

describe("the agent's egress policy", () => {
  const target = { serverId: 'kb', tool: 'kb__ingest' };

  it('allows every server and tool when nothing restricts them', () => {
    expect(agentEgressPolicy({ sourceDisables: [] })(target)).toBeUndefined();
    expect(agentEgressPolicy({ sourceDisables: [], toolExposure: { mode: 'all', tools: [] } })(target)).toBeUndefined();
  });

  it('follows the allowed tools of the tool exposure', () => {
    const allow = (tools: string[]) =>
      agentEgressPolicy({ sourceDisables: [], toolExposure: { mode: 'allow_list', tools } });
    const deny = (tools: string[]) =>
      agentEgressPolicy({ sourceDisables: [], toolExposure: { mode: 'deny_list', tools } });
    expect(allow(['kb__ingest'])(target)).toBeUndefined();
    expect(allow(['echo'])(target)).toBe("kb__ingest is not among the agent's allowed tools");
    expect(deny(['kb__ingest'])(target)).toBe("kb__ingest is not among the agent's allowed tools");
    expect(deny(['echo'])(target)).toBeUndefined();
  });

  it('refuses a server the run disables', () => {
    expect(agentEgressPolicy({ sourceDisables: ['kb'] })(target)).toBe("the run's sources disable server kb");
  });
});
