import { ControlDeliveryError, requestControl } from '@ars/bus';
import { OAUTH_COMPLETE, refuse, ServiceError } from '@ars/contracts';
import type { AuthCompletionEnvelope, OAuthCompleteReply, OAuthCompleteRequest } from '@ars/contracts';
import { serveInternal } from '@ars/service-kit';
import type { InternalHandler } from '@ars/service-kit';
import { AuthorizationRefused, exchangeCode } from './authorization-server.ts';
import type { OAuthContext } from './context.ts';
import type { FlowRecord } from './flow.repository.ts';

/**
 * `_oauth.complete` (gate service: the browser brings no token; the
 * single-use, unguessable `state` is the capability). Takes the flow (a
 * second complete of the same state finds nothing), exchanges the code with
 * the PKCE verifier, stores the grant sealed, publishes
 * `tool.credential_exchanged` for the run, and delivers the completion to
 * the run's control inbox. A refusal by the user (`error`) delivers
 * `denied`. The authorization server not answering puts the flow back, so
 * that the same callback may be retried.
 */

/** How long the run's inbox may take to answer a completion, in ms. */
const DELIVERY_TIMEOUT_MS = 5_000;

/** Bytes of the server's error kept in a denied completion's reason. */
const REASON_MAX = 1_024;

/** Delivers the completion to the run's inbox: true when the live inbox took it. */
async function deliver(
  ctx: OAuthContext,
  flow: FlowRecord,
  state: string,
  outcome: 'completed' | 'denied',
  reason?: string,
): Promise<boolean> {
  const envelope: AuthCompletionEnvelope = {
    method: 'auth_completed',
    auth: {
      pause_token: flow.pause_token,
      state,
      server_id: flow.server_id,
      binding_scope: flow.binding_scope,
      outcome,
      ...(reason === undefined ? {} : { reason: reason.slice(0, REASON_MAX) }),
    },
    event_id: `oauth:${state}`,
  };
  try {
    const answer = await requestControl(ctx.bus, flow.run, envelope, { timeoutMs: DELIVERY_TIMEOUT_MS });
    if (!answer.accepted) ctx.logger.info({ task_id: flow.run, code: answer.code }, 'run refused the oauth completion');
    return answer.accepted;
  } catch (error) {
    if (!(error instanceof ControlDeliveryError)) throw error;
    ctx.logger.info({ task_id: flow.run, reason: error.reason }, 'oauth completion not delivered to the run');
    return false;
  }
}

async function exchange(ctx: OAuthContext, flow: FlowRecord, code: string) {
  const verifier = await ctx.sealer.open(
    { tenant: flow.tenant, purpose: 'oauth_flow', context: flow._id },
    flow.verifier,
  );
  const client = await ctx.grants.clientOf({ _id: flow.binding_id, tenant: flow.tenant, client: flow.client });
  try {
    return await exchangeCode(
      flow.authorization_server,
      client,
      { code, verifier, redirectUri: flow.redirect_uri },
      ctx.fetchFn,
    );
  } catch (error) {
    if (error instanceof AuthorizationRefused) {
      ctx.logger.info({ binding_id: flow.binding_id, oauth_error: error.oauthError }, 'oauth code exchange refused');
      throw refuse(OAUTH_COMPLETE, 'exchange_failed', `the authorization server refused the code: ${error.oauthError}`);
    }
    // The server did not answer: the same callback may be tried again.
    await ctx.flows.put(flow);
    throw refuse(OAUTH_COMPLETE, 'authorization_server_unavailable', (error as Error).message, { cause: error });
  }
}

async function complete(ctx: OAuthContext, body: OAuthCompleteRequest): Promise<OAuthCompleteReply> {
  if (body.code === undefined && body.error === undefined) {
    throw new ServiceError('invalid_request', 'the callback carries neither code nor error');
  }
  const flow = await ctx.flows.take(body.state, ctx.now());
  if (flow === null) {
    throw refuse(
      OAUTH_COMPLETE,
      'unknown_state',
      'no authorization is waiting for this state (unknown, used or expired)',
    );
  }
  const answered = { server_id: flow.server_id, binding_id: flow.binding_id, task_id: flow.run };
  const mixUp = issuerMismatch(flow, body.iss);
  if (mixUp !== undefined) {
    // A response from another authorization server (a mix-up attack, or a misconfiguration): no code is sent anywhere.
    ctx.logger.warn({ binding_id: flow.binding_id, server_id: flow.server_id }, 'oauth response issuer mismatch');
    await deliver(ctx, flow, body.state, 'denied', mixUp);
    throw refuse(OAUTH_COMPLETE, 'issuer_mismatch', mixUp);
  }
  if (body.error !== undefined) {
    const reason = body.error_description === undefined ? body.error : `${body.error}: ${body.error_description}`;
    ctx.logger.info({ binding_id: flow.binding_id, oauth_error: body.error }, 'oauth authorization denied');
    return { outcome: 'denied', ...answered, run_notified: await deliver(ctx, flow, body.state, 'denied', reason) };
  }
  const tokens = await exchange(ctx, flow, body.code as string);
  const actor = { tenant: flow.tenant, user: flow.user, session: flow.session, run: flow.run };
  const source = {
    server: flow.authorization_server,
    client: flow.client,
    providerName: flow.provider_name,
    requested: flow.scopes,
  };
  await ctx.grants.store(flow.binding_id, tokens, source, actor);
  // Connections that failed without a usable grant open again with this one.
  ctx.grants.reset(flow.binding_id);
  ctx.logger.info(
    { binding_id: flow.binding_id, server_id: flow.server_id, task_id: flow.run },
    'oauth authorization completed',
  );
  return { outcome: 'completed', ...answered, run_notified: await deliver(ctx, flow, body.state, 'completed') };
}

/**
 * RFC 9207: an `iss` in the response must be the flow's authorization
 * server's issuer, and a server whose metadata promises `iss` must send it.
 * The reason when it does not, else undefined.
 */
function issuerMismatch(flow: FlowRecord, iss: string | undefined): string | undefined {
  const metadata = flow.authorization_server.metadata as {
    readonly issuer?: unknown;
    readonly authorization_response_iss_parameter_supported?: unknown;
  };
  const issuer = typeof metadata.issuer === 'string' ? metadata.issuer : undefined;
  if (iss === undefined) {
    return metadata.authorization_response_iss_parameter_supported === true
      ? 'the authorization server promises an iss parameter and sent none'
      : undefined;
  }
  return issuer !== undefined && iss !== issuer ? 'the authorization response names another issuer' : undefined;
}

/** `_oauth.complete`. */
export function createCompleteHandler(ctx: OAuthContext): InternalHandler {
  return serveInternal(OAUTH_COMPLETE, ({ body }) => complete(ctx, body));
}
