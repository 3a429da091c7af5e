import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { connectBus } from '@ars/bus';
import { startTestNats } from '../src/index.ts';

describe('startTestNats', () => {
  it('serves JetStream on a free port and deletes its store on stop', async () => {
    const nats = await startTestNats();
    try {
      expect(nats.url).toBe(`nats://127.0.0.1:${nats.port}`);
      const bus = await connectBus({ servers: nats.url, name: 'testkit-test' });
      await expect(bus.jsm.getAccountInfo()).resolves.toBeDefined();
      await bus.close();
    } finally {
      await nats.stop();
    }
    expect(existsSync(nats.storeDir)).toBe(false);
  });

  it('gives two suites two servers with separate stores', async () => {
    const [a, b] = await Promise.all([startTestNats(), startTestNats()]);
    try {
      expect(a.port).not.toBe(b.port);
      expect(a.storeDir).not.toBe(b.storeDir);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});
