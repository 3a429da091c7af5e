import { randomUUID } from 'node:crypto';
import { PROTOCOL_VERSION } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import { connectBus, ensureInfrastructure, RUNS_SUBJECT_PREFIX, serveService } from '@ars/bus';
import { createLogger } from '@ars/telemetry';
import { newTaskId } from '../src/domain/task-id.ts';
import { createEventPipeline, createJsPipeline } from '../src/engine/event-pipeline.ts';
import type { PipelineEvent } from '../src/engine/event-pipeline.ts';
import { createWorkQueue, enqueueRun } from '../src/engine/work-queue.ts';
import type { WorkItem } from '../src/engine/work-queue.ts';

/**
 * The floor of a run's message flow (bench/runs.bench.ts `--floor`): a
 * process that answers `run-executor.start` and publishes the nineteen
 * events of the benchmark's three-step scripted run, with the payloads a
 * real run publishes, through the executor's own event pipeline (payload
 * validation, redaction, one acknowledged JetStream publish each, in order).
 * Nothing else a run does happens here: no task store, no lease, no
 * checkpoint, no governance, agent-registry, memory or session call.
 *
 * FLOOR_MODE=events: the start publishes `task.spawned`, answers, and the
 * rest follows at once. FLOOR_MODE=queue: the start also puts the run on
 * the RUNS work queue (as a real start does) and the rest is published by
 * whoever claims it, which acknowledges the message after the last event.
 *
 *   NATS_URL=… FLOOR_MODE=events|queue node services/run-executor/bench/floor-executor.ts
 */

const NATS_URL = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';
const MODE = process.env['FLOOR_MODE'] === 'queue' ? 'queue' : 'events';
/** Runs claimed at once in queue mode (the executor's default concurrency is larger than the 16 clients). */
const CONCURRENCY = 64;

const logger = createLogger({ name: 'run-executor', level: 'warn' });
const bus = await connectBus({ servers: NATS_URL, name: 'run-executor' });
await ensureInfrastructure(bus);
const events = createEventPipeline(createJsPipeline(bus), { source: 'run-executor', logger });

interface RunRef {
  readonly taskId: string;
  readonly identity: { readonly tenant: string; readonly user: string; readonly session: string };
}

const QUERY = '#script tool:echo{"a":1};tool:echo{"b":2};finish:done';
const GOAL_LINE = `goal: ${QUERY}`;

/** The events after `task.started`, as a real run of the benchmark's query publishes them (2026-11-26 capture). */
function stepEvents(run: RunRef): [string, Record<string, unknown>][] {
  const at = () => new Date().toISOString();
  const who = { ...run.identity, run: run.taskId };
  const chunk = (delta: string, done: boolean, kind: string) => ({
    Identity: who,
    TaskID: run.taskId,
    RunID: run.taskId,
    Delta: delta,
    Done: done,
    Kind: kind,
    OccurredAt: at(),
  });
  const cost = (input: number, output: number) => ({
    Identity: who,
    Model: 'scripted',
    Cost: { currency: 'USD', total: 0 },
    Usage: { input_tokens: input, output_tokens: output, total_tokens: input + output },
    ContextWindowTokens: 0,
    OccurredAt: at(),
  });
  const decision = (kind: string, tool: string, trace: string) => ({
    Identity: who,
    DecisionKind: kind,
    Tool: tool,
    ReasoningChars: trace.length,
    ReasoningTrace: trace,
    OccurredAt: at(),
  });
  const invoked = { Identity: who, ToolName: 'echo', Transport: 'builtin', StartedAt: at() };
  const completed = { Identity: who, ToolName: 'echo', Transport: 'builtin', Attempts: 1, DurationMS: 0 };
  const first = `${GOAL_LINE}\nuser: ${QUERY}`;
  const second = `${GOAL_LINE}\ntool: {"a":1}`;
  const third = `${GOAL_LINE}\ntool: {"b":2}`;
  return [
    ['llm.completion.chunk', chunk(first, false, 'reasoning')],
    ['llm.completion.chunk', chunk('echo {"a":1}', true, 'tool_call')],
    ['llm.cost.recorded', cost(60, 33)],
    ['planner.decision', decision('ToolCall', 'echo', first)],
    ['tool.invoked', invoked],
    ['tool.completed', completed],
    ['llm.completion.chunk', chunk(second, false, 'reasoning')],
    ['llm.completion.chunk', chunk('echo {"b":2}', true, 'tool_call')],
    ['llm.cost.recorded', cost(92, 22)],
    ['planner.decision', decision('ToolCall', 'echo', second)],
    ['tool.invoked', invoked],
    ['tool.completed', completed],
    ['llm.completion.chunk', chunk(third, false, 'reasoning')],
    ['llm.completion.chunk', chunk('done', true, 'text')],
    ['llm.cost.recorded', cost(113, 20)],
    ['planner.decision', decision('Finish', '', third)],
  ];
}

