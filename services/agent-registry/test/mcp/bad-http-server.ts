import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small MCP server over streamable HTTP (JSON answers, no session) that
 * misbehaves on request, written against the wire rather than the SDK so it
 * can break the protocol: tools `echo`, `not_json` (a 200 whose body is not
 * JSON), `not_jsonrpc` (JSON that is not JSON-RPC), `hang` (never answers),
 * `crash` (the connection is cut mid-call, as when the server dies). With
 * `hangInitialize` it never answers `initialize`; with `unauthorizedThenHang`
 * it answers the first `initialize` 401 (as a server that wants a token) and
 * never answers another (the host's probe for OAuth metadata hangs).
 */
export interface BadHttpServer {
  /** The MCP endpoint. */
  readonly url: string;
  /** Requests of each JSON-RPC method received so far. */
  readonly seen: Map<string, number>;
  stop(): Promise<void>;
}

const TOOLS = ['echo', 'not_json', 'not_jsonrpc', 'hang', 'crash'].map((name) => ({
  name,
  description: `the ${name} tool`,
  inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
}));

interface JsonRpcRequest {
  readonly id?: number | string;
  readonly method: string;
  readonly params?: { name?: string; arguments?: { text?: string }; protocolVersion?: string };
}

async function bodyOf(req: IncomingMessage): Promise<JsonRpcRequest> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as JsonRpcRequest;
}

function json(res: ServerResponse, value: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));
}

/** How the server misbehaves beyond its tools. */
export interface BadHttpServerOptions {
  readonly hangInitialize?: boolean;
  readonly unauthorizedThenHang?: boolean;
}

export async function startBadHttpServer(options: BadHttpServerOptions = {}): Promise<BadHttpServer> {
  const seen = new Map<string, number>();
  const open = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    void bodyOf(req).then((message) => {
      seen.set(message.method, (seen.get(message.method) ?? 0) + 1);
      const answer = (result: unknown) => json(res, { jsonrpc: '2.0', id: message.id, result });
      if (message.id === undefined) {
        res.writeHead(202).end();
        return;
      }
      switch (message.method) {
        case 'initialize':
          if (options.unauthorizedThenHang === true && seen.get('initialize') === 1) {
            res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"invalid_token"}');
            return;
          }
          if (options.hangInitialize === true || options.unauthorizedThenHang === true) {
            open.add(res);
            return;
          }
          answer({
            protocolVersion: message.params?.protocolVersion ?? '2025-06-18',
            capabilities: { tools: {} },
            serverInfo: { name: 'bad-http', version: '1.0.0' },
          });
          return;
        case 'ping':
          answer({});
          return;
        case 'tools/list':
          answer({ tools: TOOLS });
          return;
        case 'tools/call':
          break;
        default:
          json(res, { jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'no such method' } });
          return;
      }
      switch (message.params?.name) {
        case 'not_json':
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc": "2.0", this is not JSON');
          return;
        case 'not_jsonrpc':
          json(res, { hello: 'world' });
          return;
        case 'hang':
          open.add(res);
          return;
        case 'crash':
          req.socket.destroy();
          return;
        default:
          answer({ content: [{ type: 'text', text: message.params?.arguments?.text ?? '' }] });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    seen,
    stop: async () => {
      for (const res of open) res.socket?.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
