import { createCipheriv, createDecipheriv, randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectBus, serveControlInbox, serveService, startNatsServer } from '@ars/bus';
import type { Bus, ControlInbox, NatsServerHandle, ServedService } from '@ars/bus';
import { isServiceError, serviceCallerIdentity, ServiceError } from '@ars/contracts';
import type { EventFrame, VerifiedIdentity } from '@ars/contracts';
import { outcomeOf, startInProcess, storedEvents } from '@ars/service-kit/testing';
import type { CallOutcome, InProcessService } from '@ars/service-kit/testing';
import { openStore } from '@ars/store';
import type { Store } from '@ars/store';
import { createLogger } from '@ars/telemetry';
import { agentRegistryService } from '../../src/service.ts';

/**
 * agent-registry with OAuth-bound MCP servers against a real nats-server,
 * its sqlite store on disk (the test opens it too, to age a flow), a
 * governance stand-in that seals with AES-256-GCM under its own key (the
 * service under test never sees it), and every log line captured.
 */

/** The redirect base the tests configure (nothing listens there: the tests read the Location header). */
export const REDIRECT_BASE = 'http://127.0.0.1:8080';

/** The stand-in of governance: seal and open (AAD tenant, purpose, context), effective overrides. */
function serveGovernanceStandIn(bus: Bus): Promise<ServedService> {
  const kek = randomBytes(32);
  const aad = (b: { tenant: string; purpose: string; context: string }) =>
    Buffer.from(JSON.stringify([b.tenant, b.purpose, b.context]));
  return serveService(bus, {
    service: 'governance',
    version: '0.0.1',
    instanceId: 'governance-stand-in',
    logger: createLogger({ name: 'governance-stand-in', level: 'silent' }),
    handlers: {
      '_governance.effective_overrides': async ({ body }) => ({
        tenant: (body as { tenant: string }).tenant,
        overrides: {},
      }),
      '_governance.seal_secret': async ({ identity, body }) => {
        const b = body as { tenant: string; purpose: string; context: string; secret: string };
        if (b.tenant !== identity.tenant) throw new ServiceError('scope_mismatch', 'tenant');
        const iv = randomBytes(12);
        const cipher = createCipheriv('aes-256-gcm', kek, iv).setAAD(aad(b));
        const ciphertext = Buffer.concat([cipher.update(b.secret, 'utf8'), cipher.final()]);
        const sealed = {
          ciphertext: ciphertext.toString('base64'),
          iv: iv.toString('base64'),
          tag: cipher.getAuthTag().toString('base64'),
          kek_id: 'stand-in',
        };
        return { sealed };
      },
      '_governance.open_secret': async ({ identity, body }) => {
        const b = body as { tenant: string; purpose: string; context: string; sealed: Record<string, string> };
        if (b.tenant !== identity.tenant) throw new ServiceError('scope_mismatch', 'tenant');
        try {
          const decipher = createDecipheriv('aes-256-gcm', kek, Buffer.from(b.sealed.iv ?? '', 'base64')).setAAD(
            aad(b),
          );
          decipher.setAuthTag(Buffer.from(b.sealed.tag ?? '', 'base64'));
          const clear = Buffer.concat([
            decipher.update(Buffer.from(b.sealed.ciphertext ?? '', 'base64')),
            decipher.final(),
          ]);
          return { secret: clear.toString('utf8') };
        } catch {
          throw new ServiceError('conflict', 'unreadable', { reason: 'unreadable' });
        }
      },
    },
  });
}

/** A call's outcome with the refusal reason, when the owner declared one. */
export type Outcome = CallOutcome & { readonly reason?: string };

/** Settles `call` into an {@link Outcome}. */
export async function settle(call: Promise<unknown>): Promise<Outcome> {
  try {
    return { ok: true, result: await call };
  } catch (error) {
    if (!isServiceError(error)) throw error;
    return {
      ok: false,
      code: error.code,
      message: error.message,
      ...(error.reason === undefined ? {} : { reason: error.reason }),
    };
  }
}

