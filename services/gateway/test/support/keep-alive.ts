import { Agent, request } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';

/** One answer read over a real socket. */
export interface WireResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  /** The socket it came on (to tell reuse from a new connection). */
  readonly socket: Socket;
}

/** What to send: the body in `chunks`, written one after another as the socket takes them. */
export interface WireRequest {
  readonly method?: string;
  readonly path: string;
  readonly headers?: Record<string, string>;
  readonly chunks?: readonly (string | Buffer)[];
  /** Fails the call when no answer came within this many ms. @default 3000 */
  readonly timeoutMs?: number;
}

/**
 * A keep-alive client of one connection at a time, as a pooling proxy is:
 * a second request goes on the socket the first left open.
 */
export class KeepAliveClient {
  readonly agent = new Agent({ keepAlive: true, maxSockets: 1 });
  readonly #base: URL;

  constructor(baseUrl: string) {
    this.#base = new URL(baseUrl);
  }

  send(wire: WireRequest): Promise<WireResponse> {
    const timeoutMs = wire.timeoutMs ?? 3_000;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        outgoing.destroy();
        reject(new Error(`no answer to ${wire.method ?? 'POST'} ${wire.path} within ${timeoutMs} ms`));
      }, timeoutMs);
      const outgoing = request(
        {
          agent: this.agent,
          host: this.#base.hostname,
          port: this.#base.port,
          method: wire.method ?? 'POST',
          path: wire.path,
          headers: withLength(wire),
        },
        (response) => {
          const parts: Buffer[] = [];
          response.on('data', (part: Buffer) => parts.push(part));
          response.on('error', (error) => {
            clearTimeout(timer);
            reject(error);
          });
          response.on('end', () => {
            clearTimeout(timer);
            resolve({
              status: response.statusCode ?? 0,
              headers: response.headers,
              text: Buffer.concat(parts).toString('utf8'),
              socket: response.socket,
            });
          });
        },
      );
      // The server may answer and close before the whole body is written: that is allowed.
      outgoing.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      void writeChunks(outgoing, wire.chunks ?? []);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** The headers, with `content-length` unless the request says it is chunked. */
function withLength(wire: WireRequest): Record<string, string> {
  const headers = { ...wire.headers };
  if (headers['transfer-encoding'] !== undefined || headers['content-length'] !== undefined) return headers;
  const length = (wire.chunks ?? []).reduce((sum, chunk) => sum + Buffer.byteLength(chunk), 0);
  return { ...headers, 'content-length': String(length) };
}

async function writeChunks(outgoing: ReturnType<typeof request>, chunks: readonly (string | Buffer)[]): Promise<void> {
  for (const chunk of chunks) {
    if (outgoing.destroyed || outgoing.writableEnded) return;
    if (!outgoing.write(chunk)) {
      await new Promise<void>((done) => {
        const settle = () => {
          outgoing.off('drain', settle);
          outgoing.off('close', settle);
          done();
        };
        outgoing.once('drain', settle);
        outgoing.once('close', settle);
      });
    }
  }
  if (!outgoing.destroyed) outgoing.end();
}

/** `text` cut into pieces of `size` characters. */
export function inPieces(text: string, size = 16_384): string[] {
  const pieces: string[] = [];
  for (let at = 0; at < text.length; at += size) pieces.push(text.slice(at, at + size));
  return pieces;
}
