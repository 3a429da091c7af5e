import { z } from 'zod';
import { defineMethod } from '../method-def.ts';
import type { MethodDef } from '../method-def.ts';
import { Timestamp, filterList, pageOf, pageRequest, record, requestOf, timeWindow } from '../schemas/common.ts';
import {
  ApprovalPolicy,
  StatsWindow,
  Tool,
  ToolContentStatsEntry,
  ToolManifest,
  ToolMetricsEntry,
} from '../schemas/tool.ts';
import { onFamily } from './routing.ts';

/** A tool name. */
const ToolName = z.string().min(1).max(256);

/** tools.content_stats: content volumes per tool, optionally for one tool and a window. */
export const ToolContentStatsRequest = requestOf({ name: ToolName.optional(), ...timeWindow });
export type ToolContentStatsRequest = z.infer<typeof ToolContentStatsRequest>;

/** Content volumes per tool. */
export const ToolContentStats = record({ ...StatsWindow, items: z.array(ToolContentStatsEntry) });
export type ToolContentStats = z.infer<typeof ToolContentStats>;

/** tools.describe: the full manifest of one tool. */
export const ToolDescribeRequest = requestOf({ name: ToolName });
export type ToolDescribeRequest = z.infer<typeof ToolDescribeRequest>;

/** tools.get: one tool. */
export const ToolGetRequest = requestOf({ name: ToolName });
export type ToolGetRequest = z.infer<typeof ToolGetRequest>;

/** tools.list: tools visible to the caller. */
export const ToolListRequest = requestOf({
  filter: z
    .strictObject({
      transport: z.string().min(1).optional(),
      source: z.string().min(1).optional(),
      tags: filterList(z.string().min(1)).optional(),
      text: z.string().min(1).max(1024).optional(),
    })
    .optional(),
  ...pageRequest,
});
export type ToolListRequest = z.infer<typeof ToolListRequest>;

/** A page of tools, by name. */
export const ToolListResponse = record({ ...pageOf(Tool) });
export type ToolListResponse = z.infer<typeof ToolListResponse>;

/** tools.metrics: call metrics per tool, optionally for one tool and a window. */
export const ToolMetricsRequest = requestOf({ name: ToolName.optional(), ...timeWindow });
export type ToolMetricsRequest = z.infer<typeof ToolMetricsRequest>;

/** Call metrics per tool. */
export const ToolMetrics = record({ ...StatsWindow, items: z.array(ToolMetricsEntry) });
export type ToolMetrics = z.infer<typeof ToolMetrics>;

/** tools.revoke_oauth (admin): revoke the OAuth credentials held for a tool source. */
export const ToolRevokeOAuthRequest = requestOf({
  source: z.string().min(1).max(256).describe('the tool source (MCP server id) whose grants to revoke'),
  binding_scope: z.enum(['tenant', 'user', 'session']).optional().describe('absent: every binding scope'),
});
export type ToolRevokeOAuthRequest = z.infer<typeof ToolRevokeOAuthRequest>;

/** How many credentials were revoked. */
export const ToolRevokeOAuthResponse = record({
  source: z.string(),
  revoked: z.int().nonnegative(),
  revoked_at: Timestamp,
});
export type ToolRevokeOAuthResponse = z.infer<typeof ToolRevokeOAuthResponse>;

/** tools.set_approval_policy (admin). */
export const ToolSetApprovalPolicyRequest = requestOf({ name: ToolName, policy: ApprovalPolicy });
export type ToolSetApprovalPolicyRequest = z.infer<typeof ToolSetApprovalPolicyRequest>;

/** The tool with its new policy. */
export const ToolSetApprovalPolicyResponse = record({ tool: Tool });
export type ToolSetApprovalPolicyResponse = z.infer<typeof ToolSetApprovalPolicyResponse>;

const row = (
  name: string,
  auth: MethodDef['auth'],
  requestName: string,
  responseName: string,
  request: z.ZodType,
  response: z.ZodType,
  summary: string,
): MethodDef =>
  defineMethod({
    name,
    family: 'tools',
    ...onFamily(name),
    service: 'agent-registry',
    auth,
    requestName,
    responseName,
    request,
    response,
    summary,
  });

/** Tool methods (agent-registry): `/v1/tools/<name>`. */
export const TOOL_METHODS: readonly MethodDef[] = [
  row(
    'tools.content_stats',
    ['R'],
    'ToolContentStatsRequest',
    'ToolContentStats',
    ToolContentStatsRequest,
    ToolContentStats,
    'Content volumes per tool.',
  ),
  row(
    'tools.describe',
    ['R'],
    'ToolDescribeRequest',
    'ToolManifest',
    ToolDescribeRequest,
    ToolManifest,
    "Read a tool's full manifest.",
  ),
  row('tools.get', ['R'], 'ToolGetRequest', 'Tool', ToolGetRequest, Tool, 'Read one tool.'),
  row(
    'tools.list',
    ['R'],
    'ToolListRequest',
    'ToolListResponse',
    ToolListRequest,
    ToolListResponse,
    'List the tools visible to the caller.',
  ),
  row(
    'tools.metrics',
    ['R'],
    'ToolMetricsRequest',
    'ToolMetrics',
    ToolMetricsRequest,
    ToolMetrics,
    'Call metrics per tool.',
  ),
  row(
    'tools.revoke_oauth',
    ['M', 'A'],
    'ToolRevokeOAuthRequest',
    'ToolRevokeOAuthResponse',
    ToolRevokeOAuthRequest,
    ToolRevokeOAuthResponse,
    'Revoke the OAuth credentials held for a tool source (admin).',
  ),
  row(
    'tools.set_approval_policy',
    ['M', 'A'],
    'ToolSetApprovalPolicyRequest',
    'ToolSetApprovalPolicyResponse',
    ToolSetApprovalPolicyRequest,
    ToolSetApprovalPolicyResponse,
    "Set a tool's human-approval policy (admin).",
  ),
];
