import {
  AGENT_ERASE_SESSION,
  ARTIFACT_ERASE_SESSION,
  MEMORY_ERASE_SESSION,
  ServiceError,
  TASKS_ERASE_SESSION,
  isServiceError,
} from '@ars/contracts';
import type { VerifiedIdentity } from '@ars/contracts';
import { callInternal } from '@ars/bus';
import type { CallOptions, RpcClient } from '@ars/bus';
import type { Logger } from '@ars/telemetry';
import { tripleOf } from '../domain/session.ts';
import type { ErasureProgress, SessionDoc, SessionTriple } from '../domain/session.ts';
import type { SessionEvents } from '../session-events.ts';
import type { ProjectionRepository } from '../store/projection.repository.ts';
import type { ErasureStep, SessionRepository } from '../store/session.repository.ts';
import type { StateRecordRepository } from '../store/state-record.repository.ts';

/** What an erasure removed: the body of the sessions.delete response (without `protocol_version`). */
export interface ErasureReceipt {
  readonly session_id: string;
  readonly erased: true;
  readonly tasks_deleted: number;
  /** This service's state records plus the run-executor's run state records. */
  readonly state_records_deleted: number;
  readonly artifacts_deleted: number;
  readonly memory_purged: boolean;
  readonly events_purged: true;
  readonly erased_at: string;
}

/** Dependencies of {@link createEraser}. */
export interface EraserDeps {
  readonly sessions: SessionRepository;
  readonly records: StateRecordRepository;
  readonly projections: ProjectionRepository;
  readonly rpc: RpcClient;
  /** Purges the session's events from the EVENTS stream; returns how many messages went. */
  readonly purgeEvents: (triple: SessionTriple) => Promise<number>;
  readonly events: SessionEvents;
  readonly logger: Logger;
  readonly now: () => Date;
  /** Time each cascade call may take, in milliseconds. */
  readonly cascadeTimeoutMs: number;
}

/** The erasure cascade and its resumption. */
export interface Eraser {
  /**
   * Erases `triple`: tombstone first (every later admit is refused), then the
   * cascade. Idempotent: an erased session returns its receipt again. A
   * failed step leaves the session `erasing` and throws `unavailable`; the
   * resumer finishes it.
   */
  erase(triple: SessionTriple, caller: VerifiedIdentity): Promise<ErasureReceipt>;
  /** Finishes every unfinished erasure (boot and periodic); returns how many finished now. */
  resumeAll(): Promise<number>;
}

/** One step owned by another service: its internal endpoint's call, and what of the reply the progress keeps. */
interface RemoteStep {
  readonly step: Extract<ErasureStep, 'tasks' | 'artifacts' | 'memory' | 'agent_config'>;
  run(rpc: RpcClient, caller: VerifiedIdentity, triple: SessionTriple, options: CallOptions): Promise<object>;
}

/** The cascade over the other services, in order; each endpoint is idempotent. */
const REMOTE_STEPS: readonly RemoteStep[] = [
  {
    step: 'tasks',
    async run(rpc, caller, triple, options) {
      const reply = await callInternal(rpc, TASKS_ERASE_SESSION, caller, triple, options);
      return { tasks_deleted: reply.tasks_deleted, state_records_deleted: reply.state_records_deleted };
    },
  },
  {
    step: 'artifacts',
    async run(rpc, caller, triple, options) {
      const reply = await callInternal(rpc, ARTIFACT_ERASE_SESSION, caller, triple, options);
      return { artifacts_deleted: reply.artifacts_deleted };
    },
  },
  {
    step: 'memory',
    async run(rpc, caller, triple, options) {
      const reply = await callInternal(rpc, MEMORY_ERASE_SESSION, caller, triple, options);
      return { purged: reply.purged };
    },
  },
  {
    // The session-user tier of agent_config (skills, settings); nothing of it is in the receipt.
    step: 'agent_config',
    async run(rpc, caller, triple, options) {
      const reply = await callInternal(rpc, AGENT_ERASE_SESSION, caller, triple, options);
      return { skills_deleted: reply.skills_deleted, settings_deleted: reply.settings_deleted };
    },
  },
];

/** Unfinished erasures handled per resumer query. */
const RESUME_BATCH = 100;

