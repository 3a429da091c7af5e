import type { EventDef } from '../event-def.ts';
import { eventsOf, int, str } from './fields.ts';

const control = eventsOf('control');

/** Control and pause events (safe). */
export const CONTROL_EVENTS: readonly EventDef[] = [
  control('control.received', { Type: str(), Outcome: str(), Err: str() }, 'A steering control reached the run.'),
  control('control.applied', { Type: str(), Outcome: str(), Err: str() }, 'A steering control was applied.'),
  control('control.rejected', { Type: str(), Reason: str(), CallerScope: str() }, 'A steering control was rejected.'),
  control('pause.requested', { Token: str(), Reason: str() }, 'The run parks at the next planner-step boundary.'),
  control(
    'pause.resumed',
    { Token: str(), Reason: str(), Decision: str().describe('decision value: resume, approve or reject') },
    'The pause advanced.',
  ),
  control(
    'pause.payload_artifact_routed',
    { Token: str(), ArtifactID: str(), PayloadBytes: int(), ThresholdBytes: int() },
    'A pause payload over the threshold was routed to an artifact.',
  ),
];
