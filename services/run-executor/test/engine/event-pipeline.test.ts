import { describe, expect, it } from 'vitest';
import { decodeStoredEvent, encodeToken, EVENT_RUN_HEADER, eventSubject, MESSAGE_ID_HEADER } from '@ars/bus';
import type { MsgHdrs } from '@ars/bus';
import { createLogger } from '@ars/telemetry';
import { createEventPipeline, eventSubjectPrefix } from '../../src/engine/event-pipeline.ts';
import type { JsPipeline, PipelineEvent } from '../../src/engine/event-pipeline.ts';

/** A stream that stores what it is sent, in order. */
function recordingStream() {
  const sent: { subject: string; data: Uint8Array; headers: MsgHdrs | undefined }[] = [];
  const js: JsPipeline = {
    send: async (subject, data, headers) => {
      sent.push({ subject, data, headers });
      return sent.length;
    },
    close: () => undefined,
  };
  return { js, sent };
}

const logger = createLogger({ name: 'test', level: 'silent' });
const identity = { tenant: 'tenant-ä', user: 'user.1', session: 's 1', run: 'run/ü' };
const started = (extra: Partial<PipelineEvent> = {}): PipelineEvent => ({
  type: 'task.started',
  identity,
  payload: { TaskID: identity.run, PriorState: 'pending' },
  ...extra,
});

describe('the engine event pipeline', () => {
  it("sends each event under its identity's subject, with the run's token and the id it may be sent again under", async () => {
    const { js, sent } = recordingStream();
    const pipeline = createEventPipeline(js, { source: 'run-executor', logger: logger });
    const kept = { subjectPrefix: eventSubjectPrefix(identity), runToken: encodeToken(identity.run) };

    expect(await pipeline.publish(started())).toBe(1);
    expect(await pipeline.publish(started({ ...kept, eventId: 'fixed-id' }))).toBe(2);

    const subject = eventSubject({ ...identity, type: 'task.started' });
    for (const message of sent) {
      expect(message.subject).toBe(subject);
      // Computed per event, or kept by the run: the same token, which the gateway decodes back to the run.
      expect(message.headers?.get(EVENT_RUN_HEADER)).toBe(encodeToken(identity.run));
      expect(decodeStoredEvent(message.data)).toMatchObject({ type: 'task.started', run: identity.run });
    }
    expect(sent[0]?.headers?.get(MESSAGE_ID_HEADER)).toBe('');
    expect(sent[1]?.headers?.get(MESSAGE_ID_HEADER)).toBe('fixed-id');
    expect(decodeStoredEvent(sent[1]!.data).id).toBe('fixed-id');
  });

  it('refuses a payload its event type does not declare, sending nothing', async () => {
    const { js, sent } = recordingStream();
    const pipeline = createEventPipeline(js, { source: 'run-executor', logger: logger });
    await expect(pipeline.publish(started({ payload: { TaskID: 7 } }))).rejects.toMatchObject({ code: 'internal' });
    expect(sent).toEqual([]);
  });
});
