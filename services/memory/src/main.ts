import { runService } from '@ars/service-kit';
import { memoryService } from './service.ts';

await runService(memoryService);
