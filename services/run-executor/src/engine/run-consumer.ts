import { headerOf, MESSAGE_ID_HEADER, RUNS_SUBJECT_PREFIX } from '@ars/bus';
import type { Bus, Subscription } from '@ars/bus';
import { context, extractTraceContext } from '@ars/telemetry';
import type { Logger } from '@ars/telemetry';
import type { Lease, LeaseManager } from './lease.ts';
import { BucketHints, RACE_RETRY_MS } from './bucket-hints.ts';
import { bucketOf, PRIORITY_BUCKETS } from './priority.ts';
import { withRunSpan } from './run-spans.ts';
import type { Run } from './run-loop.ts';
import type { RunExit } from './run-signals.ts';
import { bucketOfSubject, enqueueRun } from './work-queue.ts';
import type { WorkItem, WorkQueue } from './work-queue.ts';
import { setTimeout as wait } from 'node:timers/promises';

/**
 * The executor's side of the RUNS work queue. It keeps at most
 * `concurrency` runs in flight; whenever a slot is free it pulls, without
 * waiting, from the `high` bucket first, then `normal`, then `low`, each
 * only while it may hold work (see {@link BucketHints}). An idle executor
 * sleeps until a start is published on `ars.runs.>` (a core subscription
 * wakes it) or `idlePollMs` passes (redeliveries publish nothing). Each claimed message is held unacknowledged while its run
 * executes: one shared timer sends the progress heartbeats and refreshes the
 * leases. Then: done → ack; handed back → nak (or, if a prioritize moved the
 * run to another bucket, re-enqueue there and ack); lease held elsewhere →
 * nak with a delay.
 */

/** Options of {@link createRunConsumer}. */
export interface RunConsumerOptions {
  readonly bus: Bus;
  readonly queue: WorkQueue;
  readonly leases: LeaseManager;
  readonly logger: Logger;
  readonly concurrency: number;
  readonly ackWaitMs: number;
  readonly leaseTtlMs: number;
  readonly drainGraceMs: number;
  /** How much longer an unsafe tool call in flight at the end of the grace period may take (see `RunSignals.requestHandback`). */
  readonly drainUnsafeCallMs: number;
  /** Creates the run of a claimed task. */
  /** `holdsLease` answers, before each of the run's writes and events, whether it may still act (see `LeaseManager.holds`). */
  readonly createRun: (taskId: string, deliveryCount: number, holdsLease: () => boolean) => Run;
  /** @default 1000 */
  readonly idlePollMs?: number;
}

export interface RunConsumer {
  start(): void;
  /**
   * SIGTERM drain: stop claiming, let runs finish within the grace period,
   * hand the rest back (an unsafe tool call in flight first finishes, within
   * `drainUnsafeCallMs`).
   */
  stop(): Promise<void>;
  /** Runs in flight (tests and metrics). */
  readonly active: number;
  /** Reports a lease another executor took (from the lease manager). */
  leaseLost(taskId: string): void;
}

interface InFlight {
  readonly item: WorkItem;
  run?: Run;
  done: Promise<void>;
}

/** How long a redelivered run whose lease is held elsewhere waits before it is offered again. */
const HELD_RETRY_MIN_MS = 1_000;
const HELD_RETRY_MAX_MS = 30_000;
/** How long handed-back runs may take to stop after the grace period. */
const HANDBACK_WAIT_MS = 5_000;

/** Waits `ms` without keeping the process alive. */
function delay(ms: number): Promise<void> {
  return wait(ms, undefined, { ref: false });
}

