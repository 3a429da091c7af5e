import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNatsServer } from '@ars/bus';
import type { NatsServerHandle } from '@ars/bus';
import { methodsOfService } from '@ars/contracts';
import { HEALTH_METHOD } from '@ars/service-kit';
import { outcomeOf, startInProcess } from '@ars/service-kit/testing';
import type { InProcessService } from '@ars/service-kit/testing';
import { governanceService } from '../src/service.ts';

describe('governance service', () => {
  let storeDir: string;
  let nats: NatsServerHandle;
  let service: InProcessService;

  beforeAll(async () => {
    storeDir = await mkdtemp(join(tmpdir(), 'ars-governance-'));
    nats = await startNatsServer({ storeDir });
    service = await startInProcess(governanceService, {
      natsUrl: nats.url,
      env: { DATA_DIR: join(storeDir, 'data') },
    });
  });

  afterAll(async () => {
    await service?.stop();
    await nats?.stop();
    await rm(storeDir, { recursive: true, force: true });
  });

  it('answers every registry method it owns over NATS', async () => {
    const methods = methodsOfService('governance').map((m) => m.name);
    expect(methods.length).toBeGreaterThan(0);
    const outcomes = await Promise.all(methods.map((m) => outcomeOf(service.call(m, { identity: {} }))));
    // No responders or no answer would mean the method is not registered.
    const unanswered = methods.filter((_, i) => {
      const outcome = outcomes[i]!;
      return !outcome.ok && (outcome.code === 'unavailable' || outcome.code === 'timeout');
    });
    expect(unanswered).toEqual([]);
  });

  it('reports ok on _health', async () => {
    await expect(service.call(HEALTH_METHOD, {})).resolves.toMatchObject({
      service: 'governance',
      status: 'ok',
      checks: { nats: 'ok', store: 'ok' },
    });
  });
});
