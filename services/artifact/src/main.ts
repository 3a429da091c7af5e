import { runService } from '@ars/service-kit';
import { artifactService } from './service.ts';

await runService(artifactService);
