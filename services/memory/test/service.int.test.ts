import { describeServiceRegistration } from '@ars/service-kit/testing/registration';
import { memoryService } from '../src/service.ts';

describeServiceRegistration(memoryService);
