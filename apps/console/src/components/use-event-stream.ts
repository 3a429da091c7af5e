import { useEffect, useRef, useState } from 'react';
import type { ArsClient, EventFrame, SubscribeOptions } from '@ars/client';

/** Where a stream is: connecting, live, or failed (with the error that ended it). */
export interface StreamState {
  readonly status: 'idle' | 'live' | 'failed';
  readonly error?: unknown;
}

/**
 * Follows `GET /v1/events` with the SDK's resumable iterator while the
 * component is mounted and `options` is defined; calls `onFrame` for each
 * frame. A change of `key` reopens the stream (pass the cursor in `options`).
 */
export function useEventStream(
  client: ArsClient,
  options: SubscribeOptions | undefined,
  key: string,
  onFrame: (frame: EventFrame) => void,
): StreamState {
  const [state, setState] = useState<StreamState>({ status: 'idle' });
  const onFrameRef = useRef(onFrame);
  onFrameRef.current = onFrame;

  useEffect(() => {
    if (options === undefined) return undefined;
    const controller = new AbortController();
    setState({ status: 'live' });
    void (async () => {
      try {
        for await (const frame of client.subscribe({ ...options, signal: controller.signal })) {
          onFrameRef.current(frame);
        }
      } catch (error) {
        if (!controller.signal.aborted) setState({ status: 'failed', error });
      }
    })();
    return () => controller.abort();
  }, [client, key, options === undefined]);

  return state;
}