/** The result of an outcome that must have succeeded (throws with the refusal otherwise). */
export function resultOf<T = Record<string, unknown>>(outcome: Outcome): T {
  if (!outcome.ok) throw new Error(`refused: ${outcome.code} ${outcome.reason ?? ''} ${outcome.message}`);
  return outcome.result as T;
}

/** One authorization a test drove: what begin answered, where the server redirected, what complete answered. */
export interface Authorized {
  readonly begun: Record<string, unknown>;
  readonly state: string;
  readonly callback: URL;
  readonly completed: Outcome;
}

/** The harness. */
export interface OAuthHarness {
  readonly service: InProcessService;
  /** The service's store, opened by the test as well. */
  readonly store: Store;
  /** Every log line the service wrote. */
  readonly logs: string[];
  /** Every auth completion delivered to a run inbox the test serves, by task id. */
  readonly delivered: Map<string, unknown[]>;
  /** An identity of `tenant` (fresh unless given). */
  caller(user?: string, tenant?: string, scopes?: string[]): VerifiedIdentity;
  call<T = Record<string, unknown>>(method: string, body: Record<string, unknown>, who: VerifiedIdentity): Promise<T>;
  outcome(method: string, body: Record<string, unknown>, who: VerifiedIdentity): Promise<CallOutcome>;
  /** An internal endpoint as `who`, the body's triple `who`'s. */
  internal(method: string, who: VerifiedIdentity, body: Record<string, unknown>): Promise<Outcome>;
  /** `_oauth.complete` as the gateway calls it. */
  complete(body: Record<string, unknown>): Promise<Outcome>;
  /** Writes the head revision of `agentId` (admin of `who`'s tenant). */
  configure(who: VerifiedIdentity, agentId: string, config: Record<string, unknown>): Promise<void>;
  /** Serves the control inbox of run `taskId` (answers accepted). */
  serveRun(taskId: string): ControlInbox;
  /** `_oauth.begin` for `who`'s run, the authorize URL followed as `who.user`, and `_oauth.complete` with what came back. */
  authorize(who: VerifiedIdentity, body: { server_id: string; agent_id: string; run?: string }): Promise<Authorized>;
  /** `_mcp.call_tool` of `whoami` as `who`; the parsed answer, or the refusal. */
  whoami(
    who: VerifiedIdentity,
    serverId: string,
    agentId: string,
  ): Promise<Outcome & { answer?: Record<string, unknown> }>;
  events(tenant: string, type: string): Promise<EventFrame[]>;
  stop(): Promise<void>;
}

