import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { ServiceError } from '@ars/contracts';
import {
  AckPolicy,
  DeliverPolicy,
  headerOf,
  outgoingHeaders,
  isConnectionUp,
  publishToStream,
  RUNS_STREAM,
  runsSubject,
  utf8,
} from '@ars/bus';
import { injectTraceContext } from '@ars/telemetry';
import type { Bus, Msg, Subscription } from '@ars/bus';
import { CONSUMER_PREFIX, PRIORITY_BUCKETS, bucketOf, consumerName } from './priority.ts';
import type { PriorityBucket } from './priority.ts';

/**
 * The RUNS work queue as the executors see it: one durable pull consumer per
 * priority bucket, pulled with `no_wait` requests so that an executor takes
 * exactly as many runs as it has free slots and always looks at a higher
 * bucket first. The pull and acknowledgement wire protocol of JetStream is
 * spoken directly on the core connection because the client library's
 * simplified consumers cannot pull without waiting (their minimum expiry is
 * one second, which would stall a lower bucket behind an empty higher one).
 */

/** The body of a RUNS message: the task to run. Everything else is read from the store. */
export const RunMessage = z.looseObject({ task_id: z.string().min(1) });
export type RunMessage = z.infer<typeof RunMessage>;

/** One claimed RUNS message, held unacknowledged while its run executes. */
export interface WorkItem {
  readonly taskId: string | undefined;
  readonly bucket: PriorityBucket;
  /** 1 on the first delivery. */
  readonly deliveryCount: number;
  /** A header of the message (`traceparent` of the start that queued it). */
  header(name: string): string | undefined;
  /** Success: the message leaves the queue. */
  ack(): void;
  /** Hands the run back; redelivered after `delayMs` (at once when 0). */
  nak(delayMs?: number): void;
  /** Progress heartbeat: restarts the ack-wait clock. */
  working(): void;
  /** Poison: never redelivered. */
  term(): void;
}

/** Options of {@link createWorkQueue}. */
export interface WorkQueueOptions {
  /** Ack wait of the consumers, in ms; the holder heartbeats well within it. */
  readonly ackWaitMs: number;
  /** Longest wait for a pull's answer before giving up on it, in ms. @default 5000 */
  readonly pullTimeoutMs?: number;
}

export interface WorkQueue {
  /** Creates or updates the three bucket consumers (idempotent). */
  ensureConsumers(): Promise<void>;
  /** Takes up to `max` waiting runs of `bucket` without waiting for more. */
  pull(bucket: PriorityBucket, max: number): Promise<WorkItem[]>;
  /** Runs queued and not yet delivered to any executor, over every bucket (the consumers' `num_pending`). */
  undelivered(): Promise<number>;
  /** Stops routing pull answers; late messages are handed back at once. */
  close(): void;
}

const API_PREFIX = '$JS.API';
const decoder = new TextDecoder();

/**
 * Enqueues a run on its priority bucket; `msgId` deduplicates a retried
 * enqueue. A refusal or a missing acknowledgement is ServiceError
 * `unavailable` (retryable: the start can be repeated with its key).
 */
export async function enqueueRun(
  bus: Bus,
  run: { readonly task_id: string; readonly priority: number },
  options: { readonly msgId?: string } = {},
): Promise<void> {
  const body: RunMessage = { task_id: run.task_id };
  const h = outgoingHeaders();
  // The run's events then join the trace of the request that started it.
  injectTraceContext((key, value) => h.set(key, value));
  try {
    await publishToStream(bus.nc, runsSubject(bucketOf(run.priority)), utf8(JSON.stringify(body)), {
      msgId: options.msgId ?? `run-${run.task_id}`,
      headers: h,
    });
  } catch (error) {
    throw new ServiceError('unavailable', 'the run queue did not take the run; retry', {
      cause: error,
      retryable: true,
    });
  }
}

/** Delivery count of a message from its ack subject (`$JS.ACK.<stream>.<consumer>.<delivered>.…`, v1 or v2 layout). */
function deliveryCountOf(reply: string): number {
  const tokens = reply.split('.');
  const offset = tokens.length >= 11 ? 4 : 2;
  const count = Number(tokens[offset + 2]);
  return Number.isInteger(count) && count > 0 ? count : 1;
}

function taskIdOf(data: Uint8Array): string | undefined {
  try {
    const parsed = RunMessage.safeParse(JSON.parse(decoder.decode(data)));
    return parsed.success ? parsed.data.task_id : undefined;
  } catch {
    // Not JSON: a malformed message, terminated by the consumer like one of the wrong shape.
    return undefined;
  }
}

/** The priority bucket of a RUNS subject (`ars.runs.<bucket>`); `normal` for anything else. */
export function bucketOfSubject(subject: string): PriorityBucket {
  const bucket = subject.slice(subject.lastIndexOf('.') + 1);
  return (PRIORITY_BUCKETS as readonly string[]).includes(bucket) ? (bucket as PriorityBucket) : 'normal';
}

function toWorkItem(bus: Bus, msg: Msg): WorkItem {
  const reply = msg.reply ?? '';
  let settled = false;
  const send = (body: string, final: boolean): void => {
    if (settled || reply === '' || bus.nc.isClosed()) return;
    if (final) settled = true;
    bus.nc.publish(reply, utf8(body));
  };
  return {
    taskId: taskIdOf(msg.data),
    bucket: bucketOfSubject(msg.subject),
    deliveryCount: deliveryCountOf(reply),
    header: (name) => headerOf(msg, name) || undefined,
    ack: () => send('+ACK', true),
    nak: (delayMs = 0) =>
      send(delayMs > 0 ? `-NAK ${JSON.stringify({ delay: Math.round(delayMs) * 1_000_000 })}` : '-NAK', true),
    working: () => send('+WPI', false),
    term: () => send('+TERM', true),
  };
}

