import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ARS_NODE_FLAGS, SystemOptionsError, parseSystemOptions, restartPolicy } from '../src/system-options.ts';

describe('parseSystemOptions', () => {
  it('defaults host, timeouts and restart', () => {
    expect(parseSystemOptions({ dataDir: '/tmp/d', port: 0 })).toMatchObject({
      host: '127.0.0.1',
      readyTimeoutMs: 60_000,
      stopGraceMs: 10_000,
      restart: false,
      nodeFlags: ['--min-semi-space-size=32', '--max-semi-space-size=32', '--no-memory-reducer-favors-memory'],
      natsMemoryLimitMiB: 160,
    });
    expect(parseSystemOptions({ dataDir: '/tmp/d', port: 0, nodeFlags: [] }).nodeFlags).toEqual([]);
  });

  it("takes 0 as Go's defaults for the local nats-server and any budget from 64 MiB", () => {
    expect(parseSystemOptions({ dataDir: '/d', port: 0, natsMemoryLimitMiB: 0 }).natsMemoryLimitMiB).toBe(0);
    expect(parseSystemOptions({ dataDir: '/d', port: 0, natsMemoryLimitMiB: 64 }).natsMemoryLimitMiB).toBe(64);
    expect(parseSystemOptions({ dataDir: '/d', port: 0, natsMemoryLimitMiB: 2048 }).natsMemoryLimitMiB).toBe(2048);
  });

  it('serves no nats-server monitoring unless a port is given', () => {
    expect(parseSystemOptions({ dataDir: '/d', port: 0 }).natsMonitorPort).toBeUndefined();
    expect(parseSystemOptions({ dataDir: '/d', port: 0, natsMonitorPort: 8222 }).natsMonitorPort).toBe(8222);
  });

  it.each([
    [{ dataDir: '', port: 0 }, 'dataDir'],
    [{ dataDir: '/d', port: 70_000 }, 'port'],
    [{ dataDir: '/d', port: 1.5 }, 'port'],
    [{ dataDir: '/d', port: 0, natsUrl: 'localhost:4222' }, 'natsUrl'],
    [{ dataDir: '/d', port: 0, mongoUrl: 'http://m' }, 'mongoUrl'],
    [{ dataDir: '/d', port: 0, nodeFlags: ['--inspect', 'evil.js'] }, 'nodeFlags.1'],
    [{ dataDir: '/d', port: 0, natsMemoryLimitMiB: 32 }, 'natsMemoryLimitMiB'],
    [{ dataDir: '/d', port: 0, natsMemoryLimitMiB: -1 }, 'natsMemoryLimitMiB'],
    [{ dataDir: '/d', port: 0, natsMemoryLimitMiB: 100.5 }, 'natsMemoryLimitMiB'],
    [{ dataDir: '/d', port: 0, natsMonitorPort: 0 }, 'natsMonitorPort'],
    [{ dataDir: '/d', port: 0, natsMonitorPort: 70_000 }, 'natsMonitorPort'],
  ])('names the bad option in %j', (input, option) => {
    expect(() => parseSystemOptions(input)).toThrow(SystemOptionsError);
    expect(() => parseSystemOptions(input)).toThrow(new RegExp(`${option}: `));
  });
});

describe('restartPolicy', () => {
  it('is off by default and fills in the defaults when on', () => {
    expect(restartPolicy(false)).toBeUndefined();
    expect(restartPolicy(true)).toEqual({
      initialDelayMs: 1_000,
      maxDelayMs: 30_000,
      maxConsecutiveCrashes: 5,
      stableAfterMs: 30_000,
    });
    expect(restartPolicy({ maxConsecutiveCrashes: 2 })?.maxConsecutiveCrashes).toBe(2);
  });
});

describe('ARS_NODE_FLAGS', () => {
  it('are the flags the ./ars wrapper starts the CLI with', async () => {
    const script = await readFile(fileURLToPath(new URL('../../../ars', import.meta.url)), 'utf8');
    const line = /^exec node ((?:--\S+ )+)\\\n\s+"\$ROOT\/libs\/cli\/src\/main\.ts"/m.exec(script);
    expect(line?.[1]?.trim().split(' ')).toEqual([...ARS_NODE_FLAGS]);
  });
});
