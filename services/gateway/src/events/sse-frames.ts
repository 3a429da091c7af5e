import { decodeEventMessage } from '@ars/bus';
import type { EventFrame } from '@ars/contracts';
import type { EventRecord } from '../ports.ts';

/**
 * The text of the SSE stream. Every frame is `id: <sequence>` plus one
 * `data:` line holding one JSON object (JSON.stringify never emits a raw line
 * break, so one line is guaranteed); stream notices are named events, which
 * readers of default messages never see.
 */

/** The heartbeat comment; keeps idle connections open through proxies. */
export const HEARTBEAT = ': hb\n\n';

/** The named event sent when the replayed backlog has been delivered and live delivery begins. */
export const REPLAY_COMPLETE = 'replay.complete';

/** One frame as SSE text; `withId` false leaves the client's cursor where it was. */
export function frameText(frame: EventFrame, withId = true): string {
  const data = `data: ${JSON.stringify(frame)}\n\n`;
  return withId ? `id: ${frame.sequence}\n${data}` : data;
}

/** A stored event as SSE text, or `undefined` when its body cannot be decoded. */
export function recordText(record: EventRecord): string | undefined {
  try {
    return frameText(decodeEventMessage(record));
  } catch {
    return undefined;
  }
}

/** `event: replay.complete` carrying the sequence up to which the backlog was delivered. */
export function replayCompleteText(sequence: number): string {
  return `event: ${REPLAY_COMPLETE}\ndata: ${JSON.stringify({ sequence })}\n\n`;
}

/** Whose stream a notice frame is addressed to. */
export interface NoticeAddress {
  readonly tenant: string;
  readonly user: string;
  readonly session: string;
}

/**
 * A frame the gateway writes to one subscriber only (`bus.dropped`,
 * `bus.subscription_idle_closed`); it is not stored on the stream. Its
 * `sequence` is a cursor the subscriber may resume from without losing an event.
 */
export function noticeFrame(
  type: string,
  sequence: number,
  address: NoticeAddress,
  payload: Record<string, unknown>,
  occurredAt: Date,
): EventFrame {
  return {
    type,
    sequence,
    occurred_at: occurredAt.toISOString(),
    tenant: address.tenant,
    user: address.user,
    session: address.session,
    run: '',
    payload,
  };
}
