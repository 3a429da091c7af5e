import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryLogger } from '@ars/telemetry';
import { BrokerError, createCredentialBrokerClient } from '../src/credential-broker.ts';
import type {
  BrokerFetch,
  CredentialBrokerClient,
  CredentialBrokerOptions,
  CredentialRequest,
} from '../src/credential-broker.ts';

/**
 * The credential broker client against a broker on 127.0.0.1 and an
 * ephemeral port, whose answer each test scripts.
 */

interface Received {
  readonly body: Record<string, unknown>;
  readonly headers: IncomingMessage['headers'];
}

/** Answers a request; `undefined` leaves it hanging. */
type Responder = (body: Record<string, unknown>, res: ServerResponse, n: number) => void;

interface LocalBroker {
  readonly url: string;
  readonly received: Received[];
  respond: Responder;
  stop(): Promise<void>;
}

const json = (res: ServerResponse, status: number, body: unknown): void =>
  void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

const answer =
  (extra: Record<string, unknown> = {}): Responder =>
  (_body, res, n) =>
    json(res, 200, { format_version: 1, credential: `sk-${n}`, expires_in: 3_600, ...extra });

const brokers: LocalBroker[] = [];

async function startBroker(respond: Responder = answer()): Promise<LocalBroker> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      const body = JSON.parse(text) as Record<string, unknown>;
      received.push({ body, headers: req.headers });
      broker.respond(body, res, received.length);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const broker: LocalBroker = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/credentials`,
    received,
    respond,
    stop: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
  brokers.push(broker);
  return broker;
}

afterEach(async () => {
  await Promise.all(brokers.splice(0).map((b) => b.stop()));
});

function requestTo(broker: { url: string }, overrides: Partial<CredentialRequest> = {}): CredentialRequest {
  return {
    url: broker.url,
    purpose: 'inference',
    provider: 'openai',
    subject: { kind: 'user', tenant: 't1', user: 'alice' },
    actor: { agent_id: 'a1', run: 'r1' },
    ...overrides,
  };
}

function clientOf(options: Partial<CredentialBrokerOptions> = {}): CredentialBrokerClient {
  return createCredentialBrokerClient({ service: 'run-executor', ...options });
}

async function failureOf(call: Promise<unknown>): Promise<BrokerError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (error instanceof BrokerError) return error;
  throw new Error(`expected a BrokerError, got ${String(error)}`);
}

describe('credential broker client', () => {
  it("sends the protocol's request, with the bearer token, and returns the credential and its expiry", async () => {
    const broker = await startBroker(answer({ token_type: 'Bearer', granted_scopes: ['chat'], actor_asserted: true }));
    const before = Date.now();
    const credential = await clientOf({ token: 'tok-1' }).get(requestTo(broker, { scopes: ['chat'], resource: 'r' }));
    expect(broker.received[0]?.body).toEqual({
      format_version: 1,
      purpose: 'inference',
      provider: 'openai',
      resource: 'r',
      scopes: ['chat'],
      subject: { kind: 'user', tenant: 't1', user: 'alice' },
      actor: { service: 'run-executor', agent_id: 'a1', run: 'r1' },
    });
    expect(broker.received[0]?.headers).toMatchObject({
      authorization: 'Bearer tok-1',
      'content-type': 'application/json',
    });
    expect(credential).toMatchObject({
      credential: 'sk-1',
      tokenType: 'Bearer',
      grantedScopes: ['chat'],
      actorAsserted: true,
      formatVersion: 1,
      broker: new URL(broker.url).host,
    });
    expect(credential.expiresAt.getTime()).toBeGreaterThanOrEqual(before + 3_600_000);
  });

  it('sends no Authorization header without a token', async () => {
    const broker = await startBroker();
    await clientOf().get(requestTo(broker));
    expect(broker.received[0]?.headers.authorization).toBeUndefined();
  });

  it('takes an expires_at answer', async () => {
    const expiresAt = new Date(Date.now() + 600_000).toISOString();
    const broker = await startBroker(answer({ expires_in: undefined, expires_at: expiresAt }));
    expect((await clientOf().get(requestTo(broker))).expiresAt.toISOString()).toBe(expiresAt);
  });

  it('answers from the cache until the expiry less the skew, then fetches a refresh', async () => {
    const broker = await startBroker();
    let clock = Date.now();
    const client = clientOf({ now: () => clock, skewMs: 30_000 });
    const fetches: BrokerFetch[] = [];
    const observe = (f: BrokerFetch) => void fetches.push(f);
    expect((await client.get(requestTo(broker), observe)).credential).toBe('sk-1');
    clock += 3_569_000;
    expect((await client.get(requestTo(broker), observe)).credential).toBe('sk-1');
    clock += 2_000;
    expect((await client.get(requestTo(broker), observe)).credential).toBe('sk-2');
    expect(broker.received).toHaveLength(2);
    expect(fetches.map((f) => [f.phase, f.outcome])).toEqual([
      ['initial', 'ok'],
      ['refresh', 'ok'],
    ]);
  });

  it('keeps one credential per subject, provider, resource and scopes (in any order), whatever the actor', async () => {
    const broker = await startBroker();
    const client = clientOf();
    await client.get(requestTo(broker, { scopes: ['a', 'b'] }));
    await client.get(requestTo(broker, { scopes: ['b', 'a'], actor: { run: 'another-run' } }));
    await client.get(requestTo(broker, { subject: { kind: 'user', tenant: 't1', user: 'bob' } }));
    await client.get(requestTo(broker, { provider: 'other' }));
    await client.get(requestTo(broker, { resource: 'https://api.example' }));
    expect(broker.received).toHaveLength(4);
    expect(client.size).toBe(4);
  });

  it('shares one request among concurrent asks of one credential; only its sender hears of the fetch', async () => {
    let release: () => void = () => undefined;
    const broker = await startBroker((body, res, n) => {
      release = () => answer()(body, res, n);
    });
    const client = clientOf();
    const heard: string[] = [];
    const asks = ['first', 'second', 'third'].map((who) => client.get(requestTo(broker), () => void heard.push(who)));
    await expect.poll(() => broker.received.length).toBe(1);
    release();
    const credentials = await Promise.all(asks);
    expect(credentials.map((c) => c.credential)).toEqual(['sk-1', 'sk-1', 'sk-1']);
    expect(heard).toEqual(['first']);
    expect(broker.received).toHaveLength(1);
  });

  it('uses a credential that expires within the skew once: the next ask fetches a refresh', async () => {
    const broker = await startBroker(answer({ expires_in: 10 }));
    const client = clientOf();
    const phases: string[] = [];
    expect((await client.get(requestTo(broker), (f) => void phases.push(f.phase))).credential).toBe('sk-1');
    expect((await client.get(requestTo(broker), (f) => void phases.push(f.phase))).credential).toBe('sk-2');
    expect(phases).toEqual(['initial', 'refresh']);
  });

  it('keeps at most maxEntries credentials, dropping the least recently used', async () => {
    const broker = await startBroker();
    const client = clientOf({ maxEntries: 2 });
    const of = (user: string) => requestTo(broker, { subject: { kind: 'user', tenant: 't1', user } });
    await client.get(of('a'));
    await client.get(of('b'));
    await client.get(of('a'));
    await client.get(of('c'));
    expect(client.size).toBe(2);
    await client.get(of('a'));
    await client.get(of('b'));
    expect(broker.received.map((r) => (r.body.subject as { user: string }).user)).toEqual(['a', 'b', 'c', 'b']);
  });

  it('fetches again, as a refresh, once a credential is invalidated', async () => {
    const broker = await startBroker();
    const client = clientOf();
    const phases: string[] = [];
    await client.get(requestTo(broker), (f) => void phases.push(f.phase));
    client.invalidate(requestTo(broker));
    expect((await client.get(requestTo(broker), (f) => void phases.push(f.phase))).credential).toBe('sk-2');
    expect(phases).toEqual(['initial', 'refresh']);
  });

  it('fails timeout, retryable, when the broker does not answer in time', async () => {
    const broker = await startBroker(() => undefined);
    const heard: BrokerFetch[] = [];
    const error = await failureOf(clientOf({ timeoutMs: 100 }).get(requestTo(broker), (f) => void heard.push(f)));
    expect(error).toMatchObject({ reason: 'timeout', retryable: true, broker: new URL(broker.url).host });
    expect(heard.map((f) => f.outcome)).toEqual(['timeout']);
  });

  it('fails unreachable, retryable, when nothing listens', async () => {
    const broker = await startBroker();
    await broker.stop();
    expect(await failureOf(clientOf().get(requestTo(broker)))).toMatchObject({
      reason: 'unreachable',
      retryable: true,
    });
  });

  it.each([
    [503, true],
    [429, true],
    [400, false],
    [403, false],
  ])('fails http_%i (retryable %s) on that status', async (status, retryable) => {
    const broker = await startBroker((_b, res) => json(res, status, { error: 'no' }));
    expect(await failureOf(clientOf().get(requestTo(broker)))).toMatchObject({ reason: `http_${status}`, retryable });
  });

  it.each([
    ['no JSON', (_b: unknown, res: ServerResponse) => void res.writeHead(200).end('<html>')],
    ['no credential', (_b: unknown, res: ServerResponse) => json(res, 200, { format_version: 1, expires_in: 60 })],
    ['no expiry', (_b: unknown, res: ServerResponse) => json(res, 200, { format_version: 1, credential: 'x' })],
    ['format version 2', answer({ format_version: 2 })],
  ])('fails malformed on an answer with %s', async (_what, respond) => {
    const broker = await startBroker(respond as Responder);
    expect(await failureOf(clientOf().get(requestTo(broker)))).toMatchObject({ reason: 'malformed', retryable: false });
  });

  it('fails expired on a credential whose expiry has passed', async () => {
    const broker = await startBroker(answer({ expires_in: undefined, expires_at: '2020-01-01T00:00:00Z' }));
    expect(await failureOf(clientOf().get(requestTo(broker)))).toMatchObject({ reason: 'expired' });
  });

  it('refuses plain http to a host that is not loopback before sending anything, telling the asker', async () => {
    const heard: BrokerFetch[] = [];
    const error = await failureOf(
      clientOf().get(requestTo({ url: 'http://broker.example/c' }), (f) => void heard.push(f)),
    );
    expect(error.reason).toBe('invalid_url');
    expect(heard.map((f) => f.outcome)).toEqual(['invalid_url']);
  });

  it('never logs the credential, nor puts it in an error', async () => {
    const memory = createMemoryLogger();
    const broker = await startBroker(answer({ credential: 'sk-very-secret' }));
    await clientOf({ logger: memory.logger }).get(requestTo(broker));
    broker.respond = (_b, res) => json(res, 500, { credential: 'sk-very-secret' });
    const error = await failureOf(clientOf({ logger: memory.logger }).get(requestTo(broker)));
    expect(memory.lines().length).toBeGreaterThan(0);
    expect(JSON.stringify(memory.lines())).not.toContain('sk-very-secret');
    expect(`${error.message} ${error.stack ?? ''}`).not.toContain('sk-very-secret');
  });
});
