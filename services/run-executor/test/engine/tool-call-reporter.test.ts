import { afterEach, describe, expect, it } from 'vitest';
import { ServiceError } from '@ars/contracts';
import type { ToolCallRecord, ToolsRecordCallsRequest } from '@ars/contracts';
import type { InternalCaller } from '@ars/bus';
import { createLogger } from '@ars/telemetry';
import { callRecord, createToolCallReporter } from '../../src/engine/tool-call-reporter.ts';
import type { ToolCallReporter } from '../../src/engine/tool-call-reporter.ts';

const logger = createLogger({ name: 'reporter-test', level: 'silent' });
const owner = (tenant: string) => ({ tenant, user: 'u', session: 's' });

function record(tool = 'echo'): ToolCallRecord {
  return callRecord(
    { name: tool, transport: 'builtin' },
    { outcome: 'completed', approvalRequested: false, attempts: 1, durationMs: 3.4, args: { a: 'é' }, output: 'ok' },
  );
}

/** An RPC client that keeps every batch and answers with `fail` while it is set. */
function fakeRpc() {
  const batches: ToolsRecordCallsRequest[] = [];
  const state = { fail: undefined as ServiceError | undefined, calls: 0 };
  const rpc: InternalCaller = {
    call: async (_service, _method, _identity, body) => {
      state.calls++;
      if (state.fail !== undefined) throw state.fail;
      const request = body as ToolsRecordCallsRequest;
      batches.push(request);
      return { recorded: request.calls.length };
    },
  };
  return { rpc, batches, state };
}

