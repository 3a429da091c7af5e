/**
 * The conformance suite every service runs about its own registration: each
 * registry method and each internal endpoint it owns answers over NATS (never
 * "no responders" or a timeout), and `_health` reports ok. Test support only (`@ars/service-kit/testing`).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNatsServer } from '@ars/bus';
import type { NatsServerHandle } from '@ars/bus';
import { internalEndpointsOfService, methodsOfService } from '@ars/contracts';
import type { BaseServiceConfig, Environment } from './config.ts';
import { HEALTH_METHOD } from './health.ts';
import type { ServiceDefinition } from './service-definition.ts';
import { outcomeOf, startInProcess } from './testing.ts';
import type { InProcessService } from './testing.ts';

/** Options of {@link describeServiceRegistration}. */
export interface RegistrationSuiteOptions {
  /** Extra config for the service (`DATA_DIR` defaults to the suite's temporary directory). */
  readonly env?: Environment;
}

/** Declares the registration suite of `definition` against a nats-server of its own. */
export function describeServiceRegistration<S extends z.ZodType<BaseServiceConfig>>(
  definition: ServiceDefinition<S>,
  options: RegistrationSuiteOptions = {},
): void {
  describe(`${definition.name} service`, () => {
    let storeDir: string;
    let nats: NatsServerHandle;
    let service: InProcessService;

    beforeAll(async () => {
      storeDir = await mkdtemp(join(tmpdir(), `ars-${definition.name}-`));
      nats = await startNatsServer({ storeDir });
      // A service that writes files of its own (keys, say) writes them under the temporary directory.
      service = await startInProcess(definition, {
        natsUrl: nats.url,
        env: { DATA_DIR: join(storeDir, 'data'), ...options.env },
      });
    });

    afterAll(async () => {
      await service?.stop();
      await nats?.stop();
      await rm(storeDir, { recursive: true, force: true });
    });

    it('answers every registry method it owns over NATS', async () => {
      const methods = methodsOfService(definition.name).map((m) => m.name);
      expect(methods.length).toBeGreaterThan(0);
      const outcomes = await Promise.all(methods.map((m) => outcomeOf(service.call(m, { identity: {} }))));
      // No responders or no answer would mean the method is not registered.
      const unanswered = methods.filter((_, i) => {
        const outcome = outcomes[i]!;
        return !outcome.ok && (outcome.code === 'unavailable' || outcome.code === 'timeout');
      });
      expect(unanswered).toEqual([]);
    });

    it('answers every internal endpoint it owns over NATS', async () => {
      const endpoints = internalEndpointsOfService(definition.name).map((e) => e.name);
      // An empty body is refused (or, where every member is optional, answered): either way, answered.
      const outcomes = await Promise.all(endpoints.map((e) => outcomeOf(service.call(e, undefined))));
      const unanswered = endpoints.filter((_, i) => {
        const outcome = outcomes[i]!;
        return !outcome.ok && (outcome.code === 'unavailable' || outcome.code === 'timeout');
      });
      expect(unanswered).toEqual([]);
    });

    it('reports ok on _health', async () => {
      await expect(service.call(HEALTH_METHOD, {})).resolves.toMatchObject({
        service: definition.name,
        status: 'ok',
        checks: { nats: 'ok', store: 'ok' },
      });
    });
  });
}
