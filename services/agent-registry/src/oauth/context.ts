import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Bus } from '@ars/bus';
import type { Logger } from '@ars/telemetry';
import type { AgentServerDeps } from '../mcp/index.ts';
import type { BindingRepository } from './binding.repository.ts';
import type { OAuthEvents } from './events.ts';
import type { FlowRepository } from './flow.repository.ts';
import type { OAuthServerGate } from './gate.ts';
import type { Grants } from './grants.ts';
import type { Sealer } from './sealer.ts';

/** What the OAuth handlers work with. */
export interface OAuthContext {
  /** Resolves a run's agent servers (as the tool host does). */
  readonly lookup: AgentServerDeps;
  readonly bindings: BindingRepository;
  readonly flows: FlowRepository;
  readonly grants: Grants;
  readonly gate: OAuthServerGate;
  readonly sealer: Sealer;
  readonly events: OAuthEvents;
  /** Delivers completions to runs' control inboxes. */
  readonly bus: Bus;
  /** Requests to authorization servers, each bounded. */
  readonly fetchFn: FetchLike;
  /** `<OAUTH_REDIRECT_BASE_URL>/v1/oauth/callback`. */
  readonly redirectUri: string;
  /** How long a begun flow waits for its callback, in ms. */
  readonly flowTtlMs: number;
  readonly logger: Logger;
  /** Epoch ms now. */
  readonly now: () => number;
}
