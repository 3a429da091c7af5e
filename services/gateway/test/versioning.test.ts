import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION } from '@ars/contracts';
import { CAPABILITY_METHODS } from '../src/local/index.ts';
import { bodyFor, method, routeOf } from './support/bodies.ts';
import { TEST_BUILD, createHarness, liveInstance } from './support/harness.ts';
import type { Harness } from './support/harness.ts';

let h: Harness;

beforeEach(async () => {
  h = await createHarness();
});

afterEach(async () => {
  await h.close();
});

const runtimeInfo = async () => {
  const response = await h.post(routeOf('runtime.info'), { identity: {} });
  expect(response.statusCode).toBe(200);
  return response.json() as Record<string, unknown>;
};

const CONTROLS = [
  'start',
  'cancel',
  'pause',
  'resume',
  'approve',
  'reject',
  'redirect',
  'inject_context',
  'user_message',
  'prioritize',
];

describe('versioning: protocol_version', () => {
  it('adds protocol_version to a forwarded control-surface response', async () => {
    h.rpc.respond = async () => ({ task_id: 'task-1', reused: false });
    const response = await h.post(routeOf('start'), bodyFor('start'));
    expect(response.json()).toEqual({ task_id: 'task-1', reused: false, protocol_version: PROTOCOL_VERSION });
  });

  it('adds protocol_version to a steering control acknowledgement', async () => {
    h.rpc.respond = async () => ({ accepted: true, method: 'pause' });
    const response = await h.post(routeOf('pause'), bodyFor('pause'));
    expect(response.json()).toEqual({ accepted: true, method: 'pause', protocol_version: PROTOCOL_VERSION });
  });

  it('adds protocol_version on the family route of a control-surface method too', async () => {
    const def = method('tasks.get');
    const familyRoute = def.routes.find((route) => !route.startsWith('/v1/control/'));
    expect(familyRoute).toBeDefined();
    const response = await h.post(familyRoute!, bodyFor('tasks.get'));
    expect(response.json().protocol_version).toBe(PROTOCOL_VERSION);
  });

  it('leaves a family-surface response as the owner sent it', async () => {
    h.rpc.respond = async () => ({ value: 1 });
    const response = await h.post(routeOf('memory.get'), bodyFor('memory.get'));
    expect(method('memory.get').surface).toBe('family');
    expect(response.json()).toEqual({ value: 1 });
  });

  it('carries protocol_version on every gateway-owned control-surface answer', async () => {
    for (const name of [
      'runtime.health',
      'runtime.counters',
      'runtime.drivers',
      'metrics.snapshot',
      'topology.snapshot',
    ]) {
      const response = await h.post(routeOf(name), { identity: {} }, { token: h.token({ scopes: ['admin'] }) });
      expect(response.json().protocol_version, name).toBe(PROTOCOL_VERSION);
    }
  });
});

describe('versioning: runtime.info', () => {
  it('answers exactly the eight members of the spec', async () => {
    expect(Object.keys(await runtimeInfo()).sort()).toEqual([
      'build_commit',
      'build_go_version',
      'build_version',
      'capabilities',
      'display_name',
      'instance_id',
      'protocol_version',
      'uptime_seconds',
    ]);
  });

  it('reports the build, the protocol version and an integer uptime', async () => {
    const info = await runtimeInfo();
    expect(info).toMatchObject({
      instance_id: TEST_BUILD.instanceId,
      display_name: TEST_BUILD.displayName,
      build_version: TEST_BUILD.buildVersion,
      build_commit: TEST_BUILD.buildCommit,
      build_go_version: TEST_BUILD.runtimeVersion,
      protocol_version: '0.1.0',
    });
    expect(Number.isInteger(info.uptime_seconds)).toBe(true);
  });

  it('matches the registry RuntimeInfo schema', async () => {
    expect(method('runtime.info').response.safeParse(await runtimeInfo()).success).toBe(true);
  });

  it('advertises only the gateway-local surface when no service is live', async () => {
    expect((await runtimeInfo()).capabilities).toEqual(['events_subscribe', 'topology_snapshot']);
  });

  it('advertises task_control when start and the nine controls are implemented by a live service', async () => {
    h.discovery.instances = [liveInstance('run-executor', CONTROLS)];
    expect((await runtimeInfo()).capabilities).toContain('task_control');
  });

  it('withholds task_control while one control is registered but not implemented', async () => {
    h.discovery.instances = [
      liveInstance(
        'run-executor',
        CONTROLS.filter((name) => name !== 'prioritize'),
      ),
      liveInstance('run-executor', ['prioritize'], { implemented: false, id: 'run-executor-2' }),
    ];
    expect((await runtimeInfo()).capabilities).not.toContain('task_control');
  });

  it('advertises runtime_posture when governance serves both posture reads', async () => {
    h.discovery.instances = [liveInstance('governance', ['governance.posture', 'llm.posture'])];
    expect((await runtimeInfo()).capabilities).toContain('runtime_posture');
  });

  it('advertises caller_memory only when memory.get and memory.put are both live', async () => {
    h.discovery.instances = [liveInstance('memory', ['memory.get'])];
    expect((await runtimeInfo()).capabilities).not.toContain('caller_memory');
    h.discovery.instances = [liveInstance('memory', ['memory.get', 'memory.put'])];
    expect((await runtimeInfo()).capabilities).toContain('caller_memory');
  });

  it('advertises events_subscribe from the gateway alone: the gateway serves the stream', async () => {
    h.discovery.instances = [];
    expect((await runtimeInfo()).capabilities).toContain('events_subscribe');
  });

  it('drops a capability when its service leaves', async () => {
    h.discovery.instances = [liveInstance('memory', ['memory.get', 'memory.put'])];
    expect((await runtimeInfo()).capabilities).toContain('caller_memory');
    h.discovery.instances = [];
    expect((await runtimeInfo()).capabilities).not.toContain('caller_memory');
  });

  it('advertises every capability when every backing method is live', async () => {
    const everything = Object.values(CAPABILITY_METHODS).flat();
    h.discovery.instances = [liveInstance('all', everything)];
    expect((await runtimeInfo()).capabilities).toEqual([
      'caller_memory',
      'events_subscribe',
      'runtime_posture',
      'task_control',
      'topology_snapshot',
    ]);
  });
});
