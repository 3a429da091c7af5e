import { defineEvent } from '../event-def.ts';
import type { EventDef } from '../event-def.ts';
import { bool, epochMs, eventsOf, int, list, map, opaque, payload, quad, safeEvent, str, ts } from './fields.ts';

const planner = eventsOf('planner');

/** Planner and run events (safe, except runtime.error, which the spec marks redacted). */
export const PLANNER_EVENTS: readonly EventDef[] = [
  planner(
    'planner.decision',
    {
      Identity: quad(),
      DecisionKind: str(),
      Tool: str(),
      ReasoningChars: int(),
      ReasoningTrace: str(),
      OccurredAt: ts(),
    },
    'The planner decided the next action (DecisionKind Finish for a terminal decision).',
  ),
  planner(
    'planner.action_extra_field_dropped',
    { Identity: quad(), Field: str(), OccurredAt: ts() },
    'An unknown field of a planner action was dropped.',
  ),
  planner(
    'planner.max_steps_exceeded',
    { Identity: quad(), MaxSteps: int(), StepsObserved: int(), LastTool: str(), OccurredAt: ts() },
    'The run hit its maximum number of planner steps.',
  ),
  planner(
    'planner.repair_exhausted',
    { Identity: quad(), Attempts: int(), ConsecutiveArgFailures: int(), Reasons: list(str()), OccurredAt: ts() },
    'Repairing invalid tool arguments gave up.',
  ),
  planner(
    'planner.repair_guidance_injected',
    { Identity: quad(), Tier: str(), Counter: str(), Count: int(), OccurredAt: ts() },
    'Repair guidance was injected into the prompt.',
  ),
  planner(
    'planner.tool_declaration_collision',
    { Identity: quad(), DeclaredName: str(), DeclaredTool: str(), DroppedTool: str(), OccurredAt: ts() },
    'Two tools declared the same name; one was dropped.',
  ),
  safeEvent(
    'planner',
    'planner.error',
    opaque('reserved payload'),
    'Registered, no emit path (failures surface as task.failed).',
    true,
  ),
  safeEvent(
    'planner',
    'planner.finish',
    opaque('reserved payload'),
    'Registered, no emit path (see planner.decision Finish).',
    true,
  ),
  planner(
    'run.hook_dispatched',
    { Tool: str(), Outcome: str(), DurationMS: int(), TranscriptBytes: int(), EntryCount: int() },
    'The completion hook ran.',
  ),
  planner('run.hook_failed', { Tool: str(), Outcome: str(), ErrorClass: str() }, 'The completion hook failed.'),
  planner(
    'runs.overrides_set',
    {
      Actor: quad(),
      SessionID: str(),
      SetReasoningEffort: bool(),
      SetTemperature: bool(),
      SetMaxTokens: bool(),
      SetSystemPrompt: bool(),
      SetExtraInstructions: bool(),
      SetModel: bool(),
      OccurredAt: ts(),
    },
    'Run overrides were set for a session (which members were set).',
  ),
  defineEvent({
    type: 'runtime.error',
    group: 'planner',
    class: 'redacted',
    payload: payload({ Message: str(), Fields: map() }),
    summary: 'A runtime error (redacted class: delivered through the redactor).',
  }),
  planner(
    'runtime.run_cancelled',
    { RunID: str(), CancelledAt: epochMs(), DroppedEnvelopeCount: int() },
    'The runtime cancelled a run and dropped its pending envelopes.',
  ),
  safeEvent(
    'planner',
    'runtime.warning',
    opaque('reserved payload'),
    'Reserved; published only by the conformance suite as a fixture.',
    true,
  ),
  planner(
    'trajectory.compressed',
    { Identity: quad(), StepsBefore: int(), StepsAfter: int(), TokenEstimate: int(), OccurredAt: ts() },
    'The trajectory was compressed to fit the context window.',
  ),
  planner(
    'trajectory.compression_failed',
    {
      Identity: quad(),
      StepsObserved: int(),
      TokenEstimate: int(),
      ErrorCode: str(),
      ErrorMessage: str(),
      OccurredAt: ts(),
    },
    'Compressing the trajectory failed.',
  ),
];