describe('tool call reporter', () => {
  let reporter: ToolCallReporter | undefined;
  afterEach(async () => {
    await reporter?.stop();
  });

  it('builds a record with bytes in as the JSON of the arguments and bytes out as the output, in UTF-8 bytes', () => {
    expect(record()).toMatchObject({ source: 'builtin', bytes_in: 10, bytes_out: 2, duration_ms: 3, attempts: 1 });
  });

  it('sends queued records in batches of one tenant, at most batchMax each, on flush', async () => {
    const { rpc, batches } = fakeRpc();
    reporter = createToolCallReporter({ rpc, logger, timeoutMs: 100, flushMs: 60_000, batchMax: 3 });
    for (let i = 0; i < 2; i++) reporter.record(owner('a'), record());
    reporter.record(owner('b'), record('other'));
    await reporter.flush();
    expect(batches.map((b) => [b.tenant, b.calls.length])).toEqual([
      ['a', 2],
      ['b', 1],
    ]);
    expect(reporter.queued).toBe(0);
  });

  it('sends as soon as batchMax records are queued, without waiting for the period', async () => {
    const { rpc, batches } = fakeRpc();
    reporter = createToolCallReporter({ rpc, logger, timeoutMs: 100, flushMs: 60_000, batchMax: 2 });
    reporter.record(owner('a'), record());
    expect(batches).toHaveLength(0);
    reporter.record(owner('a'), record());
    await reporter.flush();
    expect(batches.map((b) => b.calls.length)).toEqual([2]);
  });

  it('keeps records while agent-registry does not answer and sends them once it does', async () => {
    const { rpc, batches, state } = fakeRpc();
    state.fail = new ServiceError('unavailable', 'no responders');
    reporter = createToolCallReporter({ rpc, logger, timeoutMs: 100, flushMs: 60_000 });
    reporter.record(owner('a'), record());
    await reporter.flush();
    expect(reporter.queued).toBe(1);
    state.fail = undefined;
    await reporter.flush();
    expect(batches).toHaveLength(1);
    expect(reporter.queued).toBe(0);
  });

  it('drops the oldest records past queueMax and counts them', async () => {
    const { rpc, batches, state } = fakeRpc();
    state.fail = new ServiceError('timeout', 'slow');
    reporter = createToolCallReporter({ rpc, logger, timeoutMs: 100, flushMs: 60_000, batchMax: 100, queueMax: 3 });
    for (const tool of ['t1', 't2', 't3', 't4', 't5']) reporter.record(owner('a'), record(tool));
    expect([reporter.queued, reporter.dropped]).toEqual([3, 2]);
    state.fail = undefined;
    await reporter.flush();
    expect(batches[0]?.calls.map((c) => c.tool)).toEqual(['t3', 't4', 't5']);
  });

  it('stops at the first batch agent-registry does not answer, keeping the rest in order', async () => {
    const { rpc, batches, state } = fakeRpc();
    state.fail = new ServiceError('unavailable', 'no responders');
    reporter = createToolCallReporter({ rpc, logger, timeoutMs: 100, flushMs: 60_000, batchMax: 100 });
    for (const tenant of ['a', 'b', 'c']) reporter.record(owner(tenant), record());
    await reporter.flush();
    expect(state.calls).toBe(1);
    state.fail = undefined;
    await reporter.flush();
    expect(batches.map((b) => b.tenant)).toEqual(['a', 'b', 'c']);
  });

  it('drops a batch agent-registry refuses, and a malformed record alone', async () => {
    const { rpc, state } = fakeRpc();
    state.fail = new ServiceError('unimplemented', 'no such endpoint');
    reporter = createToolCallReporter({ rpc, logger, timeoutMs: 100, flushMs: 60_000 });
    reporter.record(owner('a'), record());
    reporter.record(owner('a'), { ...record(), attempts: -1 });
    await reporter.flush();
    expect([reporter.queued, reporter.dropped]).toEqual([0, 2]);
  });

  it('sends a batch again with the same batch_id after agent-registry did not answer, and new records apart', async () => {
    const { rpc, batches, state } = fakeRpc();
    const sent: ToolsRecordCallsRequest[] = [];
    const seeing: InternalCaller = {
      call: async (service, method, identity, body, options) => {
        sent.push(body as ToolsRecordCallsRequest);
        return rpc.call(service, method, identity, body, options);
      },
    };
    state.fail = new ServiceError('timeout', 'answer lost');
    reporter = createToolCallReporter({ rpc: seeing, logger, timeoutMs: 100, flushMs: 60_000, batchMax: 100 });
    reporter.record(owner('a'), record('t1'));
    await reporter.flush();
    state.fail = undefined;
    reporter.record(owner('a'), record('t2'));
    await reporter.flush();
    expect(sent.map((b) => b.calls.map((c) => c.tool))).toEqual([['t1'], ['t1'], ['t2']]);
    const [first, retry, fresh] = sent.map((b) => b.batch_id);
    expect(first).toEqual(expect.any(String));
    expect(retry).toBe(first);
    expect(fresh).not.toBe(first);
    expect(batches).toHaveLength(2);
  });

  it('keeps the batch_id of a kept batch trimmed by the bound', async () => {
    const { rpc, batches, state } = fakeRpc();
    state.fail = new ServiceError('unavailable', 'no responders');
    reporter = createToolCallReporter({ rpc, logger, timeoutMs: 100, flushMs: 60_000, batchMax: 100, queueMax: 3 });
    for (const tool of ['t1', 't2', 't3']) reporter.record(owner('a'), record(tool));
    await reporter.flush();
    reporter.record(owner('a'), record('t4'));
    expect([reporter.queued, reporter.dropped]).toEqual([3, 1]);
    state.fail = undefined;
    await reporter.flush();
    expect(batches.map((b) => b.calls.map((c) => c.tool))).toEqual([['t2', 't3'], ['t4']]);
    expect(new Set(batches.map((b) => b.batch_id)).size).toBe(2);
  });

  it('reports the result parts the MCP host offloaded as artifacts_offloaded', () => {
    const offloaded = callRecord(
      { name: 'kb__big', transport: 'stdio', source: 'kb' },
      { outcome: 'completed', approvalRequested: false, attempts: 1, durationMs: 1, artifactsOffloaded: 2 },
    );
    expect(offloaded).toMatchObject({ artifacts_offloaded: 2, source: 'kb' });
    expect(record().artifacts_offloaded).toBe(0);
  });

  it('never throws or waits when recording, even when the RPC client throws synchronously', async () => {
    const rpc: InternalCaller = {
      call: () => {
        throw new Error('broken client');
      },
    };
    reporter = createToolCallReporter({ rpc, logger, timeoutMs: 100, flushMs: 60_000, batchMax: 1 });
    expect(() => reporter?.record(owner('a'), record())).not.toThrow();
    await reporter.flush();
    expect(reporter.dropped).toBe(1);
  });
});
