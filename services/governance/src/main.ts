import { runService } from '@ars/service-kit';
import { governanceService } from './service.ts';

await runService(governanceService);
