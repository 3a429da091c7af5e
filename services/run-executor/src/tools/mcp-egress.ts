import type { CatalogueTool, ToolExposure } from '@ars/contracts';
import { resolveArtifactArgs } from './artifact-egress.ts';
import type { ArtifactEgressLimits } from './artifact-egress.ts';
import type { ArtifactIo } from './artifact-io.ts';
import type { ToolDefinition } from './tool.ts';

/**
 * A run's MCP tools with artifact egress (`artifact-egress.ts`): before each
 * attempt, the arguments' `artifact://<id>` references are checked against
 * the egress policy and replaced by the artifacts' contents; one
 * `mcp.artifact_egressed` per tool call that sends at least one artifact,
 * published as the first attempt that sends them goes out: a retry does not
 * publish it again, and under its fixed event id a redelivered run's copy
 * is dropped by the stream's duplicate window. A call without references
 * is passed through untouched.
 */

/** Where a call's artifacts would go. */
export interface EgressTarget {
  readonly serverId: string;
  /** The tool's exposed name (`<server_id>__<tool>`). */
  readonly tool: string;
}

/** Why artifacts may not go to `target`; undefined: they may. */
export type ArtifactEgressPolicy = (target: EgressTarget) => string | undefined;

/**
 * The agent's policy over its MCP servers, as `mcp.servers.policy` states it:
 * artifacts go only to a server that the run's source disables leave on, and
 * only through a tool of the agent's `allowed_tools` (its `tool_exposure`).
 * The planner can call no other tool; this also holds for the completion
 * hook, which is looked up among all of the run's tools.
 */
export function agentEgressPolicy(agent: {
  readonly toolExposure?: ToolExposure | undefined;
  readonly sourceDisables: readonly string[];
}): ArtifactEgressPolicy {
  const disabled = new Set(agent.sourceDisables);
  const exposure = agent.toolExposure;
  const listed = new Set(exposure?.tools ?? []);
  return ({ serverId, tool }) => {
    if (disabled.has(serverId)) return `the run's sources disable server ${serverId}`;
    if (exposure === undefined || exposure.mode === 'all') return undefined;
    const allowed = exposure.mode === 'allow_list' ? listed.has(tool) : !listed.has(tool);
    return allowed ? undefined : `${tool} is not among the agent's allowed tools`;
  };
}

/** The run an egress belongs to. */
export interface EgressRun {
  readonly taskId: string;
  readonly artifacts: ArtifactIo;
  readonly events: {
    readonly quad: { readonly tenant: string; readonly user: string; readonly session: string; readonly run: string };
    emit(type: string, payload: Record<string, unknown>, eventId?: string): void;
  };
  readonly policy: ArtifactEgressPolicy;
  /** @default ARTIFACT_EGRESS_LIMITS */
  readonly limits?: ArtifactEgressLimits;
}

/** The fixed id of a call's `mcp.artifact_egressed`. */
export function egressEventId(taskId: string, callId: string): string {
  return `${taskId}:artifact_egressed:${callId}`;
}

/** `definitions` (of the catalogue's `tools`) with their arguments' artifact references resolved before each attempt. */
export function withArtifactEgress(
  definitions: readonly ToolDefinition[],
  tools: readonly CatalogueTool[],
  run: EgressRun,
): ToolDefinition[] {
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const published = new Set<string>();
  return definitions.map((definition): ToolDefinition => {
    const tool = byName.get(definition.name);
    if (tool === undefined) return definition;
    const serverId = tool.server_id;
    // The policy is the claim's (its effective configuration): asked once per tool.
    const refusal = run.policy({ serverId, tool: tool.name });
    return {
      ...definition,
      async run(args, context) {
        const resolved = await resolveArtifactArgs(
          args,
          { owner: context.owner, artifacts: run.artifacts, serverId, refusal },
          run.limits,
        );
        if (resolved.records.length === 0) return definition.run(args, context);
        if (!published.has(context.callId)) {
          published.add(context.callId);
          run.events.emit(
            'mcp.artifact_egressed',
            {
              Identity: run.events.quad,
              ServerID: serverId,
              ToolName: tool.server_tool,
              Records: resolved.records,
              OccurredAt: new Date().toISOString(),
            },
            egressEventId(run.taskId, context.callId),
          );
        }
        return definition.run(resolved.args, context);
      },
    };
  });
}
