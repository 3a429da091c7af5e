import type { ChunkKind } from '../providers/provider.ts';

/**
 * The `llm.completion.chunk` stream of one provider call. Each chunk is held
 * until the next arrives, so that the call's last chunk goes out with
 * `Done: true` instead of being followed by an empty closing chunk: one
 * event fewer per call (three of a three-step run's 22). A held chunk goes
 * out on its own after {@link CHUNK_HOLD_MS} when nothing follows it, so a
 * slow stream reaches its watchers at most that much later; a call that
 * produced no chunk at all still ends with an empty `Done` chunk.
 */

/** The longest a chunk waits for its successor before it is sent without it. */
export const CHUNK_HOLD_MS = 20;

/** Publishes one chunk event. */
export type EmitChunk = (delta: string, kind: ChunkKind, done: boolean) => void;

export interface ChunkStream {
  /** A chunk from the provider. */
  push(delta: string, kind: ChunkKind): void;
  /** The call completed: the held chunk goes out as the last, `Done: true`. */
  end(): void;
  /**
   * The call ended without completing. The held chunk goes out unfinished,
   * unless the call was aborted (a hard cancel: nothing of it may follow).
   */
  abandon(aborted: boolean): void;
}

/** A chunk stream emitting through `emit`; `holdMs` defaults to {@link CHUNK_HOLD_MS}. */
export function createChunkStream(emit: EmitChunk, holdMs = CHUNK_HOLD_MS): ChunkStream {
  let held: { delta: string; kind: ChunkKind } | undefined;
  let lastKind: ChunkKind = 'text';
  let timer: NodeJS.Timeout | undefined;

  const stopTimer = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
  };
  const release = (done: boolean): void => {
    const chunk = held;
    held = undefined;
    if (chunk !== undefined) emit(chunk.delta, chunk.kind, done);
  };

  return {
    push(delta, kind) {
      release(false);
      held = { delta, kind };
      lastKind = kind;
      // One timer per quiet spell, not per chunk: it re-checks what is held when it fires.
      timer ??= setTimeout(() => {
        timer = undefined;
        release(false);
      }, holdMs);
    },
    end() {
      stopTimer();
      if (held === undefined) emit('', lastKind, true);
      else release(true);
    },
    abandon(aborted) {
      stopTimer();
      if (aborted) held = undefined;
      else release(false);
    },
  };
}
