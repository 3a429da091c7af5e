import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNatsServer } from '@ars/bus';
import type { NatsServerHandle } from '@ars/bus';
import { outcomeOf, startInProcess } from '@ars/service-kit/testing';
import { governanceService } from '../src/service.ts';
import { identityOf } from './support/harness.ts';

describe('sealed provider keys across restarts', () => {
  const tenant = 't-sealed';
  const secret = `sk-${randomBytes(24).toString('hex')}`;
  const kekA = randomBytes(32).toString('base64');
  let root: string;
  let nats: NatsServerHandle;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'ars-governance-sealed-'));
    nats = await startNatsServer({ storeDir: join(root, 'nats') });
  });
  afterAll(async () => {
    await nats?.stop();
    await rm(root, { recursive: true, force: true });
  });

  /** Runs `fn` against a service on the same on-disk store with the given key-encryption key. */
  async function withService<T>(kek: string, fn: (call: (m: string, b: unknown) => Promise<unknown>) => Promise<T>) {
    const service = await startInProcess(governanceService, {
      natsUrl: nats.url,
      env: { DATA_DIR: join(root, 'data'), GOVERNANCE_KEY_ENCRYPTION_KEY: kek },
      inMemoryStore: false,
    });
    try {
      return await fn((method, body) => service.call(method, body, identityOf(tenant, ['admin'])));
    } finally {
      await service.stop();
    }
  }

  it('reads a key sealed before a restart with the same key-encryption key', async () => {
    await withService(kekA, (call) => call('governance.rotate_key', { identity: {}, provider: 'p', key: secret }));
    const read = await withService(kekA, (call) => call('_governance.provider_key', { tenant, provider: 'p' }));
    expect(read).toMatchObject({ key: secret });
  });

  it('refuses to hand out a key sealed under another key-encryption key', async () => {
    await withService(kekA, (call) => call('governance.rotate_key', { identity: {}, provider: 'q', key: secret }));
    const kekB = randomBytes(32).toString('hex');
    const outcome = await withService(kekB, (call) =>
      outcomeOf(call('_governance.provider_key', { tenant, provider: 'q' })),
    );
    expect(outcome).toMatchObject({ ok: false, code: 'internal' });
    expect(outcome.ok ? '' : outcome.message).toMatch(/cannot be decrypted.*rotate it again/);
  });
});
