import { describeServiceRegistration } from '@ars/service-kit/testing/registration';
import { artifactService } from '../src/service.ts';

describeServiceRegistration(artifactService);
