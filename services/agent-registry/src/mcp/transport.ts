import { readdir, readFile } from 'node:fs/promises';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { McpConnection } from '@ars/contracts';
import type { Logger } from '@ars/telemetry';
import { MCP_APP_MIME_TYPE, MCP_APPS_EXTENSION_ID } from './apps.ts';

/**
 * Opens one MCP client session on the official SDK: stdio (spawned, no
 * shell), streamable HTTP (falling back to the older HTTP+SSE transport when
 * the server answers the streamable POST with a 4xx other than 401, as the
 * SDK's backwards-compatibility guide does), or SSE as configured. An
 * OAuth-bound server's connection carries its grant's `authProvider`; a 401
 * never falls back (the server wants a token, not another transport).
 */

/** The host's client name and version in `initialize`. */
const CLIENT_INFO = { name: 'ars-agent-registry', version: '0.1.0' };

/**
 * What the host announces in `initialize`: it renders MCP Apps views
 * (`io.modelcontextprotocol/ui`, HTML of {@link MCP_APP_MIME_TYPE}); a
 * server may leave its app tools and `_meta.ui` out for a host that does not.
 */
export const CLIENT_CAPABILITIES = Object.freeze({
  extensions: { [MCP_APPS_EXTENSION_ID]: { mimeTypes: [MCP_APP_MIME_TYPE] } },
});

/** Bytes of a stdio server's stderr kept for the connection's last error. */
const STDERR_TAIL_BYTES = 2_048;

/** A connected SDK client and how to end it. */
export interface OpenedClient {
  readonly client: Client;
  /** The transport actually used (`sse` after a fallback). */
  readonly transport: 'stdio' | 'streamable_http' | 'sse';
  /** The stdio server's last stderr output (logged when it breaks). */
  stderrTail(): string;
  /** Ends the session: HTTP sessions are terminated, a stdio server and every process it started are killed. */
  close(): Promise<void>;
}

/** Options of {@link openClient}. */
export interface OpenClientOptions {
  /** Bounds `initialize`, in ms. */
  readonly timeoutMs: number;
  /** Largest single message a stdio server may write, in bytes (past it the SDK drops the connection). */
  readonly stdioMaxMessageBytes: number;
  readonly logger: Logger;
  /** Wires handlers on the client before it connects (notifications arrive right after `initialize`). */
  readonly prepare: (client: Client) => void;
  /** An OAuth-bound server's grant: its `tokens()` give the `Authorization: Bearer` of every HTTP request. */
  readonly authProvider?: OAuthClientProvider;
}

function newClient(prepare: (client: Client) => void): Client {
  const client = new Client(CLIENT_INFO, { capabilities: structuredClone(CLIENT_CAPABILITIES) });
  prepare(client);
  return client;
}

/** The pids of every descendant of `pid` (Linux `/proc`; elsewhere none). */
async function descendantsOf(pid: number): Promise<number[]> {
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return [];
  }
  const children = new Map<number, number[]>();
  await Promise.all(
    entries
      .filter((entry) => /^\d+$/.test(entry))
      .map(async (entry) => {
        try {
          const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
          // `pid (comm) state ppid …`: comm may hold spaces and parentheses.
          const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
          children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
        } catch {
          // The process ended meanwhile.
        }
      }),
  );
  const found: number[] = [];
  for (let queue = [pid]; queue.length > 0;) {
    const next = queue.shift() as number;
    for (const child of children.get(next) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

function signal(pid: number, name: NodeJS.Signals): boolean {
  try {
    process.kill(pid, name);
    return true;
  } catch {
    return false;
  }
}

/** SIGTERM every pid still alive, then SIGKILL the ones that outlived `graceMs`. */
async function killAll(pids: readonly number[], graceMs: number): Promise<void> {
  const alive = pids.filter((pid) => signal(pid, 'SIGTERM'));
  if (alive.length === 0) return;
  await new Promise((resolve) => setTimeout(resolve, graceMs).unref());
  for (const pid of alive) signal(pid, 'SIGKILL');
}

async function openStdio(spec: McpConnection, options: OpenClientOptions): Promise<OpenedClient> {
  if (spec.command === undefined) throw new Error(`MCP server ${spec.server_id}: a stdio connection needs a command`);
  const transport = new StdioClientTransport({
    command: spec.command,
    args: spec.args ?? [],
    stderr: 'pipe',
    maxBufferSize: options.stdioMaxMessageBytes,
  });
  let tail = '';
  // Read it always: an unread pipe fills and blocks the server.
  transport.stderr?.on('data', (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-STDERR_TAIL_BYTES);
  });
  const client = newClient(options.prepare);
  try {
    await client.connect(transport, { timeout: options.timeoutMs });
  } catch (error) {
    // Only to the log: a server's stderr may hold what its arguments carried.
    if (tail !== '')
      options.logger.warn({ server_id: spec.server_id, stderr: tail.trim().slice(-512) }, 'mcp stdio server stderr');
    throw error;
  }
  const pid = transport.pid;
  return {
    client,
    transport: 'stdio',
    stderrTail: () => tail.trim(),
    close: async () => {
      // Found before the server goes: its children are re-parented once it exits.
      const descendants = pid === null ? [] : await descendantsOf(pid);
      await client.close();
      await killAll(descendants, 1_000);
    },
  };
}

function authOf(options: OpenClientOptions): { authProvider?: OAuthClientProvider } {
  return options.authProvider === undefined ? {} : { authProvider: options.authProvider };
}

async function openSse(url: URL, options: OpenClientOptions): Promise<OpenedClient> {
  const client = newClient(options.prepare);
  await client.connect(new SSEClientTransport(url, authOf(options)), { timeout: options.timeoutMs });
  return { client, transport: 'sse', stderrTail: () => '', close: () => client.close() };
}

async function openStreamable(url: URL, spec: McpConnection, options: OpenClientOptions): Promise<OpenedClient> {
  const client = newClient(options.prepare);
  const transport = new StreamableHTTPClientTransport(url, authOf(options));
  try {
    await client.connect(transport, { timeout: options.timeoutMs });
  } catch (error) {
    if (!(error instanceof StreamableHTTPError) || error.code === undefined || error.code < 400 || error.code >= 500) {
      throw error;
    }
    if (error.code === 401) throw error;
    options.logger.info(
      { server_id: spec.server_id, status: error.code },
      'mcp server refused streamable HTTP; falling back to HTTP+SSE',
    );
    return openSse(url, options);
  }
  return {
    client,
    transport: 'streamable_http',
    stderrTail: () => '',
    close: async () => {
      // Best effort: a server that is gone cannot end the session.
      await transport.terminateSession().catch(() => undefined);
      await client.close();
    },
  };
}

/** Connects to the server `spec` describes and runs `initialize` (bounded by `timeoutMs`). */
export async function openClient(spec: McpConnection, options: OpenClientOptions): Promise<OpenedClient> {
  if (spec.transport === 'stdio') return openStdio(spec, options);
  if (spec.url === undefined) throw new Error(`MCP server ${spec.server_id}: an HTTP connection needs a url`);
  const url = new URL(spec.url);
  return spec.transport === 'sse' ? openSse(url, options) : openStreamable(url, spec, options);
}
