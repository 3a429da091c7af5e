import type { StartRequest } from '@ars/contracts';
import { FOREGROUND_KIND } from './task.ts';
import type { InputArtifactRecord, TaskRecord } from './task.ts';

/**
 * The pure rules of `start`: the idempotency scope, the task record a start
 * creates, and the payloads it publishes. No I/O here.
 */

/** The (tenant, user, session) triple a start runs in: the verified one. */
export interface Triple {
  readonly tenant: string;
  readonly user: string;
  readonly session: string;
}

/**
 * The unique key of an idempotent start: the key scoped to the full triple,
 * so the same key in another session or of another user is another task.
 * JSON keeps the four strings apart whatever characters they hold.
 */
export function idempotencyScope(triple: Triple, key: string): string {
  return JSON.stringify([triple.tenant, triple.user, triple.session, key]);
}

/** What the artifact service said of one input artifact (`_artifact.resolve`). */
export interface ResolvedArtifact {
  readonly artifact_id: string;
  readonly mime_type?: string;
  readonly size_bytes?: number;
}

/**
 * `input_artifacts` of a new task, in request order (duplicates collapsed):
 * each id with its disposition hint when one was given, and the artifact's
 * mime type and size when the artifact service resolved it.
 */
export function inputArtifacts(
  ids: readonly string[] | undefined,
  dispositions: Readonly<Record<string, string>> | undefined,
  resolved: readonly ResolvedArtifact[] = [],
): InputArtifactRecord[] {
  const byId = new Map(resolved.map((a) => [a.artifact_id, a]));
  return [...new Set(ids ?? [])].map((artifactId) => {
    const hint = dispositions?.[artifactId];
    const found = byId.get(artifactId);
    return {
      artifact_id: artifactId,
      ...(hint === undefined ? {} : { disposition: hint }),
      ...(found?.mime_type === undefined ? {} : { mime_type: found.mime_type }),
      ...(found?.size_bytes === undefined ? {} : { size_bytes: found.size_bytes }),
    };
  });
}

/** The agent a start binds: absent `agent_id` means the default agent. */
export interface BoundAgent {
  /** The id the caller named; absent when defaulted (Task.agent_id is then absent). */
  readonly agent_id?: string;
  readonly revision_id?: string;
}

/** Everything a new task record is made from. */
export interface NewTaskInput {
  readonly taskId: string;
  readonly triple: Triple;
  readonly request: StartRequest;
  readonly agent: BoundAgent;
  readonly artifacts: readonly ResolvedArtifact[];
  readonly now: string;
}

/** The `pending` record a start inserts. */
export function newTaskRecord({ taskId, triple, request, agent, artifacts, now }: NewTaskInput): TaskRecord {
  const key = request.idempotency_key;
  return {
    _id: taskId,
    task_id: taskId,
    tenant: triple.tenant,
    user: triple.user,
    session: triple.session,
    kind: FOREGROUND_KIND,
    status: 'pending',
    query: request.query,
    goal: request.query,
    priority: request.priority ?? 0,
    ...(agent.agent_id === undefined ? {} : { agent_id: agent.agent_id }),
    ...(agent.revision_id === undefined ? {} : { agent_revision_id: agent.revision_id }),
    ...(key === undefined ? {} : { idempotency_key: key, idempotency_scope: idempotencyScope(triple, key) }),
    input_artifacts: inputArtifacts(request.input_artifact_ids, request.input_artifact_dispositions, artifacts),
    background_acknowledged: false,
    created_at: now,
    updated_at: now,
    queued_at: now,
    steps: [],
    cost_usd: 0,
    context: [],
  };
}

/** The `task.spawned` payload: empty strings stand for no parent and no key. */
export function spawnedPayload(task: TaskRecord): Record<string, unknown> {
  return {
    TaskID: task.task_id,
    Kind: task.kind,
    ParentTaskID: task.parent_task_id ?? '',
    Priority: task.priority,
    IdempotencyKey: task.idempotency_key ?? '',
  };
}

/** The event id of a task's `task.spawned`: fixed, so a republish is deduplicated by the stream. */
export function spawnedEventId(taskId: string): string {
  return `task.spawned:${taskId}`;
}
