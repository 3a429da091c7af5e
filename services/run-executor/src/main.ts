import { runService } from '@ars/service-kit';
import { runExecutorService } from './service.ts';

await runService(runExecutorService);
