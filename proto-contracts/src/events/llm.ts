import type { EventDef } from '../event-def.ts';
import { bool, eventsOf, float, int, opaque, quad, str, ts } from './fields.ts';

const llm = eventsOf('llm');

/** LLM events (safe). */
export const LLM_EVENTS: readonly EventDef[] = [
  llm(
    'llm.completion.chunk',
    { Identity: quad(), TaskID: str(), RunID: str(), Delta: str(), Done: bool(), Kind: str(), OccurredAt: ts() },
    'A streamed piece of an LLM completion.',
  ),
  llm(
    'llm.context_leak',
    { Identity: quad(), Model: str(), LeakSite: str(), SizeBytes: int(), Threshold: int(), OccurredAt: ts() },
    'Context over a threshold was about to leak into a prompt.',
  ),
  llm(
    'llm.context_window_exceeded',
    {
      Identity: quad(),
      Model: str(),
      EstimatedTokens: int(),
      ContextWindowTokens: int(),
      ContextWindowReserve: float(),
      OccurredAt: ts(),
    },
    "A prompt exceeded the model's context window.",
  ),
  llm(
    'llm.cost.recorded',
    {
      Identity: quad(),
      Model: str(),
      Cost: opaque('cost object'),
      Usage: opaque('usage object'),
      ContextWindowTokens: int(),
      OccurredAt: ts(),
    },
    'The cost of an LLM call was recorded.',
  ),
  llm(
    'llm.image.materialized',
    { Identity: quad(), Model: str(), ArtifactRef: str(), MIME: str(), SizeBytes: int(), OccurredAt: ts() },
    'An image produced by the model was stored as an artifact.',
  ),
  llm(
    'llm.mode_downgraded',
    {
      Identity: quad(),
      Model: str(),
      FromMode: str().describe('output mode'),
      ToMode: str().describe('output mode'),
      From: str().describe('response format kind'),
      To: str().describe('response format kind'),
      Reason: str(),
      OccurredAt: ts(),
    },
    'The output mode or response format was downgraded for the model.',
  ),
  llm(
    'llm.posture_read_admin',
    { Actor: quad(), RequestedTenant: str() },
    "An admin or fleet reader read another tenant's LLM posture.",
  ),
  llm(
    'llm.provider_credential_fetched',
    {
      RuntimePrincipal: str(),
      Broker: str(),
      Provider: str(),
      KeyFingerprint: str(),
      Phase: str(),
      Outcome: str(),
      OccurredAt: ts(),
    },
    'A provider credential was fetched through a broker.',
  ),
  llm(
    'llm.provider_file.uploaded',
    {
      Identity: quad(),
      Provider: str(),
      Model: str(),
      ArtifactRef: str(),
      MIME: str(),
      Modality: str(),
      FileID: str(),
      SizeBytes: int(),
      OccurredAt: ts(),
    },
    'An artifact was uploaded to the provider as a native file.',
  ),
  llm(
    'llm.retry_with_feedback',
    { Identity: quad(), Model: str(), Attempt: int(), MaxRetries: int(), Reason: str(), OccurredAt: ts() },
    'An LLM call is retried with feedback.',
  ),
];
