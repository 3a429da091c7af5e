import { runService } from '@ars/service-kit';
import { agentRegistryService } from './service.ts';

await runService(agentRegistryService);
