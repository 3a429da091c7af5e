import type { EventDef } from '../event-def.ts';
import { AGENT_EVENTS } from './agent.ts';
import { AUDIT_EVENTS } from './audit.ts';
import { CONTROL_EVENTS } from './control.ts';
import { GOVERNANCE_EVENTS } from './governance.ts';
import { LLM_EVENTS } from './llm.ts';
import { MCP_EVENTS } from './mcp.ts';
import { MEMORY_EVENTS } from './memory.ts';
import { NOTIFICATION_EVENTS } from './notification.ts';
import { PLANNER_EVENTS } from './planner.ts';
import { SESSION_EVENTS } from './session.ts';
import { TASK_EVENTS } from './task.ts';
import { TOOL_EVENTS } from './tool.ts';

/** The canonical registry: all 146 event types, in the spec's order. */
export const EVENTS: readonly EventDef[] = Object.freeze([
  ...TASK_EVENTS,
  ...CONTROL_EVENTS,
  ...PLANNER_EVENTS,
  ...LLM_EVENTS,
  ...TOOL_EVENTS,
  ...SESSION_EVENTS,
  ...AGENT_EVENTS,
  ...MCP_EVENTS,
  ...GOVERNANCE_EVENTS,
  ...MEMORY_EVENTS,
  ...AUDIT_EVENTS,
  ...NOTIFICATION_EVENTS,
]);

const BY_TYPE: ReadonlyMap<string, EventDef> = (() => {
  const map = new Map<string, EventDef>();
  for (const event of EVENTS) {
    // A duplicate is a registry bug: fail at import rather than validate ambiguously.
    if (map.has(event.type)) throw new Error(`duplicate event type in the registry: ${event.type}`);
    map.set(event.type, event);
  }
  return map;
})();

/** The registry row of an event type; `undefined` for a type outside the registry. */
export function getEvent(type: string): EventDef | undefined {
  return BY_TYPE.get(type);
}