interface PendingPull {
  readonly token: string;
  readonly max: number;
  readonly items: WorkItem[];
  readonly done: (items: WorkItem[]) => void;
  readonly timer: NodeJS.Timeout;
}

/** Creates the executor side of the RUNS queue on `bus`. */
export function createWorkQueue(bus: Bus, options: WorkQueueOptions): WorkQueue {
  const prefix = `_INBOX.${randomUUID().replaceAll('-', '')}`;
  // One pull at a time: delivered messages keep their own subject, so only
  // the status that ends a pull names its inbox; every message in between
  // belongs to the pull under way.
  let current: PendingPull | undefined;
  let chain: Promise<unknown> = Promise.resolve();
  let sub: Subscription | undefined;

  const finish = (pull: PendingPull): void => {
    if (current !== pull) return;
    current = undefined;
    clearTimeout(pull.timer);
    pull.done(pull.items);
  };

  const onMessage = (msg: Msg): void => {
    const code = msg.headers?.code ?? 0;
    if (code !== 0 && msg.data.length === 0) {
      // 404 no messages, 408 request done, 409 consumer gone or limits: that pull is over.
      const token = msg.subject.slice(prefix.length + 1);
      if (current?.token === token) finish(current);
      return;
    }
    const pull = current;
    if (pull === undefined) {
      // A late answer to a pull we gave up on: hand it straight back.
      toWorkItem(bus, msg).nak();
      return;
    }
    pull.items.push(toWorkItem(bus, msg));
    if (pull.items.length >= pull.max) finish(pull);
  };

  const subscription = (): Subscription => {
    if (sub === undefined) {
      sub = bus.nc.subscribe(`${prefix}.*`, {
        callback: (error, msg) => {
          if (error === null) onMessage(msg);
        },
      });
      // The status iterator ends with the connection; nothing is left to end then.
      void endPullsOnDisconnect().catch(() => undefined);
    }
    return sub;
  };

  /** A pull under way when the connection drops is never answered: it ends there, not at its timeout. */
  const endPullsOnDisconnect = async (): Promise<void> => {
    // Ends at the first status change after the queue is closed.
    for await (const status of bus.nc.status()) {
      if (sub === undefined) return;
      if (status.type === 'disconnect' && current !== undefined) finish(current);
    }
  };

  const pullOnce = (bucket: PriorityBucket, max: number): Promise<WorkItem[]> => {
    // Sent while the connection is down, the pull would be dropped and the claim loop held until its timeout.
    if (!isConnectionUp(bus.nc)) return Promise.resolve([]);
    subscription();
    const token = randomUUID().replaceAll('-', '');
    return new Promise<WorkItem[]>((resolve) => {
      const pull: PendingPull = {
        token,
        max,
        items: [],
        done: resolve,
        timer: setTimeout(() => finish(pull), options.pullTimeoutMs ?? 5_000),
      };
      current = pull;
      bus.nc.publish(
        `${API_PREFIX}.CONSUMER.MSG.NEXT.${RUNS_STREAM}.${consumerName(bucket)}`,
        utf8(JSON.stringify({ batch: max, no_wait: true })),
        { reply: `${prefix}.${token}` },
      );
    });
  };

  return {
    async ensureConsumers(): Promise<void> {
      const ackWait = options.ackWaitMs * 1_000_000;
      for (const bucket of PRIORITY_BUCKETS) {
        const config = {
          durable_name: consumerName(bucket),
          description: `${CONSUMER_PREFIX}: runs of priority bucket ${bucket}`,
          filter_subject: runsSubject(bucket),
          ack_policy: AckPolicy.Explicit,
          deliver_policy: DeliverPolicy.All,
          ack_wait: ackWait,
          max_deliver: -1,
          max_ack_pending: -1,
        };
        // Unreadable (missing, or JetStream failing): adding it tells which, and a failure there is thrown.
        const info = await bus.jsm.consumers.info(RUNS_STREAM, config.durable_name).catch(() => undefined);
        if (info === undefined) {
          await bus.jsm.consumers.add(RUNS_STREAM, config).catch(async (error: unknown) => {
            // Another executor created it first; reconcile once.
            const again = await bus.jsm.consumers.info(RUNS_STREAM, config.durable_name).catch(() => undefined);
            if (again === undefined) throw error;
          });
        } else if (info.config.ack_wait !== ackWait) {
          await bus.jsm.consumers.update(RUNS_STREAM, config.durable_name, { ack_wait: ackWait });
        }
      }
    },

    pull(bucket, max): Promise<WorkItem[]> {
      if (max <= 0) return Promise.resolve([]);
      const next = chain.then(() => pullOnce(bucket, max));
      // The chain only orders the pulls: the caller gets a pull's failure through `next`.
      chain = next.catch(() => undefined);
      return next;
    },

    async undelivered(): Promise<number> {
      const infos = await Promise.all(
        PRIORITY_BUCKETS.map((bucket) => bus.jsm.consumers.info(RUNS_STREAM, consumerName(bucket))),
      );
      return infos.reduce((sum, info) => sum + info.num_pending, 0);
    },

    close(): void {
      if (current !== undefined) finish(current);
      sub?.unsubscribe();
      sub = undefined;
    },
  };
}
