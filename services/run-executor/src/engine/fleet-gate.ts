import { setTimeout as sleep } from 'node:timers/promises';
import { FLEET_AGENT_KEY_PREFIX, FLEET_PAUSE_REASON, FleetEntry, ServiceError } from '@ars/contracts';
import type { AgentState } from '@ars/contracts';
import { ControlDeliveryError, encodeToken, FLEET_BUCKET, openKv, requestControl } from '@ars/bus';
import type { Bus } from '@ars/bus';
import type { Logger } from '@ars/telemetry';
import type { PauseRecord } from '../domain/pause.ts';

/**
 * Fleet control as this executor enforces it. Every executor watches the
 * `ars_fleet` KV bucket (agent-registry writes an agent's state there) into
 * an in-memory map, so `start` and each claim consult memory only: no call
 * and no store read per run. Until the watch has replayed the bucket, a
 * lookup reads the agent's key directly (failing closed).
 *
 * - `start` of a `draining`, `stopped` or `deregistered` agent is refused
 *   409 `conflict` (`paused` agents queue new runs).
 * - A claim of a `paused` or `stopped` agent's run puts it back on the queue
 *   for {@link HOLD_MS} (not claimed, its lease released).
 * - On a change, this executor's runs of the agent in flight get a control
 *   through their own inbox, exactly as a caller's would: `paused` → `pause`
 *   (reason {@link FLEET_PAUSE_REASON}: the run parks at its next step
 *   boundary); `stopped` or `deregistered` → hard `cancel`; `paused` →
 *   `running` (agents.restart) → `resume` of the runs whose open pause is
 *   the fleet's. Control event ids derive from the command id, so that a
 *   control is applied once however often it is sent.
 * - A new incarnation (agents.restart) drops the executor's cached
 *   configurations of the agent ({@link FleetGate.onRestart}).
 * - A claimed run of a `deregistered` agent is hard-cancelled; a run
 *   redelivered (its executor died) while its agent runs again has its
 *   fleet pause resumed.
 */

/** How long a held claim waits before the run is offered again, in ms. */
export const HOLD_MS = 2_000;
/** How long a control to a run still opening its inbox is retried, in ms. */
const DELIVERY_WINDOW_MS = 15_000;
const DELIVERY_RETRY_MS = 200;
const MAX_WATCH_RETRY_MS = 30_000;
/** How often, and how far apart, a fleet pause's resume is sent while the pause stays open. */
const RESUME_ATTEMPTS = 5;
const RESUME_CHECK_MS = 500;

/** States that refuse a new run at `start`. */
const REFUSING: readonly AgentState[] = ['draining', 'stopped', 'deregistered'];
/** States whose queued runs are not claimed. */
const HOLDING: readonly AgentState[] = ['paused', 'stopped'];
/** States whose runs in flight are hard-cancelled. */
const CANCELLING: readonly AgentState[] = ['stopped', 'deregistered'];

/** The bucket as the gate reads it (`KV` of `@ars/bus` fits). */
export interface FleetKv {
  get(key: string): Promise<{ readonly operation: string; string(): string } | null>;
  watch(options?: { key?: string }): Promise<
    AsyncIterable<{
      readonly key: string;
      readonly operation: string;
      readonly isUpdate: boolean;
      string(): string;
    }> & {
      stop(): void;
    }
  >;
  status(): Promise<{ readonly values: number }>;
}

/** A run as the gate sees it. */
export interface GatedRun {
  readonly task_id: string;
  readonly tenant: string;
  readonly agent_id?: string | undefined;
  readonly status: string;
}

export interface FleetGateOptions {
  readonly bus: Bus;
  readonly logger: Logger;
  /** The executor's DEFAULT_AGENT_ID: the agent of a run that names none. */
  readonly defaultAgentId: string;
  /** Open pauses of a run (to resume only the fleet's). */
  readonly openPauses: (taskId: string) => Promise<PauseRecord[]>;
  /** @default the `ars_fleet` bucket of `bus` */
  readonly kv?: FleetKv;
  /** How long one control request waits for the inbox's answer, in ms. @default 2000 */
  readonly controlTimeoutMs?: number;
}

export interface FleetGate {
  /** Opens the bucket and starts the watch (in the background). */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Refuses (409 `conflict`) a new run of an agent that takes none; 503 while the bucket cannot be read. */
  admitStart(tenant: string, agentId: string | undefined): Promise<void>;
  /** Milliseconds to put a claimed run back for, or undefined to run it now. */
  holdClaim(run: GatedRun): Promise<number | undefined>;
  /** True when the run's agent is known (from the watch) to hold its claims: a held run is not lost. */
  isHeld(run: Pick<GatedRun, 'tenant' | 'agent_id'>): boolean;
  /** Tracks a claimed run while it executes here; call the result when it leaves. */
  track(run: GatedRun): () => void;
  /** Calls `listener` whenever an agent's incarnation changes (agents.restart): drop what is cached of it. */
  onRestart(listener: (tenant: string, agentId: string) => void): void;
  /** True once the watch replayed the bucket. */
  readonly caughtUp: boolean;
}

