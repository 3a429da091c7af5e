import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An in-process HTTP server on an ephemeral port, for client tests. */
export interface LocalServer {
  readonly baseUrl: string;
  /** Every request received, in order, with its headers and body. */
  readonly requests: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[];
  close(): Promise<void>;
}

export async function startLocalServer(
  handler: (request: IncomingMessage, response: ServerResponse, index: number) => void,
): Promise<LocalServer> {
  const requests: LocalServer['requests'] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      const index =
        requests.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body }) - 1;
      handler(request, response, index);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
