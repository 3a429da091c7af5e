import type { RunState } from './run-state.ts';

/**
 * A pause payload too large for its pause record (PAUSE_PAYLOAD_ARTIFACT_BYTES
 * of JSON): an approval's full arguments. It is stored as an artifact of the
 * run's owner (namespace `pause_payload`) and the record, `pause.list` and
 * `tool.approval_requested` carry a reference instead of the summary;
 * `pause.payload_artifact_routed` names it. When the artifact cannot be
 * stored, the bounded summary stays inline (the pause is not refused).
 */

/** What a pause record holds in place of a payload routed to an artifact. */
export interface RoutedPayload {
  readonly artifact_id: string;
  readonly bytes: number;
}

/** The `args_summary` of a pause: `summary`, or a reference to the artifact the full payload went to. */
export async function routePausePayload(
  run: RunState,
  token: string,
  payload: unknown,
  summary: unknown,
): Promise<unknown> {
  const threshold = run.deps.settings.pausePayloadArtifactBytes;
  const bytes = Buffer.from(JSON.stringify(payload));
  if (bytes.length <= threshold) return summary;
  try {
    const stored = await run.deps.artifacts.write(run.owner, {
      bytes,
      mimeType: 'application/json',
      name: `pause-${token}.json`,
      namespace: 'pause_payload',
      source: `run:${run.taskId}`,
    });
    run.events.emit('pause.payload_artifact_routed', {
      Token: token,
      ArtifactID: stored.artifact_id,
      PayloadBytes: bytes.length,
      ThresholdBytes: threshold,
    });
    const routed: RoutedPayload = { artifact_id: stored.artifact_id, bytes: bytes.length };
    return routed;
  } catch (error) {
    run.log.warn({ err: error, token }, 'pause payload not stored as an artifact; its summary stays inline');
    return summary;
  }
}
