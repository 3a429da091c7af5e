import { randomUUID } from 'node:crypto';
import { isServiceError, ToolCallRecord, TOOLS_RECORD_CALLS } from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import { callInternal } from '@ars/bus';
import type { InternalCaller } from '@ars/bus';
import type { Logger } from '@ars/telemetry';
import { sourceOf } from '../tools/tool.ts';
import type { ToolDefinition, ToolOwner } from '../tools/tool.ts';

/**
 * Every tool call's outcome (built-in and MCP) on its way to agent-registry
 * (`_tools.record_calls`, what `tools.metrics` and `tools.content_stats`
 * count). One reporter per executor: records are queued without waiting
 * and sent in batches of one tenant, every {@link REPORT_FLUSH_MS} or as
 * soon as {@link REPORT_BATCH_MAX} are queued. A run never waits for it and
 * never fails by it.
 *
 * agent-registry not answering (`unavailable`, `timeout`): the batch is
 * kept as it is, with its `batch_id`, and sent again first with the next
 * flush; agent-registry counts a batch id once, so a batch whose answer was
 * lost is not counted twice. The queue is bounded ({@link REPORT_QUEUE_MAX},
 * kept batches included): past it the oldest records are dropped, and the
 * drops are counted and logged once per flush. A batch agent-registry
 * refuses (an older one without the endpoint, a malformed record) is
 * dropped the same way.
 */

/** How often queued records are sent, in ms. */
export const REPORT_FLUSH_MS = 1_000;
/** Records per batch; this many queued are sent at once. */
export const REPORT_BATCH_MAX = 200;
/** Most records kept while agent-registry does not answer; older ones are dropped. */
export const REPORT_QUEUE_MAX = 10_000;

export interface ToolCallReporter {
  /** Queues one call's outcome; never waits, never throws. */
  record(owner: ToolOwner, call: ToolCallRecord): void;
  /** Sends what is queued now (a flush under way is waited for first). */
  flush(): Promise<void>;
  /** Stops the periodic flush and sends what is queued, once. */
  stop(): Promise<void>;
  /** Records waiting to be sent. */
  readonly queued: number;
  /** Records dropped since the start (queue full, or refused). */
  readonly dropped: number;
}

/** Options of {@link createToolCallReporter}. */
export interface ToolCallReporterOptions {
  readonly rpc: InternalCaller;
  readonly logger: Logger;
  /** Per batch, in ms. */
  readonly timeoutMs: number;
  /** @default {@link REPORT_FLUSH_MS} */
  readonly flushMs?: number;
  /** @default {@link REPORT_BATCH_MAX} */
  readonly batchMax?: number;
  /** @default {@link REPORT_QUEUE_MAX} */
  readonly queueMax?: number;
}

/** How one call ended, as {@link callRecord} reports it. */
export interface CallOutcome {
  readonly outcome: ToolCallRecord['outcome'];
  readonly approvalRequested: boolean;
  readonly attempts: number;
  readonly durationMs: number;
  /** The arguments as called (absent: none could be read). */
  readonly args?: Record<string, unknown> | undefined;
  /** The output fed back to the planner (completed calls). */
  readonly output?: string | undefined;
  /** Result parts the MCP host stored as artifacts, over every attempt. @default 0 */
  readonly artifactsOffloaded?: number | undefined;
}

/** One call's record: `bytes_in` is the JSON of its arguments, `bytes_out` its output, both in UTF-8 bytes. */
export function callRecord(
  tool: Pick<ToolDefinition, 'name' | 'transport' | 'source'>,
  call: CallOutcome,
): ToolCallRecord {
  return {
    tool: tool.name,
    transport: tool.transport,
    source: sourceOf(tool),
    outcome: call.outcome,
    approval_requested: call.approvalRequested,
    attempts: call.attempts,
    duration_ms: Math.max(0, Math.round(call.durationMs)),
    bytes_in: call.args === undefined ? 0 : Buffer.byteLength(JSON.stringify(call.args)),
    bytes_out: call.output === undefined ? 0 : Buffer.byteLength(call.output),
    artifacts_offloaded: call.artifactsOffloaded ?? 0,
    at: new Date().toISOString(),
  };
}

interface Queued {
  readonly owner: ToolOwner;
  readonly call: ToolCallRecord;
}

/** A batch once formed: its id goes with it on every retry. */
interface Batch {
  readonly id: string;
  items: Queued[];
}

/** The queue in batches of one tenant each, at most `max` records, oldest first. */
export function batchesOf(queue: readonly Queued[], max: number): Queued[][] {
  const byTenant = new Map<string, Queued[]>();
  for (const item of queue) {
    const list = byTenant.get(item.owner.tenant);
    if (list === undefined) byTenant.set(item.owner.tenant, [item]);
    else list.push(item);
  }
  const batches: Queued[][] = [];
  for (const list of byTenant.values()) {
    for (let i = 0; i < list.length; i += max) batches.push(list.slice(i, i + max));
  }
  return batches;
}

