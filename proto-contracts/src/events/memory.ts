import type { EventDef } from '../event-def.ts';
import { bool, eventsOf, int, str } from './fields.ts';

const memory = eventsOf('memory');
const origin = () => str().describe('origin');
const scope = () => str().describe('scope');

/** Memory, skill and artifact events (safe). */
export const MEMORY_EVENTS: readonly EventDef[] = [
  memory(
    'memory.caller_block_admitted',
    { bytes: int(), tier: str(), key: str() },
    'A caller memory block was admitted into a prompt (lowercase keys).',
  ),
  memory(
    'memory.health_changed',
    { PriorHealth: str().describe('health value'), NewHealth: str().describe('health value'), Reason: str() },
    'The memory service health changed.',
  ),
  memory(
    'memory.identity_rejected',
    { Operation: str(), Reason: str() },
    'A memory operation was refused for its identity.',
  ),
  memory('memory.item_put', { Operation: str(), Key: str() }, 'A memory item was written.'),
  memory('memory.item_deleted', { Operation: str(), Key: str() }, 'A memory item was deleted.'),
  memory('memory.recovery_dropped', { Reason: str() }, 'Memory recovery dropped data.'),
  memory('skill.deleted', { Name: str() }, 'A skill was deleted.'),
  memory(
    'skill.identity_rejected',
    { Operation: str(), Reason: str() },
    'A skill operation was refused for its identity.',
  ),
  memory(
    'skill.pack_overwrite_refused',
    { Name: str(), ExistingOrigin: origin(), IncomingOrigin: origin() },
    'A skill pack would have overwritten a skill of another origin.',
  ),
  memory(
    'skill.proposed',
    {
      Name: str(),
      Origin: origin(),
      Scope: scope(),
      OriginRef: str(),
      ContentHash: str(),
      Result: str(),
      Reason: str(),
      RedactedTitleExcerpt: str(),
      RedactedTriggerExcerpt: str(),
      Promotion: bool(),
    },
    'A skill was proposed.',
  ),
  memory(
    'skill.search_executed',
    { QueryHash: str(), Path: str(), Limit: int(), ResultN: int() },
    'A skill search ran.',
  ),
  memory(
    'skill.upserted',
    { Name: str(), Origin: origin(), Scope: scope(), ContentHash: str(), Idempotent: bool() },
    'A skill was created or replaced (Idempotent: nothing changed).',
  ),
  memory(
    'artifacts.uploaded',
    {
      artifact_id: str(),
      mime_type: str().optional(),
      size_bytes: int(),
      source: str().optional(),
      namespace: str().optional(),
    },
    'An artifact was stored (lowercase keys).',
  ),
  memory('artifacts.deleted', { artifact_id: str() }, 'An artifact was deleted (lowercase key).'),
];
