import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ArsClient } from '@ars/client';
import type { EventFrame } from '@ars/contracts';
import { mintToken, startTestSystem, uniqueIdentity } from '@ars/testkit';
import type { TestIdentity, TestSystem } from '@ars/testkit';
import { isTerminal } from './support/event-log.ts';
import { readRawFrames } from './support/raw-sse.ts';
import { barrierRun, startWatched, storedRunEvents } from './support/runs.ts';
import type { WatchedRun } from './support/runs.ts';

/**
 * Durability end to end: the run-executor killed with SIGKILL in the middle
 * of runs and started again, and the gateway restarted under a live
 * subscription. Short ack-wait and lease times let a killed executor's runs
 * be redelivered within seconds instead of the default 30 s.
 */

const FAST_REDELIVERY = { EXECUTOR_ACK_WAIT_MS: '3000', EXECUTOR_LEASE_TTL_MS: '3000' };

const payload = (frame: EventFrame) => frame.payload as Record<string, unknown>;
const count = (frames: readonly EventFrame[], type: string, tool?: string) =>
  frames.filter((f) => f.type === type && (tool === undefined || payload(f)['ToolName'] === tool)).length;

describe('durability end to end', () => {
  let sys: TestSystem;

  async function clientFor(identity: TestIdentity): Promise<ArsClient> {
    return sys.client({ token: await mintToken(sys.baseUrl, identity) });
  }

  beforeAll(async () => {
    sys = await startTestSystem({ env: FAST_REDELIVERY });
  });

  afterAll(async () => {
    await sys?.stop();
  });

  describe('after SIGKILL of the run-executor in the middle of two runs, and a restart', () => {
    let client: ArsClient;
    let resumable: WatchedRun;
    let unsafe: WatchedRun;
    let resumableEvents: EventFrame[];
    let unsafeEvents: EventFrame[];

    beforeAll(async () => {
      client = await clientFor(uniqueIdentity('kill'));
      resumable = await startWatched(client, { query: '#script tool:echo{"n":1};tool:wait{ms:2500};finish:done' });
      unsafe = await startWatched(client, { query: '#script tool:side_effect{"ms":2500};finish:done' });
      await resumable.log.next('tool.invoked', (f) => payload(f)['ToolName'] === 'wait');
      await unsafe.log.next('tool.invoked', (f) => payload(f)['ToolName'] === 'side_effect');

      const exit = await sys.system.killService('run-executor', 'SIGKILL');
      expect(exit.signal).toBe('SIGKILL');
      await sys.system.startServiceProcess('run-executor');

      await resumable.log.terminal({ timeoutMs: 30_000 });
      await unsafe.log.terminal({ timeoutMs: 30_000 });
      await barrierRun(client);
      resumableEvents = await storedRunEvents(client, resumable.taskId);
      unsafeEvents = await storedRunEvents(client, unsafe.taskId);
      await resumable.log.close();
      await unsafe.log.close();
    }, 90_000);

    it('resumes the run from its checkpoint and ends it with exactly one terminal event', () => {
      expect(resumableEvents.filter(isTerminal).map((f) => f.type)).toEqual(['task.completed']);
      expect(resumable.log.frames.filter(isTerminal)).toHaveLength(1);
      expect(count(resumableEvents, 'task.started')).toBe(1);
    });

    it('does not repeat the completed tool call, only the one the crash interrupted', () => {
      expect(count(resumableEvents, 'tool.invoked', 'echo')).toBe(1);
      expect(count(resumableEvents, 'tool.completed', 'echo')).toBe(1);
      expect(count(resumableEvents, 'tool.invoked', 'wait')).toBe(2);
      expect(count(resumableEvents, 'tool.completed', 'wait')).toBe(1);
    });

    it('fails a run whose unsafe call was interrupted with tool_outcome_unknown instead of calling it again', () => {
      const terminals = unsafeEvents.filter(isTerminal);
      expect(terminals.map((f) => [f.type, payload(f)['ErrorCode']])).toEqual([
        ['task.failed', 'tool_outcome_unknown'],
      ]);
      expect(count(unsafeEvents, 'tool.invoked', 'side_effect')).toBe(1);
      expect(count(unsafeEvents, 'tool.completed', 'side_effect')).toBe(0);
      const failed = unsafeEvents.find((f) => f.type === 'tool.failed');
      expect(failed && payload(failed)).toMatchObject({ ToolName: 'side_effect', ErrorClass: 'outcome_unknown' });
    });

    it('reports the runs as ended in tasks.get', async () => {
      const read = (taskId: string) =>
        client.call<{ task: { status: string; error_code?: string } }>('tasks.get', { identity: {}, task_id: taskId });
      expect((await read(resumable.taskId)).task.status).toBe('complete');
      expect((await read(unsafe.taskId)).task).toMatchObject({ status: 'failed', error_code: 'tool_outcome_unknown' });
    });
  });

  it('resumes a subscription with Last-Event-ID across a gateway restart with no gap and no duplicate', async () => {
    const identity = uniqueIdentity('gw');
    const client = await clientFor(identity);
    const run = await startWatched(client, { query: '#script stream:150/40;finish:done' });
    await run.log.until((_frame, all) => all.filter((f) => f.type === 'llm.completion.chunk').length >= 5);

    await sys.system.killService('gateway');
    await run.log.done;
    const before = [...run.log.frames];
    const cursor = before.at(-1)!.sequence;
    await sys.system.startServiceProcess('gateway');

    // The dev issuer's key lives as long as the gateway: the same identity needs a fresh token.
    const token = await mintToken(sys.baseUrl, identity);
    const resumed = await readRawFrames({
      baseUrl: sys.baseUrl,
      token,
      run: run.taskId,
      lastEventId: cursor,
      until: (frames) => frames.some(isTerminal),
      timeoutMs: 30_000,
    });
    expect(resumed[0]!.sequence).toBeGreaterThan(cursor);
    expect(resumed.some((f) => f.type === 'llm.completion.chunk')).toBe(true);

    const freshClient = sys.client({ token });
    await barrierRun(freshClient);
    const stored = await storedRunEvents(freshClient, run.taskId);
    const seen = [...before, ...resumed].map((f) => f.sequence);
    expect(seen).toEqual(stored.map((f) => f.sequence));
    expect(new Set(seen).size).toBe(seen.length);
  }, 60_000);
});
