import { createHash } from 'node:crypto';
import { z } from 'zod';
import { injectTraceContext, SpanKind, withSpan } from '@ars/telemetry';
import type { Logger } from '@ars/telemetry';

/**
 * A client of credential brokers: services that hand out short-lived
 * credentials (an LLM provider's API key for a run's user, an OAuth access
 * token for a tool) so that no long-lived secret sits in our stores.
 *
 * Protocol (ours, format version 1): `POST <broker url>` with a JSON body
 * {@link BrokerRequestBody} — `format_version: 1`, `purpose` (`tool` |
 * `inference`), `provider`, optional `resource` and `scopes`, the `subject`
 * the credential is for (`{kind: tenant|user|session, tenant, user?,
 * session?}`) and the `actor` asking (`{service, agent_id?, run?}`) — with
 * `Authorization: Bearer <CREDENTIAL_BROKER_TOKEN>` when a token is
 * configured, and `traceparent`. A 2xx answer is JSON {@link BrokerAnswer}:
 * `format_version`, `credential`, optional `token_type`, `expires_at` (ISO
 * 8601) or `expires_in` (seconds), optional `granted_scopes`, `audience`,
 * `actor_asserted`. Anything else is a {@link BrokerError}.
 *
 * Credentials are cached per (broker URL, purpose, provider, resource,
 * scopes, subject) — not per actor, which is told for the broker's audit
 * only — until `expires_at` minus a skew; one whose expiry is within the
 * skew is used once (the next ask fetches again). Concurrent asks of one key
 * share one request. Only https URLs, or plain http to a loopback address (unless
 * `allowInsecure`). The credential is never logged nor put in an error.
 */

/** The protocol version this client speaks. */
export const BROKER_FORMAT_VERSION = 1;

/** What the credential is for: an MCP tool's provider, or an LLM provider's inference API. */
export const BrokerPurpose = z.enum(['tool', 'inference']);
export type BrokerPurpose = z.infer<typeof BrokerPurpose>;

/** Whom the credential is for: the whole tenant, one user of it, or one session. */
export const BrokerSubject = z.strictObject({
  kind: z.enum(['tenant', 'user', 'session']),
  tenant: z.string().min(1),
  user: z.string().min(1).optional(),
  session: z.string().min(1).optional(),
});
export type BrokerSubject = z.infer<typeof BrokerSubject>;

/** The service asking, and for which agent and run (the broker's audit; not part of the cache key). */
export const BrokerActor = z.strictObject({
  service: z.string().min(1),
  agent_id: z.string().min(1).optional(),
  run: z.string().min(1).optional(),
});
export type BrokerActor = z.infer<typeof BrokerActor>;

/** The body of a broker request. */
export const BrokerRequestBody = z.strictObject({
  format_version: z.literal(BROKER_FORMAT_VERSION),
  purpose: BrokerPurpose,
  provider: z.string().min(1),
  resource: z.string().min(1).optional(),
  scopes: z.array(z.string().min(1)).optional(),
  subject: BrokerSubject,
  actor: BrokerActor,
});
export type BrokerRequestBody = z.infer<typeof BrokerRequestBody>;

/** A broker's answer; exactly one of `expires_at` and `expires_in` is needed (`expires_at` wins). */
export const BrokerAnswer = z
  .looseObject({
    format_version: z.int().positive(),
    credential: z.string().min(1),
    token_type: z.string().min(1).optional(),
    expires_at: z.iso.datetime({ offset: true }).optional().describe('ISO 8601'),
    expires_in: z.number().positive().optional().describe('seconds from now'),
    granted_scopes: z.array(z.string()).optional(),
    audience: z.union([z.string(), z.array(z.string())]).optional(),
    actor_asserted: z.boolean().optional().describe('the credential carries the actor (token exchange act claim)'),
  })
  .refine((a) => a.expires_at !== undefined || a.expires_in !== undefined, 'expires_at or expires_in is required');
export type BrokerAnswer = z.infer<typeof BrokerAnswer>;

/** What to ask a broker for. */
export interface CredentialRequest {
  /** The broker's URL (an agent's `inference_broker`, an OAuth provider's `credential_broker`). */
  readonly url: string;
  readonly purpose: BrokerPurpose;
  /** The provider the credential is for (an LLM provider kind, an OAuth provider name). */
  readonly provider: string;
  readonly resource?: string | undefined;
  readonly scopes?: readonly string[] | undefined;
  readonly subject: BrokerSubject;
  /** Told to the broker beside the client's `service`. */
  readonly actor?: Omit<BrokerActor, 'service'> | undefined;
}