function retryable(error: unknown): boolean {
  return isServiceError(error) && (error.code === 'unavailable' || error.code === 'timeout');
}

export function createToolCallReporter(options: ToolCallReporterOptions): ToolCallReporter {
  const { rpc, logger, timeoutMs } = options;
  const batchMax = options.batchMax ?? REPORT_BATCH_MAX;
  const queueMax = options.queueMax ?? REPORT_QUEUE_MAX;
  let queue: Queued[] = [];
  /** Batches sent without an answer, oldest first: sent again, with their ids, before anything newer. */
  let held: Batch[] = [];
  let dropped = 0;
  let droppedUnlogged = 0;
  let away = false;
  let flushing: Promise<void> | undefined;
  let again = false;

  const heldCount = (): number => held.reduce((n, b) => n + b.items.length, 0);

  /**
   * Drops the oldest records past the bound, kept batches first. A trimmed
   * batch keeps its id: counted before, it is a repeat; not counted, the
   * rest of it counts.
   */
  function bound(): void {
    let excess = heldCount() + queue.length - queueMax;
    if (excess <= 0) return;
    dropped += excess;
    droppedUnlogged += excess;
    while (excess > 0 && held.length > 0) {
      const [oldest] = held as [Batch];
      const cut = Math.min(excess, oldest.items.length);
      oldest.items.splice(0, cut);
      excess -= cut;
      if (oldest.items.length === 0) held.shift();
    }
    if (excess > 0) queue.splice(0, excess);
  }

  /** Sends one batch: false when agent-registry did not answer (the batch is to be kept). */
  async function send(batch: Batch): Promise<boolean> {
    const [first] = batch.items as [Queued];
    // The batch's caller is one of the tenant's owners: the endpoint checks the tenant it names against it.
    const identity: VerifiedIdentity = { ...first.owner, scopes: [] };
    const body = { tenant: first.owner.tenant, calls: batch.items.map((q) => q.call), batch_id: batch.id };
    try {
      await callInternal(rpc, TOOLS_RECORD_CALLS, identity, body, { timeoutMs });
    } catch (error) {
      if (retryable(error)) {
        if (!away) logger.warn({ err: error }, 'agent-registry not answering; tool call records wait');
        away = true;
        return false;
      }
      logger.warn({ err: error, records: batch.items.length }, 'tool call records refused; dropped');
      dropped += batch.items.length;
      return true;
    }
    if (away) logger.info('agent-registry answers again; tool call records sent');
    away = false;
    return true;
  }

  async function sendAll(): Promise<void> {
    do {
      again = false;
      const fresh = batchesOf(queue, batchMax).map((items): Batch => ({ id: randomUUID(), items }));
      const batches = [...held, ...fresh];
      queue = [];
      held = [];
      // At the first batch agent-registry does not answer, it and the rest are kept, ids and all.
      for (const [i, batch] of batches.entries()) {
        if (batch.items.length === 0 || (await send(batch))) continue;
        held = batches.slice(i);
        break;
      }
      bound();
      if (droppedUnlogged > 0) {
        logger.warn({ dropped: droppedUnlogged, total: dropped }, 'tool call records dropped: the queue is full');
        droppedUnlogged = 0;
      }
    } while (again && !away && queue.length + heldCount() > 0);
  }

  function flush(): Promise<void> {
    if (flushing !== undefined) {
      again = true;
      return flushing;
    }
    if (queue.length === 0 && held.length === 0) return Promise.resolve();
    flushing = sendAll()
      .catch((error: unknown) => logger.error({ err: error }, 'tool call records not sent'))
      .finally(() => {
        flushing = undefined;
      });
    return flushing;
  }

  const timer = setInterval(() => void flush(), options.flushMs ?? REPORT_FLUSH_MS);
  timer.unref();

  return {
    record(owner, call) {
      // One malformed record would have its whole batch refused: it is dropped alone.
      if (!ToolCallRecord.safeParse(call).success) {
        logger.warn({ tool: call.tool }, 'malformed tool call record dropped');
        dropped++;
        return;
      }
      queue.push({ owner: { tenant: owner.tenant, user: owner.user, session: owner.session }, call });
      bound();
      if (queue.length >= batchMax && !away) void flush();
    },
    async flush() {
      await flushing;
      await flush();
    },
    async stop() {
      clearInterval(timer);
      await flushing;
      await flush();
    },
    get queued() {
      return queue.length + heldCount();
    },
    get dropped() {
      return dropped;
    },
  };
}
