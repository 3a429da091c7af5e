import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ApprovalPolicy } from '@ars/contracts';
import { createToolRegistry, invokeWithPolicy } from '../../src/tools/registry.ts';
import { ToolError } from '../../src/tools/tool.ts';
import type { ToolDefinition } from '../../src/tools/tool.ts';

const NEVER: ApprovalPolicy = { mode: 'never', on_timeout: 'reject' };
const ALWAYS: ApprovalPolicy = { mode: 'always', on_timeout: 'reject' };

function tool(name: string, extra: Partial<ToolDefinition> = {}): ToolDefinition {
  return {
    name,
    description: name,
    transport: 'builtin',
    sideEffect: 'read_only',
    retry: { maxAttempts: 3, backoffMs: 0 },
    approval: NEVER,
    tags: [],
    args: z.looseObject({}),
    run: async () => 'ok',
    ...extra,
  };
}

const schema = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] };
const mcp = (name: string, approval = NEVER) =>
  tool(name, { transport: 'stdio', source: 'srv', approval, parameters: schema });

describe("a run's tool registry", () => {
  it("adds the agent's MCP tools beside the built-ins, a name a built-in has left out", () => {
    const registry = createToolRegistry([tool('echo')]).forRun([mcp('srv__search'), mcp('echo')], {});
    expect(registry.exposed(undefined).map((t) => [t.name, t.transport])).toEqual([
      ['echo', 'builtin'],
      ['srv__search', 'stdio'],
    ]);
  });

  it("applies approval policies lowest first: the tool's own, the executor's overrides, the tenant's", () => {
    const timed: ApprovalPolicy = { mode: 'always', timeout_seconds: 9, on_timeout: 'approve' };
    const base = createToolRegistry([tool('echo'), tool('wait'), tool('fail')], { echo: ALWAYS, wait: ALWAYS });
    const run = base.forRun([mcp('srv__a', ALWAYS), mcp('srv__b')], { wait: NEVER, srv__a: NEVER, fail: timed });
    expect(['echo', 'wait', 'fail', 'srv__a', 'srv__b'].map((n) => run.get(n)?.approval)).toEqual([
      ALWAYS,
      NEVER,
      timed,
      NEVER,
      NEVER,
    ]);
    // The executor's registry is not changed by a run's.
    expect(base.get('wait')?.approval).toEqual(ALWAYS);
  });

  it('applies the exposure to MCP tools as to built-ins', () => {
    const run = createToolRegistry([tool('echo')]).forRun([mcp('srv__a'), mcp('srv__b')], {});
    expect(run.exposed({ mode: 'allow_list', tools: ['srv__a'] }).map((t) => t.name)).toEqual(['srv__a']);
    expect(run.exposed({ mode: 'deny_list', tools: ['srv__a'] }).map((t) => t.name)).toEqual(['echo', 'srv__b']);
  });

  it("gives a provider an MCP tool's JSON Schema as its server declared it", () => {
    const run = createToolRegistry([]).forRun([mcp('srv__a')], {});
    expect(run.specs([run.get('srv__a')!])).toEqual([{ name: 'srv__a', description: 'srv__a', parameters: schema }]);
  });

  it("gives the runs of an agent one array of its built-ins' specs, and another list its own", () => {
    const base = createToolRegistry([tool('echo'), tool('wait')]);
    const first = base.forRun([], {});
    const later = base.forRun([], { echo: ALWAYS });
    const both = first.specs(first.exposed(undefined));
    expect(later.specs(later.exposed(undefined))).toBe(both);
    expect(both.map((spec) => spec.name)).toEqual(['echo', 'wait']);
    const echoOnly = first.specs(first.exposed({ mode: 'allow_list', tools: ['echo'] }));
    expect(echoOnly.map((spec) => spec.name)).toEqual(['echo']);
    expect(echoOnly[0]).toBe(both[0]);
    // A server's declared schema is its own each time: a list holding one is made afresh, equal.
    const run = base.forRun([mcp('srv__a')], {});
    const withMcp = run.specs(run.exposed(undefined));
    expect(run.specs(run.exposed(undefined))).not.toBe(withMcp);
    expect(run.specs(run.exposed(undefined))).toEqual(withMcp);
  });
});

describe('invokeWithPolicy and cancellation', () => {
  const owner = { tenant: 't', user: 'u', session: 's' };

  it('fails without retry a call the tool host cancelled while the run did not abort', async () => {
    let attempts = 0;
    const cancelledByHost = tool('x', {
      run: async () => {
        attempts++;
        throw new ToolError('cancelled', 'call_cancelled: by the host');
      },
    });
    const outcome = await invokeWithPolicy(
      cancelledByHost,
      {},
      { taskId: 't', callId: 'c', owner, signal: new AbortController().signal },
      () => {},
    );
    expect(outcome).toMatchObject({ ok: false, errorClass: 'cancelled', exhausted: false, attempts: 1 });
    expect(attempts).toBe(1);
  });

  it('throws cancelled once the run aborted, whatever the attempt failed with', async () => {
    const abort = new AbortController();
    const failing = tool('x', {
      run: async () => {
        abort.abort();
        throw new ToolError('transient', 'gone');
      },
    });
    await expect(
      invokeWithPolicy(failing, {}, { taskId: 't', callId: 'c', owner, signal: abort.signal }, () => {}),
    ).rejects.toMatchObject({ errorClass: 'cancelled' });
  });
});
