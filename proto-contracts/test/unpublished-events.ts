/**
 * Event types of the registry that no production code publishes yet, each with
 * the docs/decisions.md heading that explains why and the issue that will
 * publish it (`null`: no issue plans a publisher). `event-publishers.test.ts`
 * holds this table against the sources: a type published since must leave it.
 */
export interface UnpublishedEvent {
  readonly reason: string;
  /** The `### ` heading in docs/decisions.md that records the decision. */
  readonly decision: string;
  readonly issue: number | null;
}

const WITHOUT_PUBLISHER = 'Events without a publisher yet';

const group = (
  issue: number | null,
  reason: string,
  types: readonly string[],
  decision = WITHOUT_PUBLISHER,
): [string, UnpublishedEvent][] => types.map((type) => [type, { reason, decision, issue }]);

/** type → why it has no publisher. */
export const UNPUBLISHED_EVENTS: ReadonlyMap<string, UnpublishedEvent> = new Map([
  ...group(null, 'the spec registers it with no production emit path (reserved)', [
    'planner.error',
    'planner.finish',
    'runtime.warning',
  ]),
  ...group(null, "pausing an agent (agents.pause) holds its runs; its MCP connections stay with agent-registry's pool, which pauses none per agent", [
    'mcp.connection.paused',
    'mcp.connection.resumed',
  ]),
  ...group(null, 'no development-time draft workspace: agents are edited through the agent_config.* setters', [
    'dev.draft.created',
    'dev.draft.discarded',
    'dev.draft.previewed',
    'dev.draft.saved',
    'dev.draft.updated',
  ]),
  ...group(null, 'no notifier derives notifications from their origin events; clients subscribe to the origin events', [
    'notification.auth_required',
    'notification.governance_budget_exceeded',
    'notification.identity_rejected',
    'notification.pause_requested',
    'notification.task_completed',
    'notification.task_failed',
    'notification.task_group_cancelled',
    'notification.task_group_resolved',
    'notification.tool_approval_requested',
  ]),
  ...group(null, 'NATS carries events between nodes; no event wraps a bus envelope', ['distributed.bus_envelope']),
]);

/**
 * Types published through a template literal (`mcp.connection.${event}`): the
 * file that publishes them and the template it must still contain.
 */
export const TEMPLATE_PUBLISHERS: readonly { types: readonly string[]; file: string; template: string }[] = [
  {
    types: [
      'mcp.connection.pending',
      'mcp.connection.failed',
      'mcp.connection.reattached',
      'mcp.connection.reattach_failed',
    ],
    file: 'services/agent-registry/src/mcp/pool.ts',
    template: '`mcp.connection.${event}`',
  },
];
