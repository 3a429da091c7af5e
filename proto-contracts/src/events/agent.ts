import type { EventDef } from '../event-def.ts';
import { bool, epochMs, eventsOf, int, quad, str, ts, uint } from './fields.ts';

const agent = eventsOf('agent');

const fleetCommand = (type: string, summary: string) =>
  agent(type, { AgentID: str(), Command: str(), Reason: str(), IssuedAt: epochMs() }, summary);

const oauthProvider = (type: string, summary: string) =>
  agent(
    type,
    {
      Author: quad(),
      AgentID: str(),
      ProviderName: str(),
      CredentialBroker: str(),
      RevisionID: str(),
      OccurredAt: ts(),
    },
    summary,
  );

const retirement = (type: string, summary: string) =>
  agent(
    type,
    {
      AgentID: str(),
      OperationHash: str(),
      Stage: str(),
      class: str().optional(),
      Completed: int(),
      Total: int(),
      Generation: uint(),
      OccurredAt: ts(),
    },
    summary,
  );

/** Agent fleet and configuration events (safe). */
export const AGENT_EVENTS: readonly EventDef[] = [
  agent(
    'agent.config.revised',
    {
      Author: quad(),
      AgentID: str(),
      RevisionID: str(),
      ParentRevisionID: str(),
      ContentHash: str(),
      OccurredAt: ts(),
    },
    'A new agent configuration revision was written.',
  ),
  agent(
    'agent.config.reverted',
    { Author: quad(), AgentID: str(), RevisionID: str(), FromRevisionID: str(), OccurredAt: ts() },
    'An agent configuration was rolled back.',
  ),
  agent(
    'agent.registered',
    {
      AgentID: str(),
      RegistrationKey: str(),
      Incarnation: uint(),
      VersionHash: str(),
      Hosting: str(),
      RegisteredAt: epochMs(),
    },
    'An agent joined the fleet.',
  ),
  agent(
    'agent.restarted',
    {
      AgentID: str(),
      RegistrationKey: str(),
      Incarnation: uint(),
      VersionHash: str(),
      VersionHashChanged: bool(),
      RestartedAt: epochMs(),
    },
    'An agent restarted.',
  ),
  agent(
    'agent.deregistered',
    { AgentID: str(), RegistrationKey: str(), DeregisteredAt: epochMs() },
    'An agent left the fleet.',
  ),
  agent('agent.health', { AgentID: str(), Health: str(), ReportedAt: epochMs() }, 'An agent reported its health.'),
  fleetCommand('agent.drained', 'An agent was told to drain.'),
  fleetCommand('agent.force_stopped', 'An agent was force-stopped.'),
  fleetCommand('agent.paused', 'An agent was paused.'),
  fleetCommand('agent.restart_requested', 'An agent was asked to restart.'),
  agent(
    'agent_config.llm_provider.installed',
    { Author: quad(), AgentID: str(), ProviderName: str(), Provider: str(), InferenceBroker: str(), OccurredAt: ts() },
    "An agent's LLM provider was installed.",
  ),
  oauthProvider('agent_config.oauth_provider.installed', 'An OAuth provider was installed on an agent.'),
  oauthProvider('agent_config.oauth_provider.removed', 'An OAuth provider was removed from an agent.'),
  retirement('agent_config.retirement.started', 'Retirement of an agent configuration started.'),
  retirement('agent_config.retirement.progress', 'Retirement of an agent configuration progressed.'),
  retirement('agent_config.retirement.completed', 'Retirement of an agent configuration completed.'),
];
