import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readiness } from './readiness.ts';

/** Liveness: answers 200 whenever the event loop does. */
export const LIVENESS_PATH = '/healthz';
/** Readiness: 200 only while the service serves and its dependencies answer. */
export const READINESS_PATH = '/readyz';
/** The process's metrics in the Prometheus text format. */
export const METRICS_PATH = '/metrics';

/** Options of {@link startProbeServer}. */
export interface ProbeServerOptions {
  readonly port: number;
  /** Interface to bind. @default '0.0.0.0' */
  readonly host?: string;
  /** Asked on every `GET /readyz`; expected never to reject (a rejection answers `unavailable`). */
  readonly readiness: () => Promise<Readiness>;
  /**
   * Answers `GET /metrics`: the exposition text and its content type, or
   * `undefined` while there are none yet (then 503). Absent: no `/metrics`.
   */
  readonly metrics?: () => Promise<{ readonly text: string; readonly contentType: string } | undefined>;
}

/** A listening probe server. */
export interface ProbeServer {
  /** The port it listens on. */
  readonly port: number;
  /** Stops listening and drops every open connection. Idempotent. */
  close(): Promise<void>;
}

/** The server could not listen (port taken, no permission, unknown interface). */
export class ProbeListenError extends Error {
  readonly host: string;
  readonly port: number;
  /** The system's error code, e.g. `EADDRINUSE`. */
  readonly code: string | undefined;

  constructor(host: string, port: number, cause: unknown) {
    const code = (cause as NodeJS.ErrnoException | undefined)?.code;
    super(`cannot listen on ${host}:${port}${code === undefined ? '' : ` (${code})`}`, { cause });
    this.name = 'ProbeListenError';
    this.host = host;
    this.port = port;
    this.code = code;
  }
}

function send(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(text)),
    'cache-control': 'no-store',
    ...headers,
  });
  response.end(text);
}

async function sendMetrics(response: ServerResponse, options: ProbeServerOptions): Promise<void> {
  const metrics = await options.metrics?.();
  if (metrics === undefined) {
    send(response, 503, { code: 'unavailable', message: 'metrics are not set up yet' });
    return;
  }
  response.writeHead(200, {
    'content-type': metrics.contentType,
    'content-length': String(Buffer.byteLength(metrics.text)),
    'cache-control': 'no-store',
  });
  response.end(metrics.text);
}

async function answer(request: IncomingMessage, response: ServerResponse, options: ProbeServerOptions): Promise<void> {
  const path = (request.url ?? '/').split('?', 1)[0];
  const served = path === LIVENESS_PATH || path === READINESS_PATH || (path === METRICS_PATH && options.metrics);
  if (!served) {
    send(response, 404, {
      code: 'not_found',
      message: `no probe at ${path}; the probes are GET ${LIVENESS_PATH} and GET ${READINESS_PATH}`,
    });
    return;
  }
  if (request.method !== 'GET') {
    response.writeHead(405, { allow: 'GET' }).end();
    return;
  }
  if (path === METRICS_PATH) {
    await sendMetrics(response, options);
    return;
  }
  if (path === LIVENESS_PATH) {
    send(response, 200, { status: 'ok' });
    return;
  }
  const readiness = await options.readiness().catch((): Readiness => ({ status: 'unavailable', checks: {} }));
  send(response, readiness.status === 'ready' ? 200 : 503, readiness);
}

/**
 * Starts a small HTTP server (node:http, nothing else) for Kubernetes probes:
 * `GET /healthz` answers 200 `{"status":"ok"}` whenever the event loop turns,
 * so a wedged process fails its liveness probe; `GET /readyz` answers 200 when
 * `readiness` says `ready` and 503 with its status and checks otherwise.
 * With `metrics`, `GET /metrics` answers the Prometheus text exposition.
 * Another path is 404 `not_found`, another verb a bare 405. Resolves once
 * listening; rejects with {@link ProbeListenError} when it cannot.
 */
export async function startProbeServer(options: ProbeServerOptions): Promise<ProbeServer> {
  const host = options.host ?? '0.0.0.0';
  const server = createServer((request, response) => {
    answer(request, response, options).catch(() => {
      if (!response.headersSent) send(response, 503, { status: 'unavailable', checks: {} });
      else response.destroy();
    });
  });
  // A probe is one small GET: a client slower than this only holds a socket.
  server.headersTimeout = 5_000;
  server.requestTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) => reject(new ProbeListenError(host, options.port, error)));
    server.listen(options.port, host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  let closed: Promise<void> | undefined;
  return {
    port,
    close() {
      closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}
