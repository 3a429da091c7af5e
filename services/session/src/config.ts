import { z } from 'zod';
import { BaseServiceConfig } from '@ars/service-kit';

/** The session service's environment: the base variables plus its own. */
export const SessionConfig = BaseServiceConfig.extend({
  SESSION_IDLE_CLOSE_SECONDS: z.coerce
    .number()
    .int()
    .min(0)
    .default(86_400)
    .describe(
      'Seconds without activity after which garbage collection closes a session (a later start reopens it); 0 disables reaping. Default 86400 (one day).',
    ),
  SESSION_ADMISSION_REUSE_SECONDS: z.coerce
    .number()
    .min(0)
    .max(300)
    .default(10)
    .describe(
      'Seconds a run-executor may reuse an admission of a session for later starts on it without waiting for this service (it still sends each one; an erasure is caught by the run-executor itself). Kept under a quarter of SESSION_IDLE_CLOSE_SECONDS; 0 makes every start wait for its admission. Default 10.',
    ),
  SESSION_REAP_INTERVAL_SECONDS: z.coerce
    .number()
    .positive()
    .max(86_400)
    .default(60)
    .describe('Seconds between two passes of the idle reaper (fractions allowed). Default 60.'),
  SESSION_ERASURE_RETRY_SECONDS: z.coerce
    .number()
    .positive()
    .max(86_400)
    .default(30)
    .describe(
      'Seconds between two passes of the erasure resumer, which finishes every erasure left unfinished (a cascade step failed, or the process died); it also runs once at boot. Default 30.',
    ),
  SESSION_CASCADE_TIMEOUT_SECONDS: z.coerce
    .number()
    .positive()
    .max(3_600)
    .default(60)
    .describe(
      'Seconds each erasure cascade call (run-executor, artifact, memory) may take before it counts as failed and is retried later. Default 60.',
    ),
});
export type SessionConfig = z.infer<typeof SessionConfig>;
