import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventFrame, VerifiedIdentity } from '@ars/contracts';
import { connectBus, createRpcClient, pingServices, startNatsServer } from '@ars/bus';
import type { Bus, NatsServerHandle, RpcClient, ServedService } from '@ars/bus';
import { startOtlpReceiver } from '@ars/telemetry/testing';
import { waitFor } from '@ars/testkit';
import { executorProcesses } from '../helpers/executor-processes.ts';
import type { ExecutorProcesses } from '../helpers/executor-processes.ts';
import { mostAtOnce, newCaller, serveEngineFakes, serveGovernanceFake, TERMINAL_TYPES, watchRun } from './harness.ts';
import type { GovernanceFake, RunWatch } from './harness.ts';

/**
 * Executors as separate processes (`node services/run-executor/src/main.ts`)
 * sharing one nats-server and one data directory, killed with SIGKILL or
 * stopped with SIGTERM in the middle of a run.
 */

const ofType = (events: readonly EventFrame[], type: string) => events.filter((e) => e.type === type);
const completedTools = (events: readonly EventFrame[]) =>
  ofType(events, 'tool.completed').map((e) => String(e.payload.ToolName));

describe('durability across executor processes', { timeout: 60_000 }, () => {
  let dir: string;
  let nats: NatsServerHandle;
  let bus: Bus;
  let rpc: RpcClient;
  let fakes: ServedService[];
  let governance: GovernanceFake;
  let executors: ExecutorProcesses;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ars-durability-'));
    nats = await startNatsServer({ storeDir: join(dir, 'nats') });
    bus = await connectBus({ servers: nats.url, name: 'durability-test' });
    rpc = createRpcClient(bus, { timeoutMs: 5_000 });
    executors = executorProcesses(rpc, { natsUrl: nats.url, dataDir: join(dir, 'data') });
    fakes = await serveEngineFakes(bus, new Map());
    governance = await serveGovernanceFake(bus);
    fakes.push(governance.served);
  });

  afterEach(async () => {
    await executors.stop();
    await Promise.all(fakes.map((f) => f.stop().catch(() => undefined)));
    await bus.close();
    await nats.stop();
    await rm(dir, { recursive: true, force: true });
  });

  async function startRun(caller: VerifiedIdentity, query: string): Promise<{ taskId: string; watch: RunWatch }> {
    const { task_id: taskId } = (await rpc.call('run-executor', 'start', caller, { identity: {}, query })) as {
      task_id: string;
    };
    return { taskId, watch: await watchRun(bus, caller, taskId) };
  }

  it('resumes a run killed with SIGKILL on another executor, without repeating a completed tool call', async () => {
    const first = await executors.start();
    const caller = newCaller();
    const { watch } = await startRun(
      caller,
      '#script tool:echo{n:1};tool:side_effect{};tool:wait{ms:2000};tool:echo{n:2};finish:done',
    );
    await watch.until((e) => e.type === 'tool.invoked' && e.payload.ToolName === 'wait');
    await executors.crashOver(first);
    const terminal = await watch.terminal(20_000);
    watch.stop();
    expect(terminal.type).toBe('task.completed');
    expect(watch.events.filter((e) => TERMINAL_TYPES.includes(e.type))).toHaveLength(1);
    expect(ofType(watch.events, 'task.started')).toHaveLength(1);
    expect(completedTools(watch.events)).toEqual(['echo', 'side_effect', 'wait', 'echo']);
    expect(ofType(watch.events, 'tool.invoked').filter((e) => e.payload.ToolName === 'side_effect')).toHaveLength(1);
  });

  it("links the run span of a run resumed after a SIGKILL to the killed attempt's", async () => {
    const otlp = await startOtlpReceiver();
    try {
      const tracing = {
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '50',
      };
      const first = await executors.start(tracing);
      const { taskId, watch } = await startRun(newCaller(), '#script tool:echo{n:1};tool:wait{ms:2000};finish:done');
      await watch.until((e) => e.type === 'tool.invoked' && e.payload.ToolName === 'wait');
      // The first step's span is exported (the batch goes every 50 ms) before the kill; the run's never ends there.
      const killedRun = await waitFor(
        () => otlp.spans().find((s) => s.name === 'step' && s.attributes['ars.step'] === 1)?.parentSpanId,
        {
          message: 'the first step exported',
        },
      );
      await executors.crashOver(first, tracing);
      expect((await watch.terminal(20_000)).type).toBe('task.completed');
      watch.stop();
      const resumed = await waitFor(
        () => otlp.spans().find((s) => s.name === 'run' && s.attributes['ars.task.id'] === taskId),
        { message: 'the resumed run span exported' },
      );
      expect(resumed.attributes['ars.run.delivery']).toBe(2);
      expect(resumed.links.map((l) => l.spanId)).toEqual([killedRun]);
    } finally {
      await otlp.close();
    }
  });

  it('records the cost of a step replayed after a SIGKILL as a call of its own: the provider was called twice', async () => {
    const first = await executors.start();
    const caller = newCaller();
    const { taskId, watch } = await startRun(caller, '#script cost:0.5;tool:wait{ms:4000};finish:done');
    // Step 1's cost is sent on its own while its tool call waits (nothing else carries it within a second).
    for (let i = 0; governance.recorded.length === 0; i++) {
      if (i > 100) throw new Error('the first call cost was not recorded');
      await sleep(50);
    }
    await executors.crashOver(first);
    const terminal = await watch.terminal(20_000);
    watch.stop();
    expect(terminal.type).toBe('task.completed');
    // Step 1 twice (before the crash and replayed), then step 2: three provider calls, three records.
    expect(ofType(watch.events, 'llm.cost.recorded')).toHaveLength(3);
    const ids = governance.recorded.map((r) => r.call_id);
    expect(new Set(ids).size).toBe(3);
    expect(ids.every((id) => id.startsWith(`${taskId}:`))).toBe(true);
    expect(governance.recorded.reduce((sum, r) => sum + r.cost_usd, 0)).toBeCloseTo(1.5);
  });

  it('an executor stopped (SIGSTOP) past its lease says and writes nothing more of the run once it goes on (SIGCONT)', async () => {
    const frozen = await executors.start();
    const caller = newCaller();
    const { taskId, watch } = await startRun(
      caller,
      '#script tool:echo{n:1};tool:wait{ms:1500};tool:echo{n:2};finish:done',
    );
    await watch.until((e) => e.type === 'tool.invoked' && e.payload.ToolName === 'wait');
    frozen.child.kill('SIGSTOP');
    await executors.start();
    const terminal = await watch.terminal(20_000);
    expect(terminal.type).toBe('task.completed');
    // Its wait is overdue and its heartbeat not yet told of the loss: without a check of its own it would go on.
    frozen.child.kill('SIGCONT');
    await sleep(2_000);
    watch.stop();
    expect(watch.events.at(-1)).toEqual(terminal);
    expect(watch.events.filter((e) => TERMINAL_TYPES.includes(e.type))).toHaveLength(1);
    expect(completedTools(watch.events)).toEqual(['echo', 'wait', 'echo']);
    expect(frozen.child.exitCode).toBeNull();
    // Nor did it write the run's state back after the run ended: a new executor finds nothing left to do.
    const { task } = (await rpc.call('run-executor', 'tasks.get', caller, { identity: {}, task_id: taskId })) as {
      task: { status: string };
    };
    expect(task.status).toBe('complete');
  });

  it('runs every run once when two live executors pull the same queue', async () => {
    await Promise.all([executors.start({ EXECUTOR_CONCURRENCY: '2' }), executors.start({ EXECUTOR_CONCURRENCY: '2' })]);
    // Either process may have answered both health checks: wait until both serve.
    for (let i = 0; (await pingServices(bus, { name: 'run-executor', timeoutMs: 300 })).length < 2; i++) {
      if (i > 100) throw new Error(`the second executor did not start: ${executors.report()}`);
    }
    const caller = newCaller();
    const runs = await Promise.all(
      Array.from({ length: 12 }, () => startRun(caller, '#script tool:wait{ms:300};tool:side_effect{};finish:done')),
    );
    const spans: { started: number; ended: number }[] = [];
    for (const { watch } of runs) {
      const terminal = await watch.terminal(30_000);
      watch.stop();
      expect(terminal.type).toBe('task.completed');
      expect(watch.events.filter((e) => TERMINAL_TYPES.includes(e.type))).toHaveLength(1);
      const started = ofType(watch.events, 'task.started');
      expect(started).toHaveLength(1);
      expect(ofType(watch.events, 'tool.invoked').filter((e) => e.payload.ToolName === 'side_effect')).toHaveLength(1);
      spans.push({ started: started[0]!.sequence, ended: terminal.sequence });
    }
    // More runs at once than one executor's two slots: both executors took runs.
    const most = mostAtOnce(spans);
    expect(most).toBeGreaterThan(2);
    expect(most).toBeLessThanOrEqual(4);
  });

  it('stores the events a run emitted while nats-server was down once it is back: each once, in the run order', async () => {
    await executors.start();
    const script = '#script tool:wait{ms:1500};tool:echo{n:1};finish:done';
    // The same run undisturbed: the events every run of this script has, in order.
    const reference = await startRun(newCaller(), script);
    await reference.watch.terminal(20_000);
    reference.watch.stop();
    const expected = reference.watch.types();

    const caller = newCaller();
    const { taskId, watch } = await startRun(caller, script);
    await watch.until((e) => e.type === 'tool.invoked' && e.payload.ToolName === 'wait');
    watch.stop();
    // A crash of the server; the wait tool completes while it is down.
    nats.kill();
    await sleep(2_500);
    nats = await nats.restart();
    const after = await watchWhenReady(caller, taskId);
    const terminal = await after.terminal(40_000);
    after.stop();
    expect(terminal.type).toBe('task.completed');
    expect(after.types()).toEqual(expected);
  });

  it('fails a run visibly when an unsafe call was under way at the crash (tool_outcome_unknown)', async () => {
    const first = await executors.start();
    const caller = newCaller();
    const { taskId, watch } = await startRun(caller, '#script tool:side_effect{ms:5000};finish:done');
    await watch.until((e) => e.type === 'tool.invoked' && e.payload.ToolName === 'side_effect');
    await executors.crashOver(first);
    const terminal = await watch.terminal(20_000);
    watch.stop();
    expect(terminal.payload).toEqual({ TaskID: taskId, ErrorCode: 'tool_outcome_unknown' });
    expect(ofType(watch.events, 'tool.failed').at(-1)?.payload).toMatchObject({
      ToolName: 'side_effect',
      ErrorClass: 'outcome_unknown',
    });
    expect(ofType(watch.events, 'tool.invoked')).toHaveLength(1);
    expect(completedTools(watch.events)).toEqual([]);
  });

  it('on SIGTERM lets an in-flight run finish within the grace period, then exits', async () => {
    const executor = await executors.start({ EXECUTOR_DRAIN_GRACE_MS: '10000' });
    const caller = newCaller();
    const { watch } = await startRun(caller, '#script tool:wait{ms:600};finish:done');
    await watch.until((e) => e.type === 'tool.invoked');
    executor.child.kill('SIGTERM');
    const terminal = await watch.terminal(10_000);
    expect(terminal.type).toBe('task.completed');
    expect(await executor.exited).toBe(0);
    watch.stop();
  });

  it('on SIGTERM hands a run that outlives the grace period back to the queue, and another executor finishes it', async () => {
    const executor = await executors.start({ EXECUTOR_DRAIN_GRACE_MS: '200' });
    const caller = newCaller();
    const { watch } = await startRun(caller, '#script tool:echo{n:1};tool:wait{ms:3000};tool:echo{n:2};finish:done');
    await watch.until((e) => e.type === 'tool.invoked' && e.payload.ToolName === 'wait');
    executor.child.kill('SIGTERM');
    expect(await executor.exited).toBe(0);
    expect(watch.events.filter((e) => TERMINAL_TYPES.includes(e.type))).toEqual([]);
    await executors.start();
    const terminal = await watch.terminal(20_000);
    watch.stop();
    expect(terminal.type).toBe('task.completed');
    expect(ofType(watch.events, 'task.started')).toHaveLength(1);
    expect(completedTools(watch.events)).toEqual(['echo', 'wait', 'echo']);
  });

  it('on SIGTERM lets an unsafe call in flight finish, hands the run back after it, and the next executor goes on without repeating it', async () => {
    const executor = await executors.start({ EXECUTOR_DRAIN_GRACE_MS: '200' });
    const caller = newCaller();
    const { watch } = await startRun(caller, '#script tool:side_effect{ms:3000};finish:done');
    await watch.until((e) => e.type === 'tool.invoked' && e.payload.ToolName === 'side_effect');
    executor.child.kill('SIGTERM');
    expect(await executor.exited).toBe(0);
    // The call's outcome was stored before the executor let go of the run, which it did not end.
    await watch.until((e) => e.type === 'tool.completed' && e.payload.ToolName === 'side_effect');
    expect(watch.events.filter((e) => TERMINAL_TYPES.includes(e.type))).toEqual([]);
    await executors.start();
    const terminal = await watch.terminal(20_000);
    watch.stop();
    expect(terminal.type).toBe('task.completed');
    expect(watch.events.filter((e) => TERMINAL_TYPES.includes(e.type))).toHaveLength(1);
    expect(ofType(watch.events, 'tool.invoked')).toHaveLength(1);
    expect(ofType(watch.events, 'task.started')).toHaveLength(1);
    expect(ofType(watch.events, 'tool.failed')).toEqual([]);
    expect(completedTools(watch.events)).toEqual(['side_effect']);
  });

  it('on SIGTERM aborts an unsafe call that outlives EXECUTOR_DRAIN_UNSAFE_CALL_MS; the next executor fails the run tool_outcome_unknown', async () => {
    const executor = await executors.start({ EXECUTOR_DRAIN_GRACE_MS: '200', EXECUTOR_DRAIN_UNSAFE_CALL_MS: '300' });
    const caller = newCaller();
    const { taskId, watch } = await startRun(caller, '#script tool:side_effect{ms:20000};finish:done');
    await watch.until((e) => e.type === 'tool.invoked' && e.payload.ToolName === 'side_effect');
    const stopping = Date.now();
    executor.child.kill('SIGTERM');
    expect(await executor.exited).toBe(0);
    expect(Date.now() - stopping).toBeLessThan(10_000);
    await executors.start();
    const terminal = await watch.terminal(20_000);
    watch.stop();
    expect(terminal.payload).toEqual({ TaskID: taskId, ErrorCode: 'tool_outcome_unknown' });
    expect(ofType(watch.events, 'tool.invoked')).toHaveLength(1);
    expect(completedTools(watch.events)).toEqual([]);
  });

  it('hands back a run that waits for approval on SIGTERM; the next executor keeps the same pause token', async () => {
    const executor = await executors.start({ EXECUTOR_DRAIN_GRACE_MS: '10000' });
    const caller = newCaller();
    const { taskId, watch } = await startRun(caller, '#script tool:sensitive_action{};finish:done');
    const requested = await watch.until((e) => e.type === 'tool.approval_requested');
    const started = Date.now();
    executor.child.kill('SIGTERM');
    expect(await executor.exited).toBe(0);
    // A parked run does not wait for the grace period.
    expect(Date.now() - started).toBeLessThan(8_000);
    await executors.start();
    const listed = await waitForPause(caller);
    expect(listed).toMatchObject({ token: requested.payload.PauseToken, task_id: taskId, kind: 'approval' });
    await rpc.call('run-executor', 'approve', caller, { identity: { run: taskId }, payload: {} });
    const terminal = await watch.terminal(20_000);
    watch.stop();
    expect(terminal.type).toBe('task.completed');
    expect(ofType(watch.events, 'tool.approval_requested')).toHaveLength(1);
    expect(ofType(watch.events, 'tool.approved')[0]?.payload).toMatchObject({
      PauseToken: requested.payload.PauseToken,
    });
    expect(completedTools(watch.events)).toEqual(['sensitive_action']);
  });

  /** A watch on the run from the start of the stream, once JetStream answers again. */
  async function watchWhenReady(caller: VerifiedIdentity, taskId: string): Promise<RunWatch> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await watchRun(bus, caller, taskId);
      } catch (error) {
        if (attempt >= 40) throw error;
        await sleep(250);
      }
    }
  }

  /** The caller's open pause once the new executor has the run live (its inbox answers). */
  async function waitForPause(caller: VerifiedIdentity): Promise<Record<string, unknown>> {
    for (let i = 0; i < 200; i++) {
      const { items } = (await rpc.call('run-executor', 'pause.list', caller, { identity: {} })) as {
        items: Record<string, unknown>[];
      };
      const pause = items[0];
      if (pause !== undefined) {
        const live = await rpc
          .call('run-executor', 'user_message', caller, {
            identity: { run: String(pause.task_id) },
            payload: { message: 'are you there?' },
          })
          .then(
            () => true,
            () => false,
          );
        if (live) return pause;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('no live paused run');
  }
});
