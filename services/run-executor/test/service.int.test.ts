import { describeServiceRegistration } from '@ars/service-kit/testing/registration';
import { runExecutorService } from '../src/service.ts';

describeServiceRegistration(runExecutorService);
