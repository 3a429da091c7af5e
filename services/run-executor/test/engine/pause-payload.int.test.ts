import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newCaller } from './harness.ts';
import { startSystemHarness } from './system-harness.ts';
import type { SystemHarness } from './system-harness.ts';

/**
 * An approval whose arguments are over PAUSE_PAYLOAD_ARTIFACT_BYTES of JSON:
 * the arguments go to an artifact of the run's owner, and the pause carries
 * a reference (`pause.payload_artifact_routed`); small ones stay inline.
 */

const THRESHOLD = 1_024;

describe('pause payloads routed to artifacts', () => {
  let h: SystemHarness;

  beforeAll(async () => {
    h = await startSystemHarness(['artifact'], { PAUSE_PAYLOAD_ARTIFACT_BYTES: String(THRESHOLD) });
  });

  afterAll(async () => {
    await h?.stop();
  });

  it('stores approval arguments over the threshold as an artifact and references it', async () => {
    const caller = newCaller();
    const text = 'x'.repeat(4_000);
    const { watch } = await h.start(caller, { query: `#script tool:sensitive_action{"text":"${text}"};finish:ok` });
    const routed = await watch.until((e) => e.type === 'pause.payload_artifact_routed');
    const requested = await watch.until((e) => e.type === 'tool.approval_requested');
    watch.stop();
    const payloadBytes = JSON.stringify({ text }).length;
    expect(routed.payload).toEqual({
      Token: requested.payload.PauseToken,
      ArtifactID: expect.any(String),
      PayloadBytes: payloadBytes,
      ThresholdBytes: THRESHOLD,
    });
    expect(requested.payload.ArgsSummary).toEqual({ artifact_id: routed.payload.ArtifactID, bytes: payloadBytes });
    const stored = (await h.call('artifact', 'artifacts.get', { artifact_id: routed.payload.ArtifactID }, caller)) as {
      content_base64: string;
    };
    expect(JSON.parse(Buffer.from(stored.content_base64, 'base64').toString('utf8'))).toEqual({ text });
  });

  it('keeps approval arguments under the threshold inline', async () => {
    const caller = newCaller();
    const { watch } = await h.start(caller, { query: '#script tool:sensitive_action{"text":"small"};finish:ok' });
    const requested = await watch.until((e) => e.type === 'tool.approval_requested');
    watch.stop();
    expect(requested.payload.ArgsSummary).toEqual({ text: 'small' });
    expect(watch.types()).not.toContain('pause.payload_artifact_routed');
  });
});
