/**
 * The baseline: a bare fastify route in its own process, answering a JSON
 * object of the same size class as runtime.info. Prints its port on stdout.
 */
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.post('/v1/control/runtime.info', async () => ({
  instance_id: 'bare',
  display_name: 'bare fastify',
  build_version: '0.0.0',
  build_commit: 'none',
  build_go_version: process.version,
  protocol_version: '0.1.0',
  capabilities: ['runtime_posture'],
  uptime_seconds: Math.floor(process.uptime()),
}));
const address = await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`listening ${address}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