/** The bucket key of an agent (the `FleetEntry` contract: identity tokens as in event subjects). */
export function fleetKeyOf(tenant: string, agentId: string): string {
  return `${FLEET_AGENT_KEY_PREFIX}.${encodeToken(tenant)}.${encodeToken(agentId)}`;
}

const mapKey = (tenant: string, agentId: string) => JSON.stringify([tenant, agentId]);

function parseEntry(text: () => string): FleetEntry | undefined {
  try {
    const parsed = FleetEntry.safeParse(JSON.parse(text()));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

export function createFleetGate(options: FleetGateOptions): FleetGate {
  const { logger, defaultAgentId } = options;
  const entries = new Map<string, FleetEntry>();
  const tracked = new Map<string, { readonly tenant: string; readonly agentId: string }>();
  const abort = new AbortController();
  let kv: FleetKv | undefined = options.kv;
  let caughtUp = false;
  let stopped = false;
  let watch: { stop(): void } | undefined;
  let following: Promise<void> | undefined;
  const restartListeners: ((tenant: string, agentId: string) => void)[] = [];

  const agentOf = (run: Pick<GatedRun, 'agent_id'>) => run.agent_id ?? defaultAgentId;

  async function lookup(tenant: string, agentId: string): Promise<FleetEntry | undefined> {
    const known = entries.get(mapKey(tenant, agentId));
    if (caughtUp || known !== undefined || kv === undefined) return known;
    const found = await kv.get(fleetKeyOf(tenant, agentId));
    return found === null || found.operation !== 'PUT' ? undefined : parseEntry(() => found.string());
  }

  /** Sends a control to a tracked run's inbox, again while the inbox is not open yet; stops once the run left. */
  async function control(taskId: string, method: string, payload: object, eventId: string): Promise<void> {
    const deadline = Date.now() + DELIVERY_WINDOW_MS;
    const envelope = { method, payload, event_id: eventId, caller: { user: 'fleet' }, caller_tier: 'admin' };
    while (!stopped && tracked.has(taskId)) {
      try {
        const reply = await requestControl(options.bus, taskId, envelope, {
          timeoutMs: options.controlTimeoutMs ?? 2_000,
        });
        if (!reply.accepted)
          logger.warn({ taskId, control: method, code: reply.code }, 'fleet control refused by the run');
        return;
      } catch (error) {
        const retry = error instanceof ControlDeliveryError && error.reason === 'no_live_inbox';
        if (!retry || Date.now() > deadline) {
          logger.warn({ err: error, taskId, control: method }, 'fleet control not delivered');
          return;
        }
        await sleep(DELIVERY_RETRY_MS, undefined, { signal: abort.signal }).catch(() => undefined);
      }
    }
  }

  /**
   * Resumes the run's open fleet pause, if it has one. A run just claimed
   * again may take the resume before it restored that pause (and reject it
   * `not_paused`): while the pause stays open the resume is sent again, a
   * few times, under a new event id.
   */
  async function resumeFleetPause(taskId: string): Promise<void> {
    const fleetPause = async () =>
      (await options.openPauses(taskId)).find((p) => p.kind === 'pause' && p.reason.startsWith(FLEET_PAUSE_REASON));
    for (let attempt = 0; attempt < RESUME_ATTEMPTS && !stopped && tracked.has(taskId); attempt += 1) {
      const open = await fleetPause();
      if (open === undefined) return;
      const eventId = `fleet:resume:${open.token}:${attempt}`;
      await control(taskId, 'resume', { reason: 'agent resumed by fleet control' }, eventId);
      await sleep(RESUME_CHECK_MS, undefined, { signal: abort.signal }).catch(() => undefined);
    }
  }

  function runsOf(entry: FleetEntry): string[] {
    return [...tracked].filter(([, r]) => r.tenant === entry.tenant && r.agentId === entry.agent_id).map(([id]) => id);
  }

  function enforce(entry: FleetEntry, previous: FleetEntry | undefined): void {
    if (previous !== undefined && previous.incarnation !== entry.incarnation) {
      for (const listener of restartListeners) listener(entry.tenant, entry.agent_id);
    }
    if (previous?.state === entry.state && previous.incarnation === entry.incarnation) return;
    const command = entry.command_id ?? `${entry.incarnation}:${entry.changed_at}`;
    const fire = (promise: Promise<void>) =>
      void promise.catch((error: unknown) => logger.warn({ err: error }, 'fleet control failed'));
    for (const taskId of runsOf(entry)) {
      if (entry.state === 'paused' && previous?.state !== 'paused') {
        const reason = `${FLEET_PAUSE_REASON}${entry.reason ? `: ${entry.reason}` : ''}`;
        fire(control(taskId, 'pause', { reason }, `fleet:pause:${command}:${taskId}`));
      } else if (CANCELLING.includes(entry.state) && (previous === undefined || !CANCELLING.includes(previous.state))) {
        fire(control(taskId, 'cancel', { hard: true }, `fleet:${entry.state}:${command}:${taskId}`));
      } else if (entry.state === 'running' && previous?.state === 'paused') {
        fire(resumeFleetPause(taskId));
      }
    }
  }

  function apply(change: { key: string; operation: string; string(): string }): void {
    const entry = change.operation === 'PUT' ? parseEntry(() => change.string()) : undefined;
    if (entry === undefined) {
      if (change.operation !== 'PUT') {
        for (const [key, value] of entries) {
          if (fleetKeyOf(value.tenant, value.agent_id) === change.key) entries.delete(key);
        }
      } else logger.warn({ key: change.key }, 'unreadable fleet entry ignored');
      return;
    }
    const key = mapKey(entry.tenant, entry.agent_id);
    const previous = entries.get(key);
    entries.set(key, entry);
    enforce(entry, previous);
  }

  async function follow(bucket: FleetKv): Promise<void> {
    let delay = 500;
    while (!stopped) {
      try {
        const { values } = await bucket.status();
        const iterator = await bucket.watch({ key: `${FLEET_AGENT_KEY_PREFIX}.>` });
        watch = iterator;
        if (stopped) iterator.stop();
        if (values === 0) caughtUp = true;
        delay = 500;
        for await (const change of iterator) {
          apply(change);
          if (change.isUpdate) caughtUp = true;
        }
      } catch (error) {
        if (!stopped) logger.warn({ err: error }, 'fleet watch failed; reopening it');
      }
      caughtUp = false;
      watch = undefined;
      if (stopped) return;
      await sleep(delay, undefined, { signal: abort.signal }).catch(() => undefined);
      delay = Math.min(delay * 2, MAX_WATCH_RETRY_MS);
    }
  }

  return {
    get caughtUp() {
      return caughtUp;
    },
    onRestart(listener) {
      restartListeners.push(listener);
    },
    async start() {
      kv ??= (await openKv(options.bus, FLEET_BUCKET)) as FleetKv;
      following = follow(kv);
    },
    async stop() {
      stopped = true;
      abort.abort();
      watch?.stop();
      await following;
    },
    async admitStart(tenant, requested) {
      const agentId = requested ?? defaultAgentId;
      let entry: FleetEntry | undefined;
      try {
        entry = await lookup(tenant, agentId);
      } catch (error) {
        throw new ServiceError('unavailable', 'the fleet registry cannot be read right now; retry', {
          cause: error,
          retryable: true,
        });
      }
      if (entry !== undefined && REFUSING.includes(entry.state)) {
        throw new ServiceError(
          'conflict',
          `agent ${agentId} is ${entry.state}: it takes no new run (agents.restart returns it to running)`,
        );
      }
    },
    async holdClaim(run) {
      try {
        const entry = await lookup(run.tenant, agentOf(run));
        return entry !== undefined && HOLDING.includes(entry.state) ? HOLD_MS : undefined;
      } catch (error) {
        logger.warn({ err: error, taskId: run.task_id }, 'fleet registry unreadable; the claim waits');
        return HOLD_MS;
      }
    },
    isHeld(run) {
      const entry = entries.get(mapKey(run.tenant, agentOf(run)));
      return entry !== undefined && HOLDING.includes(entry.state);
    },
    track(run) {
      const agentId = agentOf(run);
      tracked.set(run.task_id, { tenant: run.tenant, agentId });
      const entry = entries.get(mapKey(run.tenant, agentId));
      if (entry?.state === 'deregistered') {
        void control(
          run.task_id,
          'cancel',
          { hard: true },
          `fleet:deregistered:${entry.command_id ?? ''}:${run.task_id}`,
        );
      } else if (entry?.state === 'running' && run.status !== 'pending') {
        // Redelivered mid-run: a pause the fleet opened before its executor died is resumed now.
        void resumeFleetPause(run.task_id).catch((error: unknown) =>
          logger.warn({ err: error, taskId: run.task_id }, 'fleet pause of a redelivered run not resumed'),
        );
      }
      return () => void tracked.delete(run.task_id);
    },
  };
}
