import { PROTOCOL_VERSION } from '@ars/contracts';
process.stdout.write(PROTOCOL_VERSION + '\n');
