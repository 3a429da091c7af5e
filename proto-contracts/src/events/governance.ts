import type { EventDef } from '../event-def.ts';
import { bool, dur, eventsOf, float, int, list, quad, str, ts } from './fields.ts';

const governance = eventsOf('governance');

/** Governance and flow events (safe). */
export const GOVERNANCE_EVENTS: readonly EventDef[] = [
  governance(
    'governance.budget_exceeded',
    {
      Identity: quad(),
      Tier: str(),
      Model: str(),
      TotalCost: float(),
      Ceiling: float(),
      Currency: str(),
      OccurredAt: ts(),
    },
    'A budget ceiling was crossed; further LLM calls are refused.',
  ),
  governance(
    'governance.failover',
    { Identity: quad(), FromProvider: str(), ToProvider: str(), HopIndex: int(), AccumCostUSD: float(), Reason: str() },
    'An LLM call failed over to another provider.',
  ),
  governance(
    'governance.key_rotated',
    { Actor: quad(), Provider: str(), Fingerprint: str(), OccurredAt: ts() },
    'A provider key was rotated (fingerprint only).',
  ),
  governance(
    'governance.maxtokens_exceeded',
    { Identity: quad(), Tier: str(), Model: str(), Requested: int(), Cap: int(), OccurredAt: ts() },
    'A request asked for more tokens than the cap.',
  ),
  governance(
    'governance.posture_read_admin',
    { Actor: quad(), RequestedTenant: str(), OccurredAt: ts() },
    "An admin or fleet reader read another tenant's governance posture.",
  ),
  governance(
    'governance.posture_set',
    {
      Actor: quad(),
      DefaultTierBefore: str(),
      DefaultTierAfter: str(),
      TierCountBefore: int(),
      TierCountAfter: int(),
      TiersBefore: list(str()),
      TiersAfter: list(str()),
      OccurredAt: ts(),
    },
    'The governance posture was set.',
  ),
  governance(
    'governance.rate_limited',
    {
      Identity: quad(),
      Tier: str(),
      Model: str(),
      Requested: int(),
      Available: int(),
      Capacity: int(),
      RefillTokens: int(),
      RefillEvery: dur(),
      OccurredAt: ts(),
    },
    'A rate limit refused or delayed an LLM call.',
  ),
  governance(
    'governance.tenant_overrides_set',
    {
      Actor: quad(),
      Tenant: str(),
      Model: str(),
      SetModel: bool(),
      SetExtraInstructions: bool(),
      SetTemperature: bool(),
      SetMaxTokens: bool(),
      SetReasoningEffort: bool(),
      OccurredAt: ts(),
    },
    "A tenant's LLM overrides were set.",
  ),
  governance('flow.budget_exceeded', { FlowName: str(), Axis: str() }, 'A flow exceeded its budget.'),
  governance('flows.page_viewed', { Method: str(), FlowID: str(), AdminScoped: bool() }, 'A flows page was read.'),
  governance('flows.run_invoked', { FlowID: str(), RunID: str() }, 'A flow was invoked.'),
];
