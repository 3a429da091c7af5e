import { describe, expect, it } from 'vitest';
import { ServiceError } from '@ars/contracts';
import type { RpcClient } from '@ars/bus';
import type { ArtifactIo } from '../../src/tools/artifact-io.ts';
import { isTextual } from '../../src/tools/artifact-io.ts';
import { invokeWithPolicy } from '../../src/tools/registry.ts';
import { createServiceTools } from '../../src/tools/service-tools.ts';

const owner = { tenant: 't', user: 'u', session: 's' };
/** A memory item as `_memory.caller_read` and `_memory.caller_write` answer it. */
const item = (key: string, version: number, value: unknown = null) => ({
  key,
  tier: 'user',
  value,
  tenant: 't',
  user: 'u',
  size_bytes: 4,
  version,
  created_at: '2030-01-01T00:00:00Z',
  updated_at: '2030-01-01T00:00:00Z',
});
const context = { taskId: 'task', callId: 'c', owner, signal: new AbortController().signal };

function tools(answer: (endpoint: string, body: unknown) => unknown, io: Partial<ArtifactIo> = {}) {
  const calls: [string, unknown][] = [];
  const rpc = {
    call: async (_service: string, endpoint: string, _identity: unknown, body: unknown) => {
      calls.push([endpoint, body]);
      return answer(endpoint, body);
    },
  } as unknown as RpcClient;
  const artifacts = {
    read: async () => Promise.reject(new Error('unused')),
    write: async () => Promise.reject(new Error('unused')),
    ...io,
  } as ArtifactIo;
  const list = createServiceTools({ rpc, artifacts, timeoutMs: 100, readMaxBytes: 64, writeMaxBytes: 8 });
  return { byName: new Map(list.map((t) => [t.name, t])), calls, list };
}

describe('service tools', () => {
  it('declares memory_read and artifact_read read-only, memory_write idempotent and artifact_write unsafe (never retried)', () => {
    expect(tools(() => ({})).list.map((t) => [t.name, t.sideEffect, t.retry.maxAttempts])).toEqual([
      ['memory_read', 'read_only', 2],
      ['memory_write', 'idempotent', 3],
      ['artifact_read', 'read_only', 2],
      ['artifact_write', 'unsafe', 1],
    ]);
  });

  it("writes the caller's memory as the run's owner", async () => {
    const { byName, calls } = tools(() => ({ item: item('k', 2) }));
    const outcome = await invokeWithPolicy(
      byName.get('memory_write')!,
      { key: 'k', value: [1] },
      context,
      () => undefined,
    );
    expect(outcome).toMatchObject({ ok: true, output: '{"key":"k","version":2,"written":true}' });
    expect(calls).toEqual([['_memory.caller_write', { ...owner, key: 'k', value: [1] }]]);
  });

  it('retries memory while the service is unreachable, and reports a refusal as permanent', async () => {
    let attempts = 0;
    const { byName } = tools(() => {
      attempts++;
      throw new ServiceError(attempts < 2 ? 'unavailable' : 'payload_too_large', 'too big');
    });
    const outcome = await invokeWithPolicy(
      byName.get('memory_write')!,
      { key: 'k', value: 1 },
      context,
      () => undefined,
    );
    expect(outcome).toMatchObject({
      ok: false,
      attempts: 2,
      errorClass: 'permanent',
      error: 'payload_too_large: too big',
    });
  });

  it('refuses content above the write limit without storing anything', async () => {
    let wrote = false;
    const { byName } = tools(() => ({}), {
      write: async () => {
        wrote = true;
        throw new Error('unexpected');
      },
    });
    const outcome = await invokeWithPolicy(
      byName.get('artifact_write')!,
      { content: 'nine bytes' },
      context,
      () => undefined,
    );
    expect(outcome).toMatchObject({ ok: false, errorClass: 'permanent' });
    expect(wrote).toBe(false);
  });

  it('tells text types from binary ones', () => {
    expect(['text/plain; charset=utf-8', 'application/json', 'application/ld+json'].map(isTextual)).toEqual([
      true,
      true,
      true,
    ]);
    expect(['image/png', 'application/octet-stream'].map(isTextual)).toEqual([false, false]);
  });
});