/** A credential as the broker gave it. */
export interface BrokerCredential {
  /** The secret itself: never log it (see {@link credentialFingerprint}). */
  readonly credential: string;
  readonly tokenType?: string | undefined;
  readonly expiresAt: Date;
  readonly grantedScopes?: readonly string[] | undefined;
  readonly audience?: string | readonly string[] | undefined;
  readonly actorAsserted: boolean;
  readonly formatVersion: number;
  /** The broker's host (what events name). */
  readonly broker: string;
}

/** Why a broker gave no usable credential. */
export type BrokerFailure =
  /** No connection (refused, DNS, TLS). */
  | 'unreachable'
  /** No complete answer within the timeout. */
  | 'timeout'
  /** A non-2xx answer: `http_<status>`. */
  | `http_${number}`
  /** Not JSON, not the answer's shape, or another format version. */
  | 'malformed'
  /** The credential's expiry has passed already. */
  | 'expired'
  /** Not an http(s) URL, or plain http to a host that is not loopback without `allowInsecure`. */
  | 'invalid_url';

/** A broker gave no usable credential: `reason` says why, `retryable` whether asking again later may help. */
export class BrokerError extends Error {
  readonly reason: BrokerFailure;
  /** The broker's host. */
  readonly broker: string;
  readonly retryable: boolean;

  constructor(reason: BrokerFailure, broker: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'BrokerError';
    this.reason = reason;
    this.broker = broker;
    this.retryable = isRetryableFailure(reason);
  }
}

function isRetryableFailure(reason: BrokerFailure): boolean {
  if (reason === 'unreachable' || reason === 'timeout') return true;
  const status = /^http_(\d+)$/.exec(reason)?.[1];
  return status !== undefined && (Number(status) >= 500 || status === '429' || status === '408');
}

/** One request a broker was sent (not the answers taken from the cache), told to the asker that sent it. */
export interface BrokerFetch {
  /** `initial`: the first for its key; `refresh`: one replacing an expired or invalidated credential. */
  readonly phase: 'initial' | 'refresh';
  readonly outcome: 'ok' | BrokerFailure;
  readonly broker: string;
  readonly credential?: BrokerCredential;
}

/** Options of {@link createCredentialBrokerClient}. */
export interface CredentialBrokerOptions {
  /** The asking service (`actor.service`). */
  readonly service: string;
  /** Sent as `Authorization: Bearer <token>` (`CREDENTIAL_BROKER_TOKEN`); @default none */
  readonly token?: string | undefined;
  /** Budget of one request, answer read included, in ms (`BROKER_TIMEOUT_MS`). @default 5000 */
  readonly timeoutMs?: number;
  /** Plain http to any host (`BROKER_ALLOW_INSECURE`). @default false: only to loopback */
  readonly allowInsecure?: boolean;
  /** Credentials kept at most; the least recently used goes first. @default 1000 */
  readonly maxEntries?: number;
  /** A credential is not used from the cache past its expiry minus this, in ms. @default 30000 */
  readonly skewMs?: number;
  readonly logger?: Logger;
  /** @default Date.now */
  readonly now?: () => number;
}

export interface CredentialBrokerClient {
  /**
   * A credential for `request`, from the cache while it lasts, else from the
   * broker (`onFetch` hears of that request, if this ask sent it). Throws
   * {@link BrokerError}.
   */
  get(request: CredentialRequest, onFetch?: (fetch: BrokerFetch) => void): Promise<BrokerCredential>;
  /** Stops using the cached credential of `request` (the provider refused it): the next ask fetches a `refresh`. */
  invalidate(request: CredentialRequest): void;
  /** Credentials cached now. */
  readonly size: number;
}

/** The longest answer read, in bytes. */
const MAX_ANSWER_BYTES = 65_536;

/** The first 12 hex digits of the SHA-256 of a credential: what may be logged or published of it. */
export function credentialFingerprint(credential: string): string {
  return createHash('sha256').update(credential).digest('hex').slice(0, 12);
}

