import type { EventDef } from '../event-def.ts';
import { bool, eventsOf, int, list, opaque, quad, str, ts } from './fields.ts';

const mcp = eventsOf('mcp');

const connection = (type: string, summary: string) =>
  mcp(
    type,
    {
      Author: quad(),
      AgentID: str(),
      ServerID: str(),
      Transport: str(),
      State: str(),
      RevisionID: str(),
      PauseToken: str(),
      Reason: str(),
      OccurredAt: ts(),
    },
    summary,
  );

const connectionChange = (type: string, summary: string) =>
  mcp(type, { Author: quad(), AgentID: str(), ServerID: str(), RevisionID: str(), OccurredAt: ts() }, summary);

/** MCP events (safe). */
export const MCP_EVENTS: readonly EventDef[] = [
  connection('mcp.connection.added', 'An MCP connection was added.'),
  connection('mcp.connection.auth_required', 'An MCP connection needs authorization.'),
  connection('mcp.connection.failed', 'An MCP connection failed.'),
  connection('mcp.connection.pending', 'An MCP connection is pending.'),
  connection('mcp.connection.reattach_failed', 'Reattaching an MCP connection failed.'),
  connection('mcp.connection.reattached', 'An MCP connection was reattached.'),
  mcp(
    'mcp.connection.discovery_origins_set',
    {
      Author: quad(),
      AgentID: str(),
      ServerID: str(),
      RevisionID: str(),
      Granted: list(str()),
      Revoked: list(str()),
      OccurredAt: ts(),
    },
    'MCP discovery origins were set.',
  ),
  connectionChange('mcp.connection.paused', 'An MCP connection was paused.'),
  connectionChange('mcp.connection.removed', 'An MCP connection was removed.'),
  connectionChange('mcp.connection.resumed', 'An MCP connection was resumed.'),
  mcp(
    'mcp.app_available',
    {
      Identity: quad(),
      ServerID: str(),
      ToolCallID: str(),
      ToolName: str(),
      ResourceURI: str(),
      DisplayMode: str(),
      RawHTMLTrusted: bool(),
      OccurredAt: ts(),
    },
    'An MCP app UI is available for a tool call.',
  ),
  mcp(
    'mcp.artifact_egressed',
    { Identity: quad(), ServerID: str(), ToolName: str(), Records: list(opaque('egress record')), OccurredAt: ts() },
    'Artifacts were sent to an MCP server.',
  ),
  mcp(
    'mcp.raw_html_trust_toggled',
    { Actor: quad(), ServerName: str(), Trusted: bool(), OccurredAt: ts() },
    "Trust of an MCP server's raw HTML changed.",
  ),
  mcp(
    'mcp.resource_offloaded',
    { Identity: quad(), ArtifactID: str(), Source: str(), SizeBytes: int(), OccurredAt: ts() },
    'A large MCP resource was offloaded to an artifact.',
  ),
  mcp(
    'mcp.resource_updated',
    { Identity: quad(), Source: str(), URI: str(), OccurredAt: ts() },
    'An MCP resource changed.',
  ),
];
