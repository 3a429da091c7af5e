import type { RepairCounter } from '../store/run-state.repository.ts';

/**
 * The planner's repair of invalid tool calls, pure: a call whose arguments
 * its JSON Schema refuses, or that names no tool of the run, is fed back to
 * the model with guidance, in tiers; past the bound the run gives up.
 * Members a schema forbids (`additionalProperties: false`) are dropped
 * before validation instead: that is not a repair.
 */

/** `planner.repair_guidance_injected` Tier: the validation error alone, then with the tool's schema (or the tool list). */
export const REPAIR_TIERS = { error: 'error', schema: 'schema' } as const;
export type RepairTier = (typeof REPAIR_TIERS)[keyof typeof REPAIR_TIERS];

/** `planner.repair_guidance_injected` Counter: the count that the bound applies to. */
export const REPAIR_COUNTER = 'consecutive_arg_failures';

/** Longest schema text put into guidance, in characters. */
const MAX_SCHEMA_CHARS = 4_096;
/** Most reasons kept for `planner.repair_exhausted`. */
const MAX_REASONS = 10;

/** The counter after one more invalid call. */
export function countRepair(counter: RepairCounter | undefined, reason: string): RepairCounter {
  const reasons = [...(counter?.reasons ?? []), reason].slice(-MAX_REASONS);
  return { consecutive: (counter?.consecutive ?? 0) + 1, total: (counter?.total ?? 0) + 1, reasons };
}

/** The counter after a valid call: the consecutive count starts again. */
export function resetRepair(counter: RepairCounter | undefined): RepairCounter | undefined {
  return counter === undefined || counter.consecutive === 0 ? counter : { ...counter, consecutive: 0, reasons: [] };
}

/** The tier of the `count`th consecutive repair. */
export function repairTier(count: number): RepairTier {
  return count <= 1 ? REPAIR_TIERS.error : REPAIR_TIERS.schema;
}

/**
 * The guidance appended to the validation error in the tool message: what
 * to do, and at the `schema` tier the tool's JSON Schema (an unknown tool:
 * the names the run has).
 */
export function repairGuidance(
  tier: RepairTier,
  tool: string,
  schema: Readonly<Record<string, unknown>> | undefined,
  toolNames: readonly string[],
): string {
  if (schema === undefined) {
    const names = toolNames.join(', ');
    return tier === REPAIR_TIERS.error
      ? `There is no tool named ${tool}. Call one of the declared tools, or answer.`
      : `There is no tool named ${tool}. The tools are: ${names}. Call one of them, or answer.`;
  }
  if (tier === REPAIR_TIERS.error) return `Call ${tool} again with arguments that match its schema.`;
  const text = JSON.stringify(schema);
  const shown = text.length > MAX_SCHEMA_CHARS ? `${text.slice(0, MAX_SCHEMA_CHARS)}…` : text;
  return `Call ${tool} again with a JSON object that matches this schema exactly: ${shown}`;
}

/**
 * The arguments without the members the schema forbids (`additionalProperties: false`
 * at the top level with declared `properties`), and the names dropped, sorted.
 */
export function dropExtraFields(
  args: Record<string, unknown>,
  schema: Readonly<Record<string, unknown>> | undefined,
): { args: Record<string, unknown>; dropped: string[] } {
  const properties = schema?.properties;
  if (schema?.additionalProperties !== false || typeof properties !== 'object' || properties === null) {
    return { args, dropped: [] };
  }
  const declared = new Set(Object.keys(properties));
  const dropped = Object.keys(args)
    .filter((key) => !declared.has(key))
    .sort();
  if (dropped.length === 0) return { args, dropped };
  return { args: Object.fromEntries(Object.entries(args).filter(([key]) => declared.has(key))), dropped };
}
