import type { z } from 'zod';
import { BaseServiceConfig } from '@ars/service-kit';

/** The memory service's environment: the base variables; none of its own yet. */
export const MemoryConfig = BaseServiceConfig.extend({});
export type MemoryConfig = z.infer<typeof MemoryConfig>;
