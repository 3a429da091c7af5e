import type { Bus, InternalCaller, EventPublisher, RpcHandler } from '@ars/bus';
import { createCredentialBrokerClient, credentialBrokerOptionsOf } from '@ars/service-kit';
import type { InternalHandler } from '@ars/service-kit';
import type { Store } from '@ars/store';
import type { Logger } from '@ars/telemetry';
import type { AgentRegistryConfig } from '../config.ts';
import type { AgentServerDeps } from '../mcp/index.ts';
import { boundedFetch } from './authorization-server.ts';
import { createBeginHandler } from './begin.handler.ts';
import { createBindingRepository } from './binding.repository.ts';
import { createBindingHandlers } from './bindings.handlers.ts';
import { createBrokeredGrants } from './broker-grants.ts';
import { createCompleteHandler } from './complete.handler.ts';
import type { OAuthContext } from './context.ts';
import { createOAuthEvents } from './events.ts';
import { createFlowRepository } from './flow.repository.ts';
import { createOAuthGate } from './gate.ts';
import type { OAuthServerGate } from './gate.ts';
import { createGrants } from './grants.ts';
import { createGovernanceSealer } from './sealer.ts';

/**
 * OAuth-bound MCP servers (MCP's authorization spec), agent-registry's part:
 * bindings and their sealed grants, `_oauth.begin` / `_oauth.complete`, the
 * gate the MCP host asks before it opens or uses a connection (with the
 * tokens of providers whose `credential_broker` is an external broker), and the
 * binding methods (`mcp.servers.bindings.list`, `refresh_binding`,
 * `revoke_binding`, `tools.revoke_oauth`). This file is the folder's surface.
 */

/** What the OAuth module is built from. */
export interface OAuthModuleDeps {
  readonly store: Store;
  /** Calls governance (sealing) as the tenant. */
  readonly rpc: InternalCaller;
  readonly bus: Bus;
  readonly publisher: EventPublisher;
  readonly logger: Logger;
  readonly config: Readonly<
    Pick<
      AgentRegistryConfig,
      | 'OAUTH_REDIRECT_BASE_URL'
      | 'OAUTH_FLOW_TTL_SECONDS'
      | 'OAUTH_REFRESH_MARGIN_SECONDS'
      | 'OAUTH_HTTP_TIMEOUT_MS'
      | 'MCP_CONNECT_TIMEOUT_MS'
      | 'CREDENTIAL_BROKER_TOKEN'
      | 'BROKER_TIMEOUT_MS'
      | 'BROKER_ALLOW_INSECURE'
    >
  >;
  /** Resolves a run's agent servers. */
  readonly lookup: AgentServerDeps;
  /** Epoch ms now. @default Date.now */
  readonly now?: () => number;
}

/** The module wired for the service. */
export interface OAuthModule {
  /** What the MCP host asks before it opens or uses a connection. */
  readonly gate: OAuthServerGate;
  readonly handlers: Record<string, RpcHandler>;
  /** `_oauth.begin` and `_oauth.complete`. */
  readonly internalHandlers: readonly InternalHandler[];
}

/** The redirect URI registered with authorization servers: the gateway's callback. */
export function redirectUriOf(baseUrl: string): string {
  // Relative, so that a gateway behind a path prefix (https://gw.example/ars) keeps it.
  return new URL('v1/oauth/callback', baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`).href;
}

/** Creates the repositories (and their indexes), the grants, the gate and the handlers. */
export async function createOAuthModule(deps: OAuthModuleDeps): Promise<OAuthModule> {
  const { config } = deps;
  const logger = deps.logger.child({ component: 'oauth' });
  const now = deps.now ?? Date.now;
  const [bindings, flows] = await Promise.all([createBindingRepository(deps.store), createFlowRepository(deps.store)]);
  const sealer = createGovernanceSealer(deps.rpc);
  const events = createOAuthEvents(deps.publisher, logger);
  const fetchFn = boundedFetch(config.OAUTH_HTTP_TIMEOUT_MS);
  const redirectUri = redirectUriOf(config.OAUTH_REDIRECT_BASE_URL);
  const grants = createGrants({
    bindings,
    sealer,
    events,
    logger,
    refreshMarginMs: config.OAUTH_REFRESH_MARGIN_SECONDS * 1_000,
    fetchFn,
    now,
  });
  const probeFetchFn = boundedFetch(config.MCP_CONNECT_TIMEOUT_MS);
  const brokered = createBrokeredGrants({
    client: createCredentialBrokerClient({ service: 'agent-registry', ...credentialBrokerOptionsOf(config), logger }),
    events,
    logger,
  });
  const gate = createOAuthGate({ grants, bindings, probeFetchFn, brokered, redirectUri, logger });
  const ctx: OAuthContext = {
    lookup: deps.lookup,
    bindings,
    flows,
    grants,
    gate,
    sealer,
    events,
    bus: deps.bus,
    fetchFn,
    redirectUri,
    flowTtlMs: config.OAUTH_FLOW_TTL_SECONDS * 1_000,
    logger,
    now,
  };
  return {
    gate,
    handlers: createBindingHandlers(ctx),
    internalHandlers: [createBeginHandler(ctx), createCompleteHandler(ctx)],
  };
}

export type { OAuthServerGate };
