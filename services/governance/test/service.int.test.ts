import { describeServiceRegistration } from '@ars/service-kit/testing/registration';
import { governanceService } from '../src/service.ts';

describeServiceRegistration(governanceService);
