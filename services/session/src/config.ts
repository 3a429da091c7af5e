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
});
export type SessionConfig = z.infer<typeof SessionConfig>;
