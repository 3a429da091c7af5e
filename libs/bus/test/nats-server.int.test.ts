import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectBus,
  findFreePort,
  goMemoryEnvironment,
  resolveNatsServerBinary,
  serverEnvironment,
  startNatsServer,
} from '../src/index.ts';
import { tempDir } from './helpers.ts';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('startNatsServer', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;

  beforeAll(async () => {
    dir = await tempDir('server');
  });

  afterAll(async () => {
    await dir?.remove();
  });

  it('starts a JetStream server on a free port that accepts a connection', async () => {
    const server = await startNatsServer({ storeDir: `${dir.path}/a`, serverName: 'solo' });
    try {
      expect(server.port).not.toBe(4222);
      const bus = await connectBus({ servers: server.url, name: 'probe' });
      expect((await bus.jsm.getAccountInfo()).streams).toBe(0);
      expect(bus.nc.info?.server_name).toBe('solo');
      await bus.close();
    } finally {
      await server.stop();
    }
    expect(isAlive(server.pid)).toBe(false);
  });

  it("runs the server on a memory budget when asked, and on Go's defaults otherwise", async () => {
    const environOf = async (pid: number): Promise<string[]> =>
      (await readFile(`/proc/${pid}/environ`, 'utf8')).split('\0');
    const budgeted = await startNatsServer({ storeDir: `${dir.path}/m1`, memoryLimitMiB: 128 });
    const plain = await startNatsServer({ storeDir: `${dir.path}/m2` });
    try {
      expect(await environOf(budgeted.pid)).toEqual(
        expect.arrayContaining([
          'GOMEMLIMIT=128MiB',
          'GOGC=off',
          expect.stringMatching(/^GODEBUG=madvdontneed=0(,|$)/),
        ]),
      );
      expect((await environOf(plain.pid)).filter((v) => v.startsWith('GOMEMLIMIT='))).toEqual(
        process.env.GOMEMLIMIT === undefined ? [] : [`GOMEMLIMIT=${process.env.GOMEMLIMIT}`],
      );
    } finally {
      await Promise.all([budgeted.stop(), plain.stop()]);
    }
  });

  it('serves its monitoring endpoints on the port asked for, and none otherwise', async () => {
    const monitorPort = await findFreePort();
    const monitored = await startNatsServer({ storeDir: `${dir.path}/mon`, monitorPort });
    try {
      const varz = (await (await fetch(`http://127.0.0.1:${monitorPort}/varz`)).json()) as { port: number };
      expect(varz.port).toBe(monitored.port);
      const connz = (await (await fetch(`http://127.0.0.1:${monitorPort}/connz`)).json()) as {
        num_connections: number;
      };
      expect(connz.num_connections).toBe(0);
    } finally {
      await monitored.stop();
    }
    const plain = await startNatsServer({ storeDir: `${dir.path}/mon2` });
    try {
      await expect(fetch(`http://127.0.0.1:${monitorPort}/varz`)).rejects.toThrow();
    } finally {
      await plain.stop();
    }
  });

  it("keeps the caller's own GODEBUG settings after the budget's, so that they win", () => {
    expect(goMemoryEnvironment(256)).toEqual({ GOMEMLIMIT: '256MiB', GOGC: 'off', GODEBUG: 'madvdontneed=0' });
    expect(goMemoryEnvironment(256, '')).toMatchObject({ GODEBUG: 'madvdontneed=0' });
    expect(goMemoryEnvironment(256, 'madvdontneed=1,gctrace=1')).toMatchObject({
      GODEBUG: 'madvdontneed=0,madvdontneed=1,gctrace=1',
    });
  });

  it('runs the server on goThreads Go threads unless the environment names its own GOMAXPROCS', () => {
    const inherited = { PATH: '/bin', GODEBUG: 'gctrace=1' };
    expect(serverEnvironment({ goThreads: 1 }, inherited)).toEqual({ ...inherited, GOMAXPROCS: '1' });
    expect(serverEnvironment({ goThreads: 2 }, { ...inherited, GOMAXPROCS: '' })).toMatchObject({ GOMAXPROCS: '2' });
    expect(serverEnvironment({ goThreads: 1 }, { ...inherited, GOMAXPROCS: '4' })).toMatchObject({ GOMAXPROCS: '4' });
    expect(serverEnvironment({}, inherited)).toEqual(inherited);
    expect(serverEnvironment({ memoryLimitMiB: 128, goThreads: 1 }, inherited)).toEqual({
      PATH: '/bin',
      GOMEMLIMIT: '128MiB',
      GOGC: 'off',
      GODEBUG: 'madvdontneed=0,gctrace=1',
      GOMAXPROCS: '1',
    });
  });

  it('runs the spawned server with that environment', async () => {
    const server = await startNatsServer({ storeDir: `${dir.path}/threads`, goThreads: 1 });
    try {
      const environ = (await readFile(`/proc/${server.pid}/environ`, 'utf8')).split('\0');
      expect(environ).toContain(`GOMAXPROCS=${process.env['GOMAXPROCS'] || 1}`);
    } finally {
      await server.stop();
    }
  });

  it.each([0, -1, 1.5, Number.NaN])('refuses %s Go threads before spawning anything', async (threads) => {
    expect(() => serverEnvironment({ goThreads: threads })).toThrow(RangeError);
    await expect(startNatsServer({ storeDir: `${dir.path}/t3`, goThreads: threads })).rejects.toThrow(
      /goThreads must be a positive whole number/,
    );
  });

  it.each([0, -1, 1.5, Number.NaN])('refuses a memory budget of %s MiB before spawning anything', async (limit) => {
    expect(() => goMemoryEnvironment(limit)).toThrow(RangeError);
    await expect(startNatsServer({ storeDir: `${dir.path}/m3`, memoryLimitMiB: limit })).rejects.toThrow(
      /memory limit must be a positive number of MiB/,
    );
  });

  it('stops twice without error', async () => {
    const server = await startNatsServer({ storeDir: `${dir.path}/b` });
    await server.stop();
    await server.stop();
    expect(isAlive(server.pid)).toBe(false);
  });

  it('kills a server abruptly', async () => {
    const server = await startNatsServer({ storeDir: `${dir.path}/c` });
    server.kill();
    await server.stop();
    expect(isAlive(server.pid)).toBe(false);
  });

  it('restarts a killed server on the same port and store, keeping its streams', async () => {
    const first = await startNatsServer({ storeDir: `${dir.path}/r` });
    const bus = await connectBus({ servers: first.url, name: 'restart-probe' });
    await bus.jsm.streams.add({ name: 'KEPT', subjects: ['kept.>'] });
    await bus.js.publish('kept.a', new TextEncoder().encode('x'));
    first.kill();
    const second = await first.restart();
    try {
      expect(isAlive(first.pid)).toBe(false);
      expect(second.port).toBe(first.port);
      // The client reconnects by itself (within a few seconds) and finds what the first server stored.
      let messages: number | undefined;
      for (let i = 0; i < 40 && messages === undefined; i++) {
        messages = await bus.jsm.streams.info('KEPT').then(
          (info) => info.state.messages,
          () => undefined,
        );
      }
      expect(messages).toBe(1);
    } finally {
      await bus.close();
      await second.stop();
    }
  });

  it("fails with the server's stderr when its port is taken", async () => {
    const port = await findFreePort();
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', resolve));
    try {
      await expect(startNatsServer({ port, storeDir: `${dir.path}/d`, startTimeoutMs: 5_000 })).rejects.toThrow(
        /address already in use/,
      );
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it('resolves the binary from ARS_NATS_SERVER first, then PATH, then /usr/sbin', () => {
    expect(resolveNatsServerBinary({ ARS_NATS_SERVER: '/opt/nats/nats-server' })).toBe('/opt/nats/nats-server');
    expect(resolveNatsServerBinary({ PATH: '/usr/sbin' })).toBe('/usr/sbin/nats-server');
    expect(resolveNatsServerBinary({ PATH: '' })).toBe('/usr/sbin/nats-server');
  });
});
