import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { findFreePort } from '@ars/bus';

/**
 * `@modelcontextprotocol/server-everything`, the MCP reference server with
 * every protocol feature, for tests and benchmarks: its entry script (run
 * `node <it> stdio`, or in an agent's `mcp_connections`), and a launcher of
 * its HTTP modes on a free port.
 */

const require = createRequire(import.meta.url);

/** The server's entry script: `node <it> stdio | streamableHttp | sse`. */
export const MCP_EVERYTHING_ENTRY: string = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');

/** A server-everything listening over HTTP. */
export interface McpHttpServer {
  /** The MCP endpoint: `/mcp` (streamable HTTP) or `/sse`. */
  readonly url: string;
  /** Stops it and waits for its exit (idempotent). */
  stop(): Promise<void>;
}

/** Starts server-everything in `mode` on a free port; resolves once it listens. */
export async function startMcpEverythingHttp(mode: 'streamableHttp' | 'sse' = 'streamableHttp'): Promise<McpHttpServer> {
  const port = await findFreePort();
  const child: ChildProcess = spawn(process.execPath, [MCP_EVERYTHING_ENTRY, mode], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  };
  try {
    await new Promise<void>((resolve, reject) => {
      let seen = '';
      child.stderr?.on('data', (chunk: Buffer) => {
        seen += chunk.toString('utf8');
        if (/listening on port|running on port/i.test(seen)) resolve();
      });
      child.once('exit', (code) => reject(new Error(`server-everything ${mode} exited (${code}): ${seen}`)));
    });
  } catch (error) {
    await stop();
    throw error;
  }
  // Keep draining its log so that a chatty server never blocks on a full pipe.
  child.stderr?.resume();
  return { url: `http://127.0.0.1:${port}${mode === 'sse' ? '/sse' : '/mcp'}`, stop };
}