export function createRunConsumer(options: RunConsumerOptions): RunConsumer {
  const { bus, queue, leases, logger, concurrency } = options;
  const idlePollMs = options.idlePollMs ?? 1_000;
  const hints = new BucketHints(idlePollMs);
  const inFlight = new Map<string, InFlight>();
  let claiming = 0;
  let stopping = false;
  let loop: Promise<void> | undefined;
  let wakeSub: Subscription | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  let signal: (() => void) | undefined;
  let pendingSignal = false;

  const notify = (): void => {
    pendingSignal = true;
    const s = signal;
    signal = undefined;
    s?.();
  };
  /** Waits for a notification (new work, a free slot, stop) or `ms`. */
  const nap = (ms: number): Promise<void> => {
    if (pendingSignal) {
      pendingSignal = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        signal = undefined;
        resolve();
      }, ms);
      signal = () => {
        clearTimeout(timer);
        pendingSignal = false;
        resolve();
      };
    });
  };

  async function settle(item: WorkItem, run: Run, lease: Lease, exit: RunExit): Promise<void> {
    if (exit.kind === 'lost') {
      item.nak(HELD_RETRY_MIN_MS);
      return;
    }
    await leases.release(lease);
    if (exit.kind === 'done') item.ack();
    else if (exit.kind === 'retry') item.nak(exit.delayMs);
    else if (run.task !== undefined && bucketOf(run.task.priority) !== item.bucket) {
      // A prioritize moved the run: hand it back on its new bucket.
      try {
        await enqueueRun(bus, run.task, { msgId: `run-${run.taskId}-${Date.now()}` });
        item.ack();
      } catch (error) {
        logger.warn({ err: error, taskId: run.taskId }, 'run not moved to its new priority; handed back where it was');
        item.nak();
      }
    } else item.nak();
  }

  async function execute(item: WorkItem, entry: InFlight, taskId: string): Promise<void> {
    const acquired = await leases.acquire(taskId).catch((error: unknown) => {
      logger.warn({ err: error, taskId }, 'lease unavailable');
      return { ok: false as const, holder: 'unknown', retryInMs: HELD_RETRY_MIN_MS };
    });
    if (!acquired.ok) {
      item.nak(Math.min(Math.max(acquired.retryInMs, HELD_RETRY_MIN_MS), HELD_RETRY_MAX_MS));
      return;
    }
    if (stopping) {
      await leases.release(acquired.lease);
      item.nak();
      return;
    }
    const { lease } = acquired;
    const run = options.createRun(taskId, item.deliveryCount, () => leases.holds(lease));
    entry.run = run;
    const parent = extractTraceContext((key) => item.header(key));
    const exit = await context.with(parent, () => withRunSpan(taskId, item.deliveryCount, () => run.execute()));
    await settle(item, run, acquired.lease, exit).catch((error: unknown) =>
      logger.warn({ err: error, taskId }, 'run message not settled'),
    );
  }

  function launch(item: WorkItem): void {
    const taskId = item.taskId;
    if (taskId === undefined) {
      logger.warn('malformed RUNS message terminated');
      item.term();
      return;
    }
    if (inFlight.has(taskId)) {
      // A second message of a run this executor is executing: offer it again later.
      item.nak(HELD_RETRY_MAX_MS);
      return;
    }
    const entry: InFlight = { item, done: Promise.resolve() };
    inFlight.set(taskId, entry);
    entry.done = execute(item, entry, taskId)
      .catch((error: unknown) => logger.error({ err: error, taskId }, 'run executor failed'))
      .finally(() => {
        inFlight.delete(taskId);
        notify();
      });
  }

  async function claimLoop(): Promise<void> {
    while (!stopping) {
      const free = concurrency - inFlight.size - claiming;
      if (free <= 0) {
        await nap(idlePollMs);
        continue;
      }
      hints.refresh(Date.now());
      let settling = false;
      let remaining = free;
      for (const bucket of PRIORITY_BUCKETS) {
        if (remaining <= 0 || stopping) break;
        const marks = hints.ready(bucket);
        if (marks === undefined) continue;
        const asked = remaining;
        claiming += asked;
        const items = await queue.pull(bucket, asked).catch((error: unknown) => {
          // Tried again at the next round (the connection or JetStream is back by then, or the bus logs why not).
          logger.debug({ err: error, bucket }, 'RUNS pull failed');
          return [] as WorkItem[];
        });
        claiming -= asked;
        hints.took(
          bucket,
          items.map((item) => item.header(MESSAGE_ID_HEADER)),
        );
        if (items.length < asked && hints.clear(bucket, marks)) settling = true;
        for (const item of items) {
          if (stopping) item.nak();
          else launch(item);
        }
        remaining -= items.length;
      }
      if (remaining === free) await nap(settling ? RACE_RETRY_MS : idlePollMs);
    }
  }

  function beat(): void {
    for (const entry of inFlight.values()) entry.item.working();
    leases.refreshAll().catch((error: unknown) => logger.warn({ err: error }, 'lease refresh failed'));
  }

  return {
    get active() {
      return inFlight.size;
    },

    start(): void {
      wakeSub = bus.nc.subscribe(`${RUNS_SUBJECT_PREFIX}.>`, {
        callback: (error, msg) => {
          if (error === null) hints.mark(bucketOfSubject(msg.subject), Date.now(), headerOf(msg, MESSAGE_ID_HEADER));
          notify();
        },
      });
      const period = Math.max(200, Math.floor(Math.min(options.ackWaitMs, options.leaseTtlMs) / 3));
      heartbeat = setInterval(beat, period);
      heartbeat.unref();
      loop = claimLoop().catch((error: unknown) => logger.error({ err: error }, 'run claim loop stopped'));
    },

    leaseLost(taskId): void {
      const run = inFlight.get(taskId)?.run;
      if (run === undefined) return;
      logger.warn({ taskId }, 'run lease lost to another executor; stopping it here');
      run.signals.markLost();
    },

    async stop(): Promise<void> {
      if (stopping) return;
      stopping = true;
      notify();
      wakeSub?.unsubscribe();
      await loop;
      const all = (): Promise<unknown> => Promise.all([...inFlight.values()].map((e) => e.done));
      // Parked runs cannot finish by themselves: they are handed back at once (now or when they park).
      for (const entry of inFlight.values()) entry.run?.signals.requestDrain();
      logger.info({ inFlight: inFlight.size, graceMs: options.drainGraceMs }, 'draining runs');
      await Promise.race([all(), delay(options.drainGraceMs)]);
      for (const entry of inFlight.values()) entry.run?.signals.requestHandback(options.drainUnsafeCallMs);
      // A run finishing an unsafe call stops once its outcome is checkpointed, or once its allowance ends.
      const finishing = [...inFlight.values()].filter((e) => e.run?.signals.unsafeCallInFlight === true).length;
      if (finishing > 0) logger.info({ finishing, allowanceMs: options.drainUnsafeCallMs }, 'finishing unsafe calls');
      await Promise.race([all(), delay(HANDBACK_WAIT_MS + (finishing > 0 ? options.drainUnsafeCallMs : 0))]);
      clearInterval(heartbeat);
      queue.close();
      logger.info({ handedBack: inFlight.size }, 'run consumer stopped');
    },
  };
}
