import { z } from 'zod';
import { defineMethod } from '../method-def.ts';
import type { MethodDef, ServiceName } from '../method-def.ts';
import { requestOf, versioned } from '../schemas/common.ts';
import { BudgetUsage, GovernanceTier, LlmOverridesView, LlmProviderPosture } from '../schemas/governance.ts';
import { MetricsSnapshot, RuntimeCounters, RuntimeDrivers, RuntimeHealth, RuntimeInfo } from '../schemas/runtime.ts';
import { onControl } from './routing.ts';

/** RuntimeInfoRequest of the seven posture reads: only `identity` (its tenant may name another tenant). */
export const RuntimeInfoRequest = requestOf({});
export type RuntimeInfoRequest = z.infer<typeof RuntimeInfoRequest>;

/** governance.posture: the tiers and the tenant's budget usage and overrides. */
export const GovernancePostureResponse = versioned({
  tenant: z.string(),
  default_tier: z.string(),
  tiers: z.array(GovernanceTier),
  budgets: z.array(BudgetUsage),
  overrides: LlmOverridesView.optional(),
});
export type GovernancePostureResponse = z.infer<typeof GovernancePostureResponse>;

/** llm.posture: the providers the tenant's runs may use, in failover order. */
export const LLMPostureResponse = versioned({
  tenant: z.string(),
  providers: z.array(LlmProviderPosture),
  failover_order: z.array(z.string()),
  default_provider: z.string().optional(),
});
export type LLMPostureResponse = z.infer<typeof LLMPostureResponse>;

/** The crossing of every posture read: tenant, with admin or console:fleet. */
const POSTURE_CROSSING = { tenant: 'admin_or_fleet' } as const;

const POSTURES: ReadonlyArray<readonly [string, ServiceName, string, z.ZodType, string]> = [
  [
    'governance.posture',
    'governance',
    'GovernancePostureResponse',
    GovernancePostureResponse,
    'Read the governance posture: tiers, budgets, overrides.',
  ],
  [
    'llm.posture',
    'governance',
    'LLMPostureResponse',
    LLMPostureResponse,
    'Read the LLM posture: providers and failover order.',
  ],
  ['metrics.snapshot', 'gateway', 'MetricsSnapshot', MetricsSnapshot, 'Read a snapshot of the runtime metrics.'],
  ['runtime.counters', 'gateway', 'RuntimeCounters', RuntimeCounters, 'Read per-service, per-method request counters.'],
  ['runtime.drivers', 'gateway', 'RuntimeDrivers', RuntimeDrivers, 'List the drivers in use (store, blob, bus, LLM).'],
  ['runtime.health', 'gateway', 'RuntimeHealth', RuntimeHealth, 'Read the health of the runtime and of every service.'],
  [
    'runtime.info',
    'gateway',
    'RuntimeInfo',
    RuntimeInfo,
    'Read the instance, build and protocol version, and the live capabilities.',
  ],
];

/** The seven posture reads (R, X): `/v1/control/<method>`. */
export const POSTURE_METHODS: readonly MethodDef[] = POSTURES.map(([name, service, responseName, response, summary]) =>
  defineMethod({
    name,
    family: 'posture',
    ...onControl(name),
    service,
    auth: ['R', 'X'],
    crossing: POSTURE_CROSSING,
    requestName: 'RuntimeInfoRequest',
    responseName,
    request: RuntimeInfoRequest,
    response,
    summary,
  }),
);
