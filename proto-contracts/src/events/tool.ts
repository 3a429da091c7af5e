import type { EventDef } from '../event-def.ts';
import { any, bool, eventsOf, int, list, opaque, quad, str, ts } from './fields.ts';

const tool = eventsOf('tool');
const transport = () => str().describe('transport kind');
const errorClass = () => str().describe('error class');

/** Tool events (safe). */
export const TOOL_EVENTS: readonly EventDef[] = [
  tool(
    'tool.invoked',
    { Identity: quad(), ToolName: str(), Transport: transport(), StartedAt: ts() },
    'A tool call started.',
  ),
  tool(
    'tool.completed',
    { Identity: quad(), ToolName: str(), Transport: transport(), Attempts: int(), DurationMS: int() },
    'A tool call succeeded.',
  ),
  tool(
    'tool.failed',
    {
      Identity: quad(),
      ToolName: str(),
      Transport: transport(),
      Attempts: int(),
      ErrorClass: errorClass(),
      ErrorMessage: str(),
      ScopeShortfall: opaque('scope shortfall').optional(),
    },
    'A tool call failed.',
  ),
  tool(
    'tool.invalid_args',
    { Identity: quad(), ToolName: str(), Transport: transport(), ValidationError: str() },
    'A tool call had invalid arguments.',
  ),
  tool(
    'tool.policy_exhausted',
    {
      Identity: quad(),
      ToolName: str(),
      Transport: transport(),
      Attempts: int(),
      LastClass: errorClass(),
      LastError: str(),
    },
    "A tool call's retry policy was exhausted.",
  ),
  tool(
    'tool.approval_requested',
    { Tool: str(), PauseToken: str(), Reason: str(), Tags: list(str()), ArgsSummary: any() },
    'A tool call awaits human approval.',
  ),
  tool('tool.approved', { Tool: str(), PauseToken: str(), ApproverReason: str() }, 'A tool call was approved.'),
  tool('tool.rejected', { Tool: str(), PauseToken: str(), Reason: str() }, 'A tool call was rejected.'),
  tool(
    'tool.auth_required',
    {
      Source: str(),
      SourceName: str(),
      BindingScope: str(),
      AuthorizeURL: str(),
      State: str(),
      PauseToken: str(),
      Scopes: list(str()),
    },
    'A tool needs the user to authorize (OAuth).',
  ),
  tool(
    'tool.auth_completed',
    { Source: str(), BindingScope: str(), State: str(), PauseToken: str() },
    'Tool authorization completed.',
  ),
  tool(
    'tool.credential_exchanged',
    {
      Source: str(),
      BindingScope: str(),
      SubjectKind: str(),
      BrokerHost: str(),
      GrantedScopes: list(str()),
      ExpiresAt: ts(),
      AudienceVerified: bool(),
      ActorAsserted: bool(),
    },
    'A tool credential was exchanged through a broker.',
  ),
  tool(
    'tool.provider_credential_fetch_failed',
    { Provider: str(), Endpoint: str(), Reason: str() },
    'Fetching a tool provider credential failed.',
  ),
  tool(
    'tool.provider_credential_fetched',
    { Provider: str(), Endpoint: str(), FormatVersion: int(), ExpiresAt: ts() },
    'A tool provider credential was fetched.',
  ),
];
