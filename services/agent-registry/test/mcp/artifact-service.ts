import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RpcClient } from '@ars/bus';

/**
 * The real artifact service as its own process (`node services/artifact/src/main.ts`)
 * on the test's nats-server: services talk over NATS and never import each
 * other, tests included.
 */
export interface ArtifactProcess {
  stop(): Promise<void>;
}

const REPO = resolve(import.meta.dirname, '../../../..');
const READY_TIMEOUT_MS = 30_000;

/** Starts it and resolves once it answers `_health` (asked through `rpc`). */
export async function startArtifactService(natsUrl: string, rpc: RpcClient): Promise<ArtifactProcess> {
  const dataDir = await mkdtemp(join(tmpdir(), 'ars-artifact-for-mcp-'));
  const child = spawn(process.execPath, [join('services', 'artifact', 'src', 'main.ts')], {
    cwd: REPO,
    env: { ...process.env, NATS_URL: natsUrl, DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let output = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-10_000);
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
    await rm(dataDir, { recursive: true, force: true });
  };
  const deadline = Date.now() + READY_TIMEOUT_MS;
  const probe = { tenant: 'probe', user: 'probe', session: 'probe', scopes: [] };
  for (;;) {
    try {
      await rpc.call('artifact', '_health', probe, {}, { timeoutMs: 500 });
      return { stop };
    } catch (error) {
      if (child.exitCode !== null || Date.now() > deadline) {
        await stop();
        throw new Error(`the artifact service did not start: ${output}`, { cause: error });
      }
      await sleep(50);
    }
  }
}
