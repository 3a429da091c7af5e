import { describe, expect, it } from 'vitest';
import { BUILTIN_TOOLS } from '../../src/tools/builtins.ts';
import { createToolRegistry, invokeWithPolicy } from '../../src/tools/registry.ts';
import { ToolError } from '../../src/tools/tool.ts';

const registry = createToolRegistry(BUILTIN_TOOLS, {
  echo: { mode: 'always', timeout_seconds: 5, on_timeout: 'approve' },
});
const owner = { tenant: 't', user: 'u', session: 's' };
const context = (signal = new AbortController().signal) => ({ taskId: 't', callId: 'c', owner, signal });

describe('tool registry', () => {
  it('declares a side-effect class, a retry policy and an approval policy for every built-in', () => {
    expect(BUILTIN_TOOLS.map((t) => [t.name, t.sideEffect, t.approval.mode])).toEqual([
      ['echo', 'read_only', 'never'],
      ['wait', 'read_only', 'never'],
      ['fail', 'idempotent', 'never'],
      ['side_effect', 'unsafe', 'never'],
      ['sensitive_action', 'unsafe', 'always'],
    ]);
  });

  it('applies approval policy overrides', () => {
    expect(registry.get('echo')?.approval).toEqual({ mode: 'always', timeout_seconds: 5, on_timeout: 'approve' });
  });

  it('exposes tools per the agent tool exposure', () => {
    expect(registry.exposed({ mode: 'allow_list', tools: ['echo'] }).map((t) => t.name)).toEqual(['echo']);
    expect(registry.exposed({ mode: 'deny_list', tools: ['echo'] }).map((t) => t.name)).not.toContain('echo');
    expect(registry.exposed(undefined)).toHaveLength(BUILTIN_TOOLS.length);
  });

  it('describes each tool with a JSON Schema of its arguments', () => {
    const [wait] = registry.specs([registry.get('wait')!]);
    expect(wait?.parameters).toMatchObject({ type: 'object', properties: { ms: { type: 'integer' } } });
  });
});

describe('invokeWithPolicy', () => {
  it('retries transient failures up to maxAttempts and reports each failed attempt', async () => {
    const failures: number[] = [];
    const outcome = await invokeWithPolicy(
      registry.get('fail')!,
      { times: 2, class: 'transient', message: 'x' },
      context(),
      (n) => failures.push(n),
    );
    expect(failures).toEqual([1, 2]);
    expect(outcome).toMatchObject({ ok: true, attempts: 3 });
  });

  it('is exhausted when every attempt fails', async () => {
    const outcome = await invokeWithPolicy(
      registry.get('fail')!,
      { times: 5, class: 'transient', message: 'x' },
      context(),
      () => {},
    );
    expect(outcome).toMatchObject({ ok: false, attempts: 3, exhausted: true, errorClass: 'transient', error: 'x' });
  });

  it('does not retry a permanent failure', async () => {
    const outcome = await invokeWithPolicy(
      registry.get('fail')!,
      { times: 5, class: 'permanent', message: 'x' },
      context(),
      () => {},
    );
    expect(outcome).toMatchObject({ ok: false, attempts: 1, exhausted: false });
  });

  it('reports anything else a tool throws as one permanent failure, not retried', async () => {
    const thrower = { ...registry.get('echo')!, retry: { maxAttempts: 3, backoffMs: 0 } };
    for (const thrown of [new TypeError('boom'), 'a string', undefined]) {
      const failures: number[] = [];
      const outcome = await invokeWithPolicy(
        {
          ...thrower,
          run: () => Promise.reject(thrown as Error),
        },
        {},
        context(),
        (n) => failures.push(n),
      );
      expect(failures).toEqual([1]);
      expect(outcome).toMatchObject({ ok: false, attempts: 1, exhausted: false, errorClass: 'permanent' });
    }
  });

  it('throws a cancelled ToolError when the signal aborts a call', async () => {
    const controller = new AbortController();
    const pending = invokeWithPolicy(registry.get('wait')!, { ms: 10_000 }, context(controller.signal), () => {});
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(ToolError);
  });
});
