import { createSseParser } from '@ars/client';
import type { EventFrame } from '@ars/contracts';

/** Inputs of {@link readRawFrames}. */
export interface RawSubscription {
  readonly baseUrl: string;
  readonly token: string;
  readonly run?: string;
  readonly session?: string;
  readonly lastEventId?: number;
  /** Stop once this holds for the frames read so far. */
  readonly until: (frames: readonly EventFrame[]) => boolean;
  /** @default 15000 */
  readonly timeoutMs?: number;
}

/**
 * Reads `GET /v1/events` with plain fetch and the SSE parser, keeping every
 * frame the server sends (the SDK drops frames at or before its cursor, which
 * would hide a server that repeats one). Stream control events are skipped.
 */
export async function readRawFrames(options: RawSubscription): Promise<EventFrame[]> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error('timeout')), options.timeoutMs ?? 15_000);
  const headers: Record<string, string> = { accept: 'text/event-stream', authorization: `Bearer ${options.token}` };
  if (options.run !== undefined) headers['x-service-run'] = options.run;
  if (options.session !== undefined) headers['x-service-session'] = options.session;
  if (options.lastEventId !== undefined) headers['last-event-id'] = String(options.lastEventId);
  const frames: EventFrame[] = [];
  try {
    const response = await fetch(`${options.baseUrl}/v1/events`, { headers, signal: controller.signal });
    if (!response.ok || response.body === null) throw new Error(`GET /v1/events answered ${response.status}`);
    const parser = createSseParser();
    const decoder = new TextDecoder();
    const reader = response.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) throw new Error('the event stream ended');
        for (const message of parser.push(decoder.decode(value, { stream: true }))) {
          const frame = asFrame(message.data);
          const named = message.event !== '' && message.event !== 'message';
          if (frame === undefined || (named && frame.type !== message.event)) continue;
          frames.push(frame);
          if (options.until(frames)) return frames;
        }
      }
    } finally {
      await reader.cancel().catch(() => undefined);
    }
  } catch (error) {
    const types = frames.map((frame) => frame.type).join(', ');
    throw new Error(`readRawFrames: ${(error as Error).message}; received ${frames.length}: ${types}`, {
      cause: error,
    });
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
}

function asFrame(data: string): EventFrame | undefined {
  try {
    const value = JSON.parse(data) as Partial<EventFrame> | null;
    return typeof value?.type === 'string' && typeof value.sequence === 'number' ? (value as EventFrame) : undefined;
  } catch {
    return undefined;
  }
}
