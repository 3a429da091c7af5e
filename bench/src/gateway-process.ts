/**
 * The gateway under test as its own process (`services/gateway/src/main.ts`),
 * on a free port, so that its resident memory is measured alone.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export interface GatewayProcess {
  readonly baseUrl: string;
  /** The dev admin token. */
  readonly token: string;
  readonly pid: number;
  /** Resident set size of the gateway process, in bytes (Linux `/proc`). */
  rss(): Promise<number>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  server.close();
  await once(server, 'close');
  return port;
}

/** Starts the gateway on `natsUrl` with extra environment and waits until it answers. */
export async function startGatewayProcess(natsUrl: string, env: Record<string, string> = {}): Promise<GatewayProcess> {
  const port = await freePort();
  const main = fileURLToPath(new URL('../../services/gateway/src/main.ts', import.meta.url));
  const child: ChildProcess = spawn(process.execPath, [main], {
    env: { ...process.env, NATS_URL: natsUrl, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  let token: string | undefined;
  for await (const line of createInterface({ input: child.stdout! })) {
    const match = /^SERVICE_DEV_TOKEN=(.+)$/.exec(line);
    if (match?.[1]) {
      token = match[1];
      break;
    }
  }
  if (token === undefined) throw new Error('the gateway printed no SERVICE_DEV_TOKEN');
  child.stdout!.resume();
  for (let attempt = 0; ; attempt++) {
    const ok = await fetch(`${baseUrl}/healthz`).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) break;
    if (attempt > 200) throw new Error('the gateway did not answer /healthz');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const pid = child.pid!;
  return {
    baseUrl,
    token,
    pid,
    async rss() {
      const status = await readFile(`/proc/${pid}/status`, 'utf8');
      const kb = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
      return Number(kb) * 1024;
    },
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}