export async function startOAuthHarness(env: Record<string, string> = {}): Promise<OAuthHarness> {
  const root = await mkdtemp(join(tmpdir(), 'ars-agent-registry-oauth-'));
  const dataDir = join(root, 'data');
  const logs: string[] = [];
  let nats: NatsServerHandle | undefined;
  let bus: Bus | undefined;
  let governance: ServedService | undefined;
  let service: InProcessService | undefined;
  let store: Store | undefined;
  try {
    nats = await startNatsServer({ storeDir: join(root, 'nats') });
    bus = await connectBus({ servers: nats.url, name: 'oauth-test-side' });
    governance = await serveGovernanceStandIn(bus);
    const logger = createLogger({
      name: 'agent-registry',
      level: 'debug',
      destination: { write: (line: string) => void logs.push(line) },
    });
    service = await startInProcess(agentRegistryService, {
      natsUrl: nats.url,
      env: { DATA_DIR: dataDir, OAUTH_REDIRECT_BASE_URL: REDIRECT_BASE, MCP_RESTART_BACKOFF_MS: '50', ...env },
      logger,
      inMemoryStore: false,
    });
    store = await openStore({
      dataDir: join(dataDir, 'agent-registry'),
      database: 'ars_agent_registry',
      engine: 'sqlite',
    });
  } catch (error) {
    await service?.stop();
    await governance?.stop();
    await bus?.close();
    await nats?.stop();
    await rm(root, { recursive: true, force: true });
    throw error;
  }
  const running = service;
  const side = bus;
  const served = governance;
  const server = nats;
  const opened = store;
  const delivered = new Map<string, unknown[]>();
  const inboxes: ControlInbox[] = [];

  const call = <T>(method: string, body: Record<string, unknown>, who: VerifiedIdentity) =>
    running.call(method, { identity: {}, ...body }, who) as Promise<T>;
  const internal = (method: string, who: VerifiedIdentity, body: Record<string, unknown>) =>
    settle(
      running.rpc.call(
        'agent-registry',
        method,
        who,
        { tenant: who.tenant, user: who.user, session: who.session, ...body },
        {
          timeoutMs: 30_000,
        },
      ),
    );
  const complete = (body: Record<string, unknown>) =>
    settle(
      running.rpc.call('agent-registry', '_oauth.complete', serviceCallerIdentity('gateway'), body, {
        timeoutMs: 30_000,
      }),
    );

  const harness: OAuthHarness = {
    service: running,
    store: opened,
    logs,
    delivered,
    caller: (user = 'alice', tenant = `t-${randomUUID()}`, scopes = ['admin']) => ({
      tenant,
      user,
      session: `s-${user}`,
      scopes,
    }),
    call,
    outcome: (method, body, who) => outcomeOf(call(method, body, who)),
    internal,
    complete,
    configure: async (who, agentId, config) => {
      await call('agent_config.set_revision', { agent_id: agentId, config }, { ...who, scopes: ['admin'] });
    },
    serveRun(taskId) {
      const inbox = serveControlInbox(side, taskId, (body, reply) => {
        delivered.set(taskId, [...(delivered.get(taskId) ?? []), body]);
        reply({ accepted: true });
      });
      inboxes.push(inbox);
      return inbox;
    },
    async authorize(who, body) {
      const run = body.run ?? `task-${randomUUID()}`;
      const begin = await internal('_oauth.begin', who, { run, pause_token: `pause-${run}`, ...body });
      const begun = resultOf(begin);
      const url = new URL(begun.authorize_url as string);
      url.searchParams.set('login_hint', who.user);
      const response = await fetch(url, { redirect: 'manual' });
      await response.body?.cancel();
      const callback = new URL(response.headers.get('location') ?? 'http://invalid/');
      const state = callback.searchParams.get('state') ?? '';
      const code = callback.searchParams.get('code');
      const error = callback.searchParams.get('error');
      const completed = await complete({
        state,
        ...(code === null ? {} : { code }),
        ...(error === null ? {} : { error }),
      });
      return { begun, state, callback, completed };
    },
    async whoami(who, serverId, agentId) {
      const outcome = await internal('_mcp.call_tool', who, {
        run: 'r-1',
        call_id: randomUUID(),
        agent_id: agentId,
        server_id: serverId,
        tool: 'whoami',
        arguments: {},
        timeout_ms: 10_000,
      });
      if (!outcome.ok) return outcome;
      const content = (outcome.result as { content: { text?: string }[] }).content;
      return { ...outcome, answer: JSON.parse(content[0]?.text ?? '{}') as Record<string, unknown> };
    },
    events: (tenant, type) => storedEvents(running.bus, { tenant, type }),
    async stop() {
      for (const inbox of inboxes) inbox.close();
      await opened.close();
      await running.stop();
      await served.stop();
      await side.close();
      await server.stop();
      await rm(root, { recursive: true, force: true });
    },
  };
  return harness;
}

/** An agent configuration with one MCP connection to `url` (discovered as OAuth-bound unless a provider is named). */
export function oauthAgent(
  serverId: string,
  url: string,
  extra: { binding_scope?: string; oauth_provider?: Record<string, unknown> } = {},
): Record<string, unknown> {
  const provider = extra.oauth_provider;
  return {
    mcp_connections: [
      {
        server_id: serverId,
        transport: 'streamable_http',
        url,
        ...(extra.binding_scope === undefined ? {} : { binding_scope: extra.binding_scope }),
        ...(provider === undefined ? {} : { oauth_provider: provider.provider_name }),
      },
    ],
    ...(provider === undefined ? {} : { oauth_providers: [provider] }),
  };
}
