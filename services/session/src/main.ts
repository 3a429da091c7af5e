import { runService } from '@ars/service-kit';
import { sessionService } from './service.ts';

await runService(sessionService);
