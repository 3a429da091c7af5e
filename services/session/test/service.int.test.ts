import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { methodsOfService } from '@ars/contracts';
import { HEALTH_METHOD } from '@ars/service-kit';
import { outcomeOf } from '@ars/service-kit/testing';
import type { Bed } from './support.ts';
import { startBed } from './support.ts';

describe('session service', () => {
  let bed: Bed;

  beforeAll(async () => {
    // With fakes of the erasure cascade, so that sessions.delete can answer too.
    bed = await startBed();
  });

  afterAll(async () => {
    await bed?.stop();
  });

  it('answers every registry method it owns over NATS', async () => {
    const methods = methodsOfService('session').map((m) => m.name);
    expect(methods.length).toBeGreaterThan(0);
    const outcomes = await Promise.all(methods.map((m) => outcomeOf(bed.service.call(m, { identity: {} }))));
    // No responders or no answer would mean the method is not registered.
    const unanswered = methods.filter((_, i) => {
      const outcome = outcomes[i]!;
      return !outcome.ok && (outcome.code === 'unavailable' || outcome.code === 'timeout');
    });
    expect(unanswered).toEqual([]);
  });

  it('implements every registry method it owns', async () => {
    const methods = methodsOfService('session').map((m) => m.name);
    const outcomes = await Promise.all(methods.map((m) => outcomeOf(bed.service.call(m, { identity: {} }))));
    const unimplemented = methods.filter((_, i) => {
      const outcome = outcomes[i]!;
      return !outcome.ok && outcome.code === 'unimplemented';
    });
    expect(unimplemented).toEqual([]);
  });

  it('reports ok on _health', async () => {
    await expect(bed.service.call(HEALTH_METHOD, {})).resolves.toMatchObject({
      service: 'session',
      status: 'ok',
      checks: { nats: 'ok', store: 'ok' },
    });
  });
});