function describe(error: unknown): string {
  if (isServiceError(error)) return `${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

/** The receipt of a finished (or fully stepped) erasure. */
export function receiptOf(doc: SessionDoc, erasedAt: string): ErasureReceipt {
  const progress: ErasureProgress = doc.erasure ?? { started_at: erasedAt, attempts: 0 };
  return {
    session_id: doc.session_id,
    erased: true,
    tasks_deleted: progress.tasks?.tasks_deleted ?? 0,
    state_records_deleted: (progress.tasks?.state_records_deleted ?? 0) + (progress.state?.state_records_deleted ?? 0),
    artifacts_deleted: progress.artifacts?.artifacts_deleted ?? 0,
    memory_purged: progress.memory?.purged ?? false,
    events_purged: true,
    erased_at: erasedAt,
  };
}

/** Creates the eraser. One erasure per session runs at a time in this process. */
export function createEraser(deps: EraserDeps): Eraser {
  const { sessions, logger } = deps;
  const inFlight = new Map<string, Promise<ErasureReceipt>>();

  async function remoteSteps(doc: SessionDoc, caller: VerifiedIdentity): Promise<string[]> {
    const triple = tripleOf(doc);
    const failures: string[] = [];
    // Every step is tried even when an earlier one failed: erase as much as possible now.
    for (const remote of REMOTE_STEPS) {
      if (doc.erasure?.[remote.step] !== undefined) continue;
      try {
        const kept = await remote.run(deps.rpc, caller, triple, { timeoutMs: deps.cascadeTimeoutMs });
        await sessions.recordStep(doc._id, remote.step, kept);
      } catch (error) {
        failures.push(`${remote.step}: ${describe(error)}`);
      }
    }
    return failures;
  }

  async function localSteps(doc: SessionDoc): Promise<void> {
    const triple = tripleOf(doc);
    if (doc.erasure?.state === undefined) {
      const deleted = await deps.records.deleteSession(triple);
      await deps.projections.deleteSession(triple);
      await sessions.recordStep(doc._id, 'state', { state_records_deleted: deleted });
    }
    if (doc.erasure?.events === undefined) {
      const purged = await deps.purgeEvents(triple);
      await sessions.recordStep(doc._id, 'events', { purged }, { erased_at: deps.now().toISOString() });
    }
  }

  async function reload(doc: SessionDoc): Promise<SessionDoc> {
    const current = await sessions.find(tripleOf(doc));
    if (current === null) throw new Error('the tombstone vanished during the erasure');
    return current;
  }

  /** The session is tombstoned already; what is left is retried later. */
  async function unfinished(id: string, failures: readonly string[]): Promise<ServiceError> {
    await sessions.recordFailure(id, failures.join('; ')).catch(() => undefined);
    logger.warn({ failures }, 'session erasure step failed; it will be retried');
    return new ServiceError(
      'unavailable',
      'the session is erased from now on, but its erasure could not finish yet; it is retried automatically (call again for the receipt)',
      { retryable: true },
    );
  }

  /** Deletes the local records, purges the stream, publishes the receipt and marks the session erased. */
  async function finish(start: SessionDoc): Promise<ErasureReceipt> {
    await localSteps(await reload(start));
    const stepped = await reload(start);
    const erasedAt = stepped.erasure?.erased_at ?? deps.now().toISOString();
    const receipt = receiptOf(stepped, erasedAt);
    // Published after the purge, so the receipt is what stays of the session on the stream.
    await deps.events.erased(
      tripleOf(start),
      {
        stateRecordsDeleted: receipt.state_records_deleted,
        artifactsDeleted: receipt.artifacts_deleted,
        memoryPurged: receipt.memory_purged,
      },
      new Date(erasedAt),
      `session.erased.${start._id}`,
    );
    await sessions.markErased(start._id, erasedAt);
    logger.info({ tasks: receipt.tasks_deleted, artifacts: receipt.artifacts_deleted }, 'session erased');
    return receipt;
  }

  async function run(start: SessionDoc, caller: VerifiedIdentity): Promise<ErasureReceipt> {
    if (start.status === 'erased') return receiptOf(start, start.erased_at ?? start.last_seen_at);
    const failures = await remoteSteps(start, caller);
    if (failures.length > 0) throw await unfinished(start._id, failures);
    try {
      return await finish(start);
    } catch (error) {
      throw await unfinished(start._id, [`local: ${describe(error)}`]);
    }
  }

  function runOnce(doc: SessionDoc, caller: VerifiedIdentity): Promise<ErasureReceipt> {
    const running = inFlight.get(doc._id);
    if (running !== undefined) return running;
    const started = run(doc, caller).finally(() => inFlight.delete(doc._id));
    inFlight.set(doc._id, started);
    return started;
  }

  return {
    async erase(triple, caller) {
      const doc = await sessions.tombstone(triple, deps.now().toISOString());
      return runOnce(doc, caller);
    },

    async resumeAll() {
      const unfinished = await sessions.findErasing(RESUME_BATCH);
      let finished = 0;
      for (const doc of unfinished) {
        // No caller any more: the owner's triple, without scopes.
        const owner: VerifiedIdentity = { ...tripleOf(doc), scopes: [] };
        try {
          await runOnce(doc, owner);
          finished += 1;
        } catch (error) {
          logger.warn({ err: describe(error) }, 'resumed session erasure not finished yet');
        }
      }
      return finished;
    },
  };
}
