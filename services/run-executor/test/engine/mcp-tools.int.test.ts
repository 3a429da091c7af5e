import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MCP_CALL_TOOL, MCP_CANCEL_CALL, refuse, TOOLS_CATALOGUE, TOOLS_RECORD_CALLS } from '@ars/contracts';
import type { CatalogueTool, EventFrame, McpCallToolRequest, ToolCallRecord } from '@ars/contracts';
import { serveService } from '@ars/bus';
import type { ServedService } from '@ars/bus';
import { buildInternalTable, serveInternal } from '@ars/service-kit';
import { createLogger } from '@ars/telemetry';
import { newCaller, startEngineHarness } from './harness.ts';
import type { EngineHarness } from './harness.ts';

/**
 * Runs call MCP tools through agent-registry's tool host endpoints, served
 * here by a fake on the real nats-server: `_tools.catalogue` lists the tools,
 * `_mcp.call_tool` answers (or hangs until `_mcp.cancel_call`), and
 * `_tools.record_calls` keeps what the executor reports.
 */

const SEARCH_SCHEMA = {
  type: 'object',
  properties: { q: { type: 'string', minLength: 1 } },
  required: ['q'],
  additionalProperties: false,
};
const IMAGE = Buffer.alloc(3_000, 1).toString('base64');

function catalogueTool(tool: string, side_effect: CatalogueTool['side_effect'] = 'read_only'): CatalogueTool {
  return {
    name: `kb__${tool}`,
    server_id: 'kb',
    server_tool: tool,
    transport: 'stdio',
    description: `the kb server's ${tool}`,
    input_schema: tool === 'search' ? SEARCH_SCHEMA : { type: 'object' },
    side_effect,
    approval_policy: { mode: 'never', on_timeout: 'reject' },
    tags: ['mcp'],
  };
}

/** The spec's payload keys of the `tool.*` events (event-stream reference). */
const PAYLOAD_KEYS: Record<string, string[]> = {
  'tool.invoked': ['Identity', 'StartedAt', 'ToolName', 'Transport'],
  'tool.completed': ['Attempts', 'DurationMS', 'Identity', 'ToolName', 'Transport'],
  'tool.failed': ['Attempts', 'ErrorClass', 'ErrorMessage', 'Identity', 'ToolName', 'Transport'],
  'tool.invalid_args': ['Identity', 'ToolName', 'Transport', 'ValidationError'],
};

interface FakeHost {
  readonly catalogueCalls: unknown[];
  readonly calls: McpCallToolRequest[];
  readonly cancels: string[];
  /** Reported calls, with the tenant of their batch. */
  readonly records: (ToolCallRecord & { tenant: string })[];
  readonly served: ServedService;
}

async function serveToolHost(h: EngineHarness): Promise<FakeHost> {
  const catalogueCalls: unknown[] = [];
  const calls: McpCallToolRequest[] = [];
  const cancels: string[] = [];
  const records: FakeHost['records'] = [];
  const hanging = new Map<string, () => void>();
  const flaky = new Set<string>();
  const reply = (content: Record<string, unknown>[]) => ({ content, is_error: false, bytes_out: 10, server_ms: 1 });
  const handlers = buildInternalTable('agent-registry', [
    serveInternal(TOOLS_CATALOGUE, async ({ body }) => {
      catalogueCalls.push(body);
      return {
        tools: [catalogueTool('search'), catalogueTool('slow'), catalogueTool('flaky', 'idempotent')],
        approval_policies: {},
        unavailable_servers: [],
      };
    }),
    serveInternal(MCP_CALL_TOOL, async ({ body }) => {
      calls.push(body);
      if (body.tool === 'search') {
        const text = { type: 'text', text: `found ${String(body.arguments.q)}` };
        return reply([text, { type: 'image', data: IMAGE, mimeType: 'image/png' }]);
      }
      if (body.tool === 'flaky') {
        const call = body.call_id.split(':').slice(0, 2).join(':');
        if (!flaky.has(call)) {
          flaky.add(call);
          throw refuse(MCP_CALL_TOOL, 'server_unavailable', 'the kb server is restarting');
        }
        return reply([{ type: 'text', text: 'flaky answered' }]);
      }
      await new Promise<void>((resolve) => hanging.set(body.call_id, resolve));
      throw refuse(MCP_CALL_TOOL, 'call_cancelled', 'cancelled');
    }),
    serveInternal(MCP_CANCEL_CALL, async ({ body }) => {
      cancels.push(body.call_id);
      hanging.get(body.call_id)?.();
      return { cancelled: hanging.delete(body.call_id) };
    }),
    serveInternal(TOOLS_RECORD_CALLS, async ({ body }) => {
      records.push(...body.calls.map((call) => ({ ...call, tenant: body.tenant })));
      return { recorded: body.calls.length };
    }),
  ]);
  const served = await serveService(h.bus, {
    service: 'agent-registry',
    version: '0.0.1',
    instanceId: 'fake-tool-host',
    handlers,
    logger: createLogger({ name: 'fakes', level: 'silent' }),
  });
  return { catalogueCalls, calls, cancels, records, served };
}

const ofType = (events: readonly EventFrame[], type: string) => events.filter((e) => e.type === type);

