/**
 * Clients that start runs through the gateway and wait for each run's
 * terminal event: on the SSE stream (`GET /v1/events`) when the gateway
 * serves it, else by polling `tasks.get` (the report says which).
 */
import type { ArsClient } from '@ars/client';
import { openRunWatch } from './run-watch.ts';
import type { RunWatch } from './run-watch.ts';

/** The terminal event types of a run. */
export const TERMINAL_TYPES = ['task.completed', 'task.failed', 'task.cancelled'] as const;

/** How a client learns that a run ended. */
export type WaitMode = 'sse' | 'poll';

/** One client in its own session. */
export interface RunClient {
  readonly session: string;
  readonly mode: WaitMode;
  /** Starts a run; resolves with its id once `start` answered. */
  start(query: string): Promise<string>;
  /** The run's terminal type (and the ErrorCode of a failure), once it ended. */
  terminal(taskId: string, timeoutMs?: number): Promise<{ type: string; errorCode?: string }>;
  /** The next frame of `taskId` of one of `types` (SSE mode only); its arrival time. */
  next(taskId: string, types: readonly string[], timeoutMs?: number): Promise<number>;
  close(): void;
}

interface StartResponse {
  readonly task_id: string;
}

interface TaskDetail {
  readonly task: { readonly status: string; readonly error_code?: string };
}

const STATUS_TO_TYPE: Readonly<Record<string, string>> = {
  complete: 'task.completed',
  failed: 'task.failed',
  cancelled: 'task.cancelled',
};

/** Opens a client; `types` are the event types it will wait for (SSE mode). */
export async function openRunClient(
  client: ArsClient,
  options: { readonly session: string; readonly types: readonly string[]; readonly mode: WaitMode },
): Promise<RunClient> {
  const { session, mode } = options;
  const watch: RunWatch | undefined =
    mode === 'sse' ? await openRunWatch(client, { session, types: options.types }) : undefined;

  async function poll(taskId: string, timeoutMs: number): Promise<{ type: string; errorCode?: string }> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const detail = await client.call<TaskDetail>('tasks.get', { identity: {}, task_id: taskId }, { session });
      const type = STATUS_TO_TYPE[detail.task.status];
      if (type !== undefined) return { type, ...(detail.task.error_code ? { errorCode: detail.task.error_code } : {}) };
      if (performance.now() > deadline) throw new Error(`run ${taskId} did not end within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  }

  return {
    session,
    mode,
    async start(query) {
      const response = await client.call<StartResponse>('start', { identity: {}, query }, { session });
      return response.task_id;
    },
    async terminal(taskId, timeoutMs = 30_000) {
      if (watch === undefined) return poll(taskId, timeoutMs);
      const arrival = await watch.next(taskId, TERMINAL_TYPES, timeoutMs);
      watch.forget(taskId);
      const code = arrival.frame.payload['ErrorCode'];
      return { type: arrival.frame.type, ...(typeof code === 'string' ? { errorCode: code } : {}) };
    },
    async next(taskId, types, timeoutMs = 30_000) {
      if (watch === undefined) throw new Error('waiting for a given event needs the SSE route');
      return (await watch.next(taskId, types, timeoutMs)).at;
    },
    close() {
      watch?.close();
    },
  };
}

/** Whether the gateway serves `GET /v1/events` (a subscription goes live within `timeoutMs`). */
export async function sseAvailable(client: ArsClient, session: string, timeoutMs = 5_000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const watch = await Promise.race([
      openRunWatch(client, { session, types: ['task.spawned'] }),
      new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), timeoutMs);
      }),
    ]);
    watch.close();
    return true;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