const LOOPBACK_HOSTS = new Set(['localhost', '[::1]', '::1']);

function isLoopback(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname) || /^127(\.\d{1,3}){3}$/.test(hostname);
}

/** The broker URL, checked; throws `invalid_url`. */
export function brokerUrl(url: string, allowInsecure = false): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (error) {
    throw new BrokerError('invalid_url', '', 'the broker URL does not parse', { cause: error });
  }
  const host = parsed.host;
  if (parsed.protocol === 'https:') return parsed;
  if (parsed.protocol !== 'http:') throw new BrokerError('invalid_url', host, 'a broker URL must be http(s)');
  if (!allowInsecure && !isLoopback(parsed.hostname)) {
    throw new BrokerError('invalid_url', host, 'plain http to a broker is refused unless it is on loopback');
  }
  return parsed;
}

interface Entry {
  readonly credential: BrokerCredential;
  /** Epoch ms after which the cache no longer answers with it. */
  usableUntil: number;
}

function keyOf(request: CredentialRequest): string {
  const { subject } = request;
  return JSON.stringify([
    request.url,
    request.purpose,
    request.provider,
    request.resource ?? '',
    [...(request.scopes ?? [])].sort(),
    subject.kind,
    subject.tenant,
    subject.user ?? '',
    subject.session ?? '',
  ]);
}

