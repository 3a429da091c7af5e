import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A credential broker that a test starts on 127.0.0.1 and an ephemeral port,
 * speaking the protocol of `@ars/service-kit`'s credential broker client
 * (`POST`, JSON `{format_version: 1, purpose, provider, …}` in, JSON
 * `{format_version, credential, expires_in | expires_at, …}` out). It
 * records every request, and can be told to fail, hang, answer garbage,
 * or hand out short-lived or already expired credentials.
 */

/** A way to answer badly: an HTTP status, a body that is not the protocol's, no answer at all, or an expired credential. */
export type BrokerFault = { readonly status: number } | 'malformed' | 'hang' | 'expired';

/** One request the broker received. */
export interface BrokerRequestRecord {
  /** The parsed JSON body (`undefined` when it was not JSON). */
  readonly body: Record<string, unknown> | undefined;
  /** The `Authorization` header, if any. */
  readonly authorization: string | undefined;
  readonly traceparent: string | undefined;
}

/** Options of {@link startCredentialBroker}. */
export interface StartCredentialBrokerOptions {
  /** Answers 401 to a request without `Authorization: Bearer <token>`. @default any request is served */
  readonly token?: string;
  /** Lifetime of the credentials answered, in seconds. @default 3600 */
  readonly expiresInSeconds?: number;
  /** `expires_in` (seconds) or `expires_at` (ISO 8601) in answers. @default 'expires_in' */
  readonly expiry?: 'expires_in' | 'expires_at';
  /** The credential of the `n`-th answer (1-based). @default `cred-<n>` */
  readonly credential?: (body: Record<string, unknown> | undefined, n: number) => string;
  /** The `audience` of an answer. @default the request's `provider` */
  readonly audience?: (body: Record<string, unknown> | undefined) => string | readonly string[];
}

export interface TestCredentialBroker {
  /** The URL to configure (`http://127.0.0.1:<port>/credentials`). */
  readonly url: string;
  /** Every request, in arrival order. */
  readonly requests: BrokerRequestRecord[];
  /** Lifetime of the credentials answered from now on, in seconds. */
  expiresInSeconds: number;
  /** Answers the next `times` requests with `fault` (after those queued already). */
  fail(fault: BrokerFault, times?: number): void;
  /** Ends hanging answers and stops listening. */
  stop(): Promise<void>;
}

const JSON_TYPE = { 'content-type': 'application/json' };

function readBody(req: IncomingMessage): Promise<Record<string, unknown> | undefined> {
  return new Promise((resolve) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    req.on('end', () => {
      try {
        const value: unknown = JSON.parse(text);
        resolve(typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined);
      } catch {
        resolve(undefined);
      }
    });
  });
}

/** Starts the broker; `stop()` it in the test's teardown. */
export function startCredentialBroker(options: StartCredentialBrokerOptions = {}): Promise<TestCredentialBroker> {
  const requests: BrokerRequestRecord[] = [];
  const faults: BrokerFault[] = [];
  let answered = 0;

  function answer(res: ServerResponse, body: Record<string, unknown> | undefined, fault: BrokerFault | undefined) {
    if (fault === 'hang') return;
    if (fault === 'malformed') return void res.writeHead(200, JSON_TYPE).end('{"credential": ');
    if (typeof fault === 'object') {
      return void res.writeHead(fault.status, JSON_TYPE).end(JSON.stringify({ error: 'broker_failure' }));
    }
    answered += 1;
    const lifetimeS = fault === 'expired' ? -60 : broker.expiresInSeconds;
    const expiry =
      options.expiry === 'expires_at' || fault === 'expired'
        ? { expires_at: new Date(Date.now() + lifetimeS * 1000).toISOString() }
        : { expires_in: lifetimeS };
    const credential = options.credential?.(body, answered) ?? `cred-${answered}`;
    const scopes = Array.isArray(body?.scopes) ? body.scopes : [];
    res.writeHead(200, JSON_TYPE).end(
      JSON.stringify({
        format_version: 1,
        credential,
        token_type: 'Bearer',
        ...expiry,
        granted_scopes: scopes,
        audience: options.audience?.(body) ?? (typeof body?.provider === 'string' ? body.provider : 'unknown'),
        actor_asserted: true,
      }),
    );
  }

  const server = createServer((req, res) => {
    void readBody(req).then((body) => {
      const authorization = req.headers.authorization;
      const traceparent = req.headers.traceparent as string | undefined;
      requests.push({ body, authorization, traceparent });
      if (req.method !== 'POST') return void res.writeHead(405, JSON_TYPE).end('{}');
      if (options.token !== undefined && authorization !== `Bearer ${options.token}`) {
        return void res.writeHead(401, JSON_TYPE).end(JSON.stringify({ error: 'unauthorized' }));
      }
      answer(res, body, faults.shift());
    });
  });

  const broker = {
    url: '',
    requests,
    expiresInSeconds: options.expiresInSeconds ?? 3_600,
    fail(fault: BrokerFault, times = 1) {
      for (let i = 0; i < times; i++) faults.push(fault);
    },
    stop: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      broker.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/credentials`;
      resolve(broker);
    });
  });
}