describe('MCP tools in runs', () => {
  let h: EngineHarness;
  let host: FakeHost;

  beforeAll(async () => {
    h = await startEngineHarness({ MCP_CALL_TIMEOUT_MS: '30000' });
    h.agentConfigs.set('kb-agent', { mcp_connections: [{ server_id: 'kb', transport: 'stdio', command: 'kb-mcp' }] });
    host = await serveToolHost(h);
  });

  afterAll(async () => {
    await host?.served.stop();
    await h?.stop();
  });

  async function run(query: string, caller = newCaller()) {
    const { taskId, watch } = await h.start(caller, { query, agent_id: 'kb-agent' });
    const terminal = await watch.terminal();
    watch.stop();
    return { taskId, terminal, events: watch.events, caller };
  }

  it('calls an MCP tool like a built-in: tool.invoked then tool.completed with the MCP transport, and completes', async () => {
    const { taskId, terminal, events, caller } = await run('#script tool:kb__search{"q":"cats"};finish:done');
    expect(terminal.type).toBe('task.completed');
    for (const type of ['tool.invoked', 'tool.completed']) {
      const [event] = ofType(events, type);
      expect(Object.keys(event?.payload ?? {}).sort()).toEqual(PAYLOAD_KEYS[type]);
      expect(event?.payload).toMatchObject({ ToolName: 'kb__search', Transport: 'stdio' });
    }
    const call = host.calls.find((c) => c.run === taskId);
    expect(call).toMatchObject({
      tenant: caller.tenant,
      agent_id: 'kb-agent',
      server_id: 'kb',
      tool: 'search',
      arguments: { q: 'cats' },
      timeout_ms: 30_000,
    });
    // The planner's next prompt has the result as text: the image summarised, never its base64.
    const digest = String(ofType(events, 'planner.decision').at(-1)?.payload.ReasoningTrace);
    expect(digest).toContain('tool: found cats\n[image: image/png, 3000 bytes]');
    expect(digest).not.toContain(IMAGE.slice(0, 32));
  });

  it('reports arguments its schema refuses as tool.invalid_args, without calling the server', async () => {
    const { taskId, terminal, events } = await run('#script tool:kb__search{"query":"cats"};finish:done');
    expect(terminal.type).toBe('task.completed');
    const [invalid] = ofType(events, 'tool.invalid_args');
    expect(Object.keys(invalid?.payload ?? {}).sort()).toEqual(PAYLOAD_KEYS['tool.invalid_args']);
    expect(invalid?.payload).toMatchObject({
      ToolName: 'kb__search',
      Transport: 'stdio',
      ValidationError: 'must have the member "q"; must not have the member "query"',
    });
    expect(ofType(events, 'tool.invoked')).toHaveLength(0);
    expect(host.calls.some((c) => c.run === taskId)).toBe(false);
  });

  it('retries a server that was not connected, each attempt with its own call_id', async () => {
    const { taskId, terminal, events } = await run('#script tool:kb__flaky{};finish:done');
    expect(terminal.type).toBe('task.completed');
    const [failed] = ofType(events, 'tool.failed');
    expect(Object.keys(failed?.payload ?? {}).sort()).toEqual(PAYLOAD_KEYS['tool.failed']);
    expect(failed?.payload).toMatchObject({ Attempts: 1, ErrorClass: 'transient', Transport: 'stdio' });
    expect(ofType(events, 'tool.completed')[0]?.payload).toMatchObject({ Attempts: 2 });
    const ids = host.calls.filter((c) => c.run === taskId).map((c) => c.call_id);
    expect(new Set(ids).size).toBe(2);
  });

  it('sends _mcp.cancel_call for the call in flight on a hard cancel, and the run ends cancelled', async () => {
    const caller = newCaller();
    const { taskId, watch } = await h.start(caller, {
      query: '#script tool:kb__slow{};finish:late',
      agent_id: 'kb-agent',
    });
    await watch.until((e) => e.type === 'tool.invoked');
    await vi.waitFor(() => expect(host.calls.some((c) => c.run === taskId)).toBe(true));
    await h.control('cancel', taskId, caller, { hard: true });
    const terminal = await watch.terminal();
    watch.stop();
    expect(terminal.type).toBe('task.cancelled');
    const callId = host.calls.find((c) => c.run === taskId)?.call_id;
    await vi.waitFor(() => expect(host.cancels).toContain(callId));
    expect(ofType(watch.events, 'tool.completed')).toHaveLength(0);
  });

  it('never asks the catalogue for an agent without MCP connections', async () => {
    const before = host.catalogueCalls.length;
    const { watch } = await h.start(newCaller(), { query: '#script tool:echo{};finish:done' });
    expect((await watch.terminal()).type).toBe('task.completed');
    watch.stop();
    expect(host.catalogueCalls).toHaveLength(before);
  });

  it("reports every call's outcome to _tools.record_calls, built-in and MCP", async () => {
    const caller = newCaller();
    await run('#script tool:kb__search{"q":"dogs"};tool:kb__search{};tool:echo{"a":1};finish:done', caller);
    const mine = () => host.records.filter((r) => r.tenant === caller.tenant);
    await vi.waitFor(() => expect(mine()).toHaveLength(3), { timeout: 5_000, interval: 50 });
    expect(mine().map((r) => [r.tool, r.source, r.outcome])).toEqual([
      ['kb__search', 'kb', 'completed'],
      ['kb__search', 'kb', 'invalid_args'],
      ['echo', 'builtin', 'completed'],
    ]);
    const completed = mine().find((r) => r.tool === 'kb__search' && r.outcome === 'completed');
    expect(completed).toMatchObject({
      transport: 'stdio',
      source: 'kb',
      attempts: 1,
      approval_requested: false,
      bytes_in: Buffer.byteLength('{"q":"dogs"}'),
      bytes_out: Buffer.byteLength('found dogs\n[image: image/png, 3000 bytes]'),
    });
  });
});
