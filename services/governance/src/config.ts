import type { z } from 'zod';
import { BaseServiceConfig } from '@ars/service-kit';

/** The governance service's environment: the base variables; none of its own yet. */
export const GovernanceConfig = BaseServiceConfig.extend({});
export type GovernanceConfig = z.infer<typeof GovernanceConfig>;
