import { describeServiceRegistration } from '@ars/service-kit/testing/registration';
import { agentRegistryService } from '../src/service.ts';

describeServiceRegistration(agentRegistryService);