function publish(run: RunRef, type: string, payload: Record<string, unknown>, eventId?: string): Promise<number> {
  const event: PipelineEvent = {
    type,
    identity: { ...run.identity, run: run.taskId },
    payload,
    ...(eventId === undefined ? {} : { eventId }),
  };
  return events.publish(event);
}

/** Everything after `task.spawned`, each event acknowledged before the next is sent (as a run does). */
async function execute(run: RunRef): Promise<void> {
  await publish(run, 'task.started', { TaskID: run.taskId, PriorState: 'pending' });
  for (const [type, payload] of stepEvents(run)) await publish(run, type, payload);
  await publish(run, 'task.completed', { TaskID: run.taskId, NotifyOnComplete: false }, `${run.taskId}:terminal`);
}

/** Queue mode: who started which run (a real executor reads this from its task store). */
const started = new Map<string, RunRef>();

async function start(identity: VerifiedIdentity): Promise<unknown> {
  const run: RunRef = {
    taskId: newTaskId(),
    identity: { tenant: identity.tenant, user: identity.user, session: identity.session },
  };
  await publish(
    run,
    'task.spawned',
    { TaskID: run.taskId, Kind: 'foreground', ParentTaskID: '', Priority: 0, IdempotencyKey: '' },
    `${run.taskId}:spawned`,
  );
  if (MODE === 'queue') {
    started.set(run.taskId, run);
    await enqueueRun(bus, { task_id: run.taskId, priority: 0 }, { msgId: run.taskId });
  } else {
    void execute(run).catch((error: unknown) => logger.error({ err: error }, 'floor run failed'));
  }
  return { task_id: run.taskId, reused: false, protocol_version: PROTOCOL_VERSION };
}

/** Queue mode: claims runs as RUNS messages arrive, at most {@link CONCURRENCY} at once. */
async function claimRuns(): Promise<void> {
  const queue = createWorkQueue(bus, { ackWaitMs: 30_000 });
  await queue.ensureConsumers();
  let inFlight = 0;
  // A RUNS message reaches this subscription before (or while) JetStream stores it, so a pull right after
  // it may find nothing yet: an empty pull after a wake-up tries again shortly (as the real claim loop does).
  let signalled = false;
  let waiter: (() => void) | undefined;
  const notify = () => {
    signalled = true;
    waiter?.();
  };
  bus.nc.subscribe(`${RUNS_SUBJECT_PREFIX}.>`, { callback: notify });
  const finish = async (item: WorkItem): Promise<void> => {
    const run = started.get(item.taskId ?? '');
    if (run === undefined) return item.term();
    started.delete(run.taskId);
    await execute(run).then(
      () => item.ack(),
      () => item.nak(),
    );
  };
  for (;;) {
    const items = inFlight < CONCURRENCY ? await queue.pull('normal', CONCURRENCY - inFlight) : [];
    for (const item of items) {
      inFlight += 1;
      void finish(item).finally(() => {
        inFlight -= 1;
        notify();
      });
    }
    if (items.length > 0) continue;
    // The poll every 50 ms catches a message whose wake-up came before it was stored and the retry was too soon.
    if (!signalled) {
      await new Promise<void>((resolve) => {
        waiter = resolve;
        setTimeout(resolve, 50);
      });
    }
    waiter = undefined;
    signalled = false;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

await serveService(bus, {
  service: 'run-executor',
  version: '0.0.0-floor',
  instanceId: `run-executor-floor-${randomUUID().slice(0, 8)}`,
  handlers: { start: ({ identity }) => start(identity) },
  logger,
});
if (MODE === 'queue') void claimRuns();
process.stdout.write('FLOOR_EXECUTOR_READY\n');
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => process.exit(0));
