import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ArsClient } from '@ars/client';
import type { EventFrame } from '@ars/contracts';
import { mintToken, startMcpEverythingHttp, startTestSystem, uniqueIdentity } from '@ars/testkit';
import type { McpHttpServer, TestSystem } from '@ars/testkit';
import { startWatched } from './support/runs.ts';

/**
 * An agent connected to a real MCP server over streamable HTTP
 * (`@modelcontextprotocol/server-everything`), driven end to end over HTTP
 * and SSE: one run calls an MCP tool, reads a resource through another, and
 * waits for a human approval that a tenant admin set on a third; the call
 * metrics then count those calls.
 */

const payload = (frame: EventFrame) => frame.payload as Record<string, unknown>;

describe('MCP tools in a run', () => {
  let sys: TestSystem;
  let everything: McpHttpServer;

  beforeAll(async () => {
    everything = await startMcpEverythingHttp();
    sys = await startTestSystem();
  });

  afterAll(async () => {
    await sys?.stop();
    await everything?.stop();
  });

  async function client(identity: ReturnType<typeof uniqueIdentity>, scopes: string[] = []): Promise<ArsClient> {
    return sys.client({ token: await mintToken(sys.baseUrl, { ...identity, scopes }) });
  }

  it('calls an MCP tool, reads a resource and waits for an approval, in one run; tools.metrics counts the calls', async () => {
    const identity = uniqueIdentity('mcp');
    const admin = await client(identity, ['admin']);
    const owner = await client(identity);
    await admin.call('agent_config.set_revision', {
      identity: {},
      agent_id: 'mcp-agent',
      config: { mcp_connections: [{ server_id: 'everything', transport: 'streamable_http', url: everything.url }] },
    });
    const listed = await owner.call<{ items: { name: string; transport: string; source: string }[] }>('tools.list', {
      identity: {},
      filter: { source: 'everything' },
      limit: 100,
    });
    expect(listed.items.map((t) => t.name)).toEqual(
      expect.arrayContaining(['everything__echo', 'everything__get-sum', 'everything__get-resource-reference']),
    );
    await admin.call('tools.set_approval_policy', {
      identity: {},
      name: 'everything__get-sum',
      policy: { mode: 'always' },
    });

    const run = await startWatched(owner, {
      agent_id: 'mcp-agent',
      query:
        '#script tool:everything__echo{"message":"hello mcp"};' +
        'tool:everything__get-resource-reference{"resourceType":"Text","resourceId":2};' +
        'tool:everything__get-sum{"a":2,"b":3};finish:done',
    });
    try {
      const requested = await run.log.next('tool.approval_requested');
      expect(payload(requested)).toMatchObject({ Tool: 'everything__get-sum', ArgsSummary: { a: 2, b: 3 } });
      // Before the gate: the echo and the resource read ran over MCP.
      const before = run.log.frames.filter((f) => f.type === 'tool.completed');
      expect(before.map((f) => payload(f)['ToolName'])).toEqual([
        'everything__echo',
        'everything__get-resource-reference',
      ]);
      expect(before.every((f) => payload(f)['Transport'] === 'streamable_http')).toBe(true);

      await owner.call('approve', { identity: { run: run.taskId }, payload: { reason: 'fine' } });
      const terminal = await run.log.terminal();
      expect(terminal.type).toBe('task.completed');
      const completed = run.log.frames.filter((f) => f.type === 'tool.completed').map((f) => payload(f)['ToolName']);
      expect(completed).toEqual(['everything__echo', 'everything__get-resource-reference', 'everything__get-sum']);
      // What the tools returned reached the model: each scripted decision's trace digests the messages new to it.
      const seen = run.log.frames
        .filter((f) => f.type === 'planner.decision')
        .map((f) => String(payload(f)['ReasoningTrace']))
        .join('\n');
      expect(seen).toContain('Echo: hello mcp');
      expect(seen).toMatch(/demo:\/\/resource\/dynamic\/text\/2/);
      expect(seen).toContain('The sum of 2 and 3 is 5');
    } finally {
      await run.log.close();
    }

    // The executor reports calls in batches (about a second): the metrics count the three calls.
    let metrics: { items: { tool: string; invocations: number; approvals_requested: number }[] } = { items: [] };
    for (let i = 0; i < 50; i++) {
      metrics = await owner.call('tools.metrics', { identity: {} });
      if (metrics.items.filter((m) => m.tool.startsWith('everything__')).length === 3) break;
      await sleep(200);
    }
    const byTool = new Map(metrics.items.map((m) => [m.tool, m]));
    expect(byTool.get('everything__echo')?.invocations).toBe(1);
    expect(byTool.get('everything__get-resource-reference')?.invocations).toBe(1);
    expect(byTool.get('everything__get-sum')).toMatchObject({ invocations: 1, approvals_requested: 1 });
  });

  it("gates a built-in tool by the tenant's approval policy in a run of an agent without MCP connections", async () => {
    const identity = uniqueIdentity('policy');
    const admin = await client(identity, ['admin']);
    const owner = await client(identity);
    const set = await admin.call<{ tool: { name: string; approval_policy: { mode: string } } }>(
      'tools.set_approval_policy',
      { identity: {}, name: 'echo', policy: { mode: 'always' } },
    );
    expect(set.tool).toMatchObject({ name: 'echo', approval_policy: { mode: 'always' } });
    const run = await startWatched(owner, { query: '#script tool:echo{"text":"gated"};finish:done' });
    try {
      expect(payload(await run.log.next('tool.approval_requested'))).toMatchObject({ Tool: 'echo' });
      await owner.call('reject', { identity: { run: run.taskId }, payload: { reason: 'no' } });
      expect(payload(await run.log.next('tool.rejected'))).toMatchObject({ Tool: 'echo', Reason: 'no' });
      await run.log.terminal();
      expect(run.log.types()).not.toContain('tool.invoked');
    } finally {
      await run.log.close();
    }
    // Another tenant's runs are not gated by it.
    const other = await client(uniqueIdentity('policy-other'));
    const free = await startWatched(other, { query: '#script tool:echo{"text":"free"};finish:done' });
    try {
      expect((await free.log.terminal()).type).toBe('task.completed');
      expect(free.log.types()).not.toContain('tool.approval_requested');
    } finally {
      await free.log.close();
    }
  });
});