/** Reads at most {@link MAX_ANSWER_BYTES} of a body. */
async function readCapped(response: Response, broker: string): Promise<string> {
  const reader = response.body?.getReader();
  if (reader === undefined) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_ANSWER_BYTES) {
      await reader.cancel();
      throw new BrokerError('malformed', broker, `the broker's answer is over ${MAX_ANSWER_BYTES} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function failureOf(error: unknown, broker: string): BrokerError {
  if (error instanceof BrokerError) return error;
  const name = error instanceof Error ? error.name : '';
  if (name === 'TimeoutError' || name === 'AbortError') {
    return new BrokerError('timeout', broker, 'the broker did not answer in time', { cause: error });
  }
  return new BrokerError('unreachable', broker, 'the broker could not be reached', { cause: error });
}

export function createCredentialBrokerClient(options: CredentialBrokerOptions): CredentialBrokerClient {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const maxEntries = options.maxEntries ?? 1_000;
  const skewMs = options.skewMs ?? 30_000;
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();
  const inFlight = new Map<string, Promise<BrokerCredential>>();

  function remember(key: string, credential: BrokerCredential): void {
    const usableUntil = credential.expiresAt.getTime() - skewMs;
    entries.delete(key);
    entries.set(key, { credential, usableUntil });
    while (entries.size > maxEntries) entries.delete(entries.keys().next().value as string);
  }

  function credentialOf(answer: BrokerAnswer, broker: string): BrokerCredential {
    const expiresAt =
      answer.expires_at !== undefined ? new Date(answer.expires_at) : new Date(now() + (answer.expires_in ?? 0) * 1000);
    if (expiresAt.getTime() <= now()) {
      throw new BrokerError('expired', broker, 'the broker answered a credential that has expired');
    }
    return {
      credential: answer.credential,
      tokenType: answer.token_type,
      expiresAt,
      grantedScopes: answer.granted_scopes,
      audience: answer.audience,
      actorAsserted: answer.actor_asserted ?? false,
      formatVersion: answer.format_version,
      broker,
    };
  }

  async function send(url: URL, body: BrokerRequestBody): Promise<BrokerCredential> {
    const broker = url.host;
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
    injectTraceContext((key, value) => (headers[key] = value));
    const attributes = { 'server.address': url.hostname, 'ars.broker.purpose': body.purpose };
    return withSpan('credential_broker POST', { kind: SpanKind.CLIENT, attributes }, async () => {
      try {
        const signal = AbortSignal.timeout(timeoutMs);
        const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal });
        const text = await readCapped(response, broker);
        if (!response.ok) {
          throw new BrokerError(`http_${response.status}`, broker, `the broker answered HTTP ${response.status}`);
        }
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch (error) {
          throw new BrokerError('malformed', broker, 'the broker answered no JSON', { cause: error });
        }
        const parsed = BrokerAnswer.safeParse(json);
        if (!parsed.success) throw new BrokerError('malformed', broker, 'the broker answered an unknown shape');
        if (parsed.data.format_version !== BROKER_FORMAT_VERSION) {
          const version = parsed.data.format_version;
          throw new BrokerError('malformed', broker, `the broker answered format version ${version}`);
        }
        return credentialOf(parsed.data, broker);
      } catch (error) {
        throw failureOf(error, broker);
      }
    });
  }

  function fetchShared(
    key: string,
    request: CredentialRequest,
    onFetch?: (fetch: BrokerFetch) => void,
  ): Promise<BrokerCredential> {
    const phase = entries.has(key) ? 'refresh' : 'initial';
    let url: URL;
    try {
      url = brokerUrl(request.url, options.allowInsecure ?? false);
    } catch (error) {
      const failure = failureOf(error, '');
      onFetch?.({ phase, outcome: failure.reason, broker: failure.broker });
      return Promise.reject(failure);
    }
    const body: BrokerRequestBody = {
      format_version: BROKER_FORMAT_VERSION,
      purpose: request.purpose,
      provider: request.provider,
      ...(request.resource === undefined ? {} : { resource: request.resource }),
      ...(request.scopes === undefined ? {} : { scopes: [...request.scopes] }),
      subject: request.subject,
      actor: { service: options.service, ...request.actor },
    };
    const log = { broker: url.host, purpose: request.purpose, provider: request.provider, phase };
    const fetching = send(url, body).then(
      (credential) => {
        // Kept even when it expires within the skew: never answered from the cache, it marks the next fetch a refresh.
        remember(key, credential);
        options.logger?.info(
          { ...log, fingerprint: credentialFingerprint(credential.credential) },
          'credential fetched',
        );
        onFetch?.({ phase, outcome: 'ok', broker: url.host, credential });
        return credential;
      },
      (error: unknown) => {
        const failure = failureOf(error, url.host);
        options.logger?.warn({ ...log, reason: failure.reason }, 'credential not fetched');
        onFetch?.({ phase, outcome: failure.reason, broker: url.host });
        throw failure;
      },
    );
    inFlight.set(key, fetching);
    void fetching.finally(() => inFlight.delete(key)).catch(() => undefined);
    return fetching;
  }

  return {
    async get(request, onFetch) {
      const key = keyOf(request);
      const cached = entries.get(key);
      if (cached !== undefined && cached.usableUntil > now()) {
        entries.delete(key);
        entries.set(key, cached);
        return cached.credential;
      }
      return inFlight.get(key) ?? fetchShared(key, request, onFetch);
    },
    invalidate(request) {
      const entry = entries.get(keyOf(request));
      if (entry !== undefined) entry.usableUntil = 0;
    },
    get size() {
      return entries.size;
    },
  };
}

/**
 * The environment variables of a service that asks credential brokers:
 * spread into its config schema (`BaseServiceConfig.extend({...CREDENTIAL_BROKER_CONFIG_SHAPE})`)
 * and turned into client options by {@link credentialBrokerOptionsOf}.
 */
export const CREDENTIAL_BROKER_CONFIG_SHAPE = {
  CREDENTIAL_BROKER_TOKEN: z
    .string()
    .min(1)
    .optional()
    .describe('Bearer token sent to credential brokers (Authorization header). Unset: none is sent.'),
  BROKER_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(50)
    .max(60_000)
    .default(5_000)
    .describe("How long one credential broker request may take, its answer's body included, in ms. Default 5000."),
  BROKER_ALLOW_INSECURE: z
    .enum(['true', 'false'])
    .default('false')
    .transform((value) => value === 'true')
    .describe('true: plain http to credential brokers on any host. Default false: https, or http to loopback only.'),
};

/** The client options of a config that spread {@link CREDENTIAL_BROKER_CONFIG_SHAPE}. */
export function credentialBrokerOptionsOf(config: {
  readonly CREDENTIAL_BROKER_TOKEN?: string | undefined;
  readonly BROKER_TIMEOUT_MS: number;
  readonly BROKER_ALLOW_INSECURE: boolean;
}): Pick<CredentialBrokerOptions, 'token' | 'timeoutMs' | 'allowInsecure'> {
  return {
    token: config.CREDENTIAL_BROKER_TOKEN,
    timeoutMs: config.BROKER_TIMEOUT_MS,
    allowInsecure: config.BROKER_ALLOW_INSECURE,
  };
}
