import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectBus } from '@ars/bus';
import { createClient, isArsError } from '@ars/client';
import type { ArsClient } from '@ars/client';
import type { EventFrame } from '@ars/contracts';
import { createLogger } from '@ars/telemetry';
import { startTestNatsCluster } from '@ars/testkit';
import type { TestNatsCluster } from '@ars/testkit';
import { canRunAs, startLocalDeployment } from '../src/index.ts';
import type { LocalDeployment, LocalPod, Manifest } from '../src/index.ts';
import { EventLog, isTerminal } from '../../test-e2e/support/event-log.ts';
import { startWatched, storedEvents, streamCursor } from '../../test-e2e/support/runs.ts';
import { PRODUCTION_VALUES, ROOT, render } from './chart-support.ts';
import { startIdentityProvider, testSecretValues } from './cluster-support.ts';
import type { TestIdentityProvider } from './cluster-support.ts';

/**
 * The system as the chart deploys it: the production values rendered by
 * helm, every Deployment's container run as a local process with the
 * command, args and environment the manifests give it (two run-executor
 * replicas, one of everything else), as an unprivileged user that cannot
 * write the app directory, on a 3-node nats-server cluster with streams at
 * three replicas. Then the e2e scenarios, and faults under load.
 */

const DATA_DIR_MOUNT = '/var/lib/ars';
/** The figures for bench/RESULTS.md, as JSON lines on stdout. */
const log = createLogger({ name: 'cluster-test', level: 'info' });
const SHORT_RUN = '#script tool:echo{"text":"hi"};finish:done';
const LOGS = process.env.ARS_TEST_LOGS === '1';

describe('the chart’s Deployments as local processes on a 3-node NATS cluster', () => {
  let nats: TestNatsCluster;
  let idp: TestIdentityProvider;
  let deployment: LocalDeployment;
  let manifests: Manifest[];
  let baseUrl: string;
  const logLines: string[] = [];
  /** Runs the executors' stale-run sweeper queued again (a queue message the NATS failover lost). */
  let runsRequeued = 0;
  const restartedNats: { stop(): Promise<void> }[] = [];
  const runAsNobody = canRunAs(ROOT);

  async function clientFor(tenant: string, user: string, session: string, scopes: string[] = []): Promise<ArsClient> {
    const token = await idp.issuer.mint({ tenant, user, session, scopes });
    return createClient({ baseUrl, token });
  }

  beforeAll(async () => {
    nats = await startTestNatsCluster({ size: 3 });
    // Shorter than the production defaults (30 s and 60 s), so that the runs of a killed executor come back
    // within the test, and a run whose queue message the NATS failover lost is queued again within it.
    manifests = await render({
      valuesFiles: [PRODUCTION_VALUES],
      set: {
        'services.run-executor.env.EXECUTOR_ACK_WAIT_MS': '8000',
        'services.run-executor.env.EXECUTOR_STALE_RUN_MS': '20000',
      },
    });
    const gateway = manifests.find((m) => m.kind === 'Deployment' && m.metadata.labels?.['app.kubernetes.io/component'] === 'gateway') as
      | (Manifest & { spec: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } } })
      | undefined;
    const env = Object.fromEntries((gateway?.spec.template.spec.containers[0]?.env ?? []).map((v) => [v.name, v.value]));
    idp = await startIdentityProvider(env.ARS_AUTH_ISSUER ?? '', env.ARS_AUTH_AUDIENCE ?? '');
    deployment = await startLocalDeployment({
      manifests,
      root: ROOT,
      replicas: { gateway: 1, 'run-executor': 2, session: 1, artifact: 1, memory: 1, governance: 1, 'agent-registry': 1 },
      secrets: testSecretValues(),
      overrides: {
        // Service DNS names → the local cluster; no MongoDB here, so the embedded store (shared by replicas) stands in.
        NATS_URL: nats.url,
        MONGO_URL: undefined,
        ARS_AUTH_JWKS_URL: idp.jwksUrl,
        OTEL_EXPORTER_OTLP_ENDPOINT: undefined,
      },
      sharedMounts: [DATA_DIR_MOUNT],
      ...(runAsNobody ? { runAs: { uid: 65534, gid: 65534 } } : {}),
      imageEnv: { NODE_ENV: 'production' },
      onLine: (pod, line) => {
        logLines.push(`${pod} ${line}`);
        if (line.includes('a pending run the queue lost was queued again')) runsRequeued += 1;
        if (logLines.length > 4000) logLines.splice(0, 1000);
        if (LOGS) process.stderr.write(`${pod} ${line}\n`);
      },
      readyTimeoutMs: 150_000,
    });
    const [gatewayPod] = deployment.podsOf('gateway');
    baseUrl = `http://127.0.0.1:${gatewayPod?.plan.ports.http}`;
  }, 240_000);

  afterAll(async () => {
    await deployment?.stop();
    await idp?.stop();
    for (const server of restartedNats) await server.stop().catch(() => undefined);
    await nats?.stop();
  }, 60_000);

  it('runs each pod with the command and environment the chart renders, as an unprivileged user', () => {
    expect(deployment.podsOf('run-executor')).toHaveLength(2);
    for (const pod of deployment.pods) {
      expect(pod.plan.args.at(-1)).toBe(`services/${pod.component}/src/main.ts`);
      expect(pod.plan.env.JETSTREAM_REPLICAS).toBe('3');
      expect(pod.plan.env.DATA_DIR?.startsWith(ROOT)).toBe(false);
    }
    // Run as root (as CI is), the pods run as nobody, so the repository (the image's /app) is not theirs to write.
    if (runAsNobody) {
      for (const pod of deployment.pods) {
        const status = readFileSync(`/proc/${pod.process.pid}/status`, 'utf8');
        expect(/^Uid:\s+(\d+)/m.exec(status)?.[1], pod.podName).toBe('65534');
      }
    }
    expect(existsSync(join(ROOT, '.data', 'governance')), 'nothing written under the app directory').toBe(false);
  });

  it('answers every readiness and liveness probe with 200', async () => {
    for (const pod of deployment.pods) {
      for (const probe of [pod.plan.readinessProbe, pod.plan.livenessProbe]) {
        expect(probe, `${pod.podName}`).toBeDefined();
        expect(await pod.probe(probe!), `${pod.podName} ${probe!.path}`).toBe(200);
      }
    }
  });

  it('keeps every stream, bucket and object store at three replicas', async () => {
    const bus = await connectBus({ servers: nats.url, name: 'cluster-check' });
    try {
      for (const stream of ['EVENTS', 'RUNS', 'KV_ars_fleet', 'KV_ars_revocations', 'OBJ_ars_artifacts']) {
        const info = await bus.jsm.streams.info(stream);
        expect(info.config.num_replicas, stream).toBe(3);
      }
    } finally {
      await bus.close();
    }
  });

  describe('the e2e scenarios against that gateway', () => {
    it('starts a run and streams its events to one terminal event', async () => {
      const client = await clientFor('acme', 'ana', 'start-1');
      const run = await startWatched(client, { query: SHORT_RUN });
      try {
        expect((await run.log.terminal({ timeoutMs: 30_000 })).type).toBe('task.completed');
        expect(run.log.types().slice(0, 2)).toEqual(['task.spawned', 'task.started']);
        expect(run.log.types()).toContain('tool.completed');
      } finally {
        await run.log.close();
      }
    });

    it('steers a run: pause parks it, resume releases it, cancel ends it', async () => {
      const client = await clientFor('acme', 'ana', 'steer-1');
      const run = await startWatched(client, { query: '#script tool:wait{"ms":400};tool:wait{"ms":400};tool:wait{"ms":400};finish:done' });
      try {
        await run.log.next('task.started', undefined, { timeoutMs: 30_000 });
        await client.call('pause', { identity: { run: run.taskId }, payload: {} });
        await run.log.next('control.applied', (f) => (f.payload as Record<string, unknown>).Type === 'pause', { timeoutMs: 30_000 });
        await client.call('resume', { identity: { run: run.taskId }, payload: {} });
        await run.log.next('control.applied', (f) => (f.payload as Record<string, unknown>).Type === 'resume', { timeoutMs: 30_000 });
        await client.call('cancel', { identity: { run: run.taskId }, payload: {} });
        expect((await run.log.terminal({ timeoutMs: 30_000 })).type).toBe('task.cancelled');
      } finally {
        await run.log.close();
      }
    });

    it('gates a sensitive tool until it is approved', async () => {
      const client = await clientFor('acme', 'ana', 'approve-1');
      const run = await startWatched(client, { query: '#script tool:sensitive_action{"what":"launch"};finish:done' });
      try {
        await run.log.next('tool.approval_requested', undefined, { timeoutMs: 30_000 });
        await client.call('approve', { identity: { run: run.taskId }, payload: { reason: 'fine' } });
        expect((await run.log.terminal({ timeoutMs: 30_000 })).type).toBe('task.completed');
        expect(run.log.types()).toContain('tool.approved');
      } finally {
        await run.log.close();
      }
    });

    it('erases a session everywhere, and refuses a start in it afterwards', async () => {
      const client = await clientFor('acme', 'ana', 'erase-1');
      const run = await startWatched(client, { query: SHORT_RUN });
      await run.log.terminal({ timeoutMs: 30_000 });
      await run.log.close();
      const receipt = await client.call<{ erased: boolean; tasks_deleted: number }>('sessions.delete', { identity: {} });
      expect(receipt).toMatchObject({ erased: true, tasks_deleted: 1 });
      const refused = await client.call('start', { identity: {}, query: 'again' }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(isArsError(refused) && refused.code).toBe('session_erased');
    });
  });

  describe('faults under load: kill -9 of one executor and of one NATS node while 16 clients run short runs', () => {
    interface StartRecord {
      readonly client: number;
      readonly issuedAt: number;
      readonly answeredAt: number;
      readonly taskId?: string;
      readonly error?: string;
      readonly retryOf?: string;
    }

    const CLIENTS = 16;
    const NATS_DOWN_MS = 20_000;
    const EXECUTOR_DOWN_MS = 12_000;
    /**
     * On nats-server 2.9.10 a start acknowledged during the failover can lose both its `task.spawned` and
     * its RUNS message with the old leader's log (seen about once per run of this test): the executors'
     * stale-run sweeper queues such a run again (`EXECUTOR_STALE_RUN_MS`). `ARS_CLUSTER_NATS_FAULT=0`
     * leaves the NATS node's kill out.
     */
    const NATS_NODE_FAULT = process.env.ARS_CLUSTER_NATS_FAULT !== '0';
    /**
     * How long a failover may take before the two nodes left must serve starts and runs: nats-server 2.9
     * elects a stream's new leader 4–9 s after the old one stops answering, and the start path publishes
     * to EVENTS.
     */
    const FAILOVER_ALLOWANCE_MS = 10_000;
    /** How often the probe client starts a run while the NATS node is down. */
    const PROBE_INTERVAL_MS = 500;
    const starts: StartRecord[] = [];
    /**
     * Starts of the probe client, sent on a timer while the NATS node is down. The load clients each wait for
     * their run's terminal event before starting the next, so during a failover they may all be waiting on
     * runs begun before it; the probe measures whether the two nodes left serve, independently of that.
     */
    const probes: StartRecord[] = [];
    const logs: EventLog[] = [];
    const clients: ArsClient[] = [];
    const accepted = new Map<string, number>(); // task id → client
    const timeline: Record<string, number> = {};
    /** Idempotency keys whose start was never accepted, with the last refusal. */
    const abandoned: { key: string; error: string }[] = [];
    let stopLoad = false;

    async function startWithRetries(index: number): Promise<string | undefined> {
      const client = clients[index]!;
      const key = randomUUID();
      // A client retries a retryable refusal with backoff, here for up to 30 s (a failover takes seconds).
      const giveUpAt = Date.now() + 30_000;
      for (let attempt = 0; Date.now() < giveUpAt; attempt++) {
        const issuedAt = Date.now();
        try {
          const started = await client.call<{ task_id: string }>('start', { identity: {}, query: SHORT_RUN, idempotency_key: key });
          starts.push({ client: index, issuedAt, answeredAt: Date.now(), taskId: started.task_id, ...(attempt > 0 ? { retryOf: key } : {}) });
          return started.task_id;
        } catch (error) {
          const code = isArsError(error) ? `${error.status} ${error.code}` : String(error);
          starts.push({ client: index, issuedAt, answeredAt: Date.now(), error: code, ...(attempt > 0 ? { retryOf: key } : {}) });
          // Only a retryable refusal is tried again, with the same idempotency key, as a client should.
          if (!isArsError(error) || (error.status < 500 && error.status !== 0)) {
            abandoned.push({ key, error: code });
            return undefined;
          }
          await sleep(Math.min(250 * 2 ** attempt, 2_000));
        }
      }
      abandoned.push({ key, error: 'still refused after 30 s of retries' });
      return undefined;
    }

    async function clientLoop(index: number): Promise<void> {
      const log = logs[index]!;
      while (!stopLoad) {
        const taskId = await startWithRetries(index);
        if (taskId === undefined) continue;
        accepted.set(taskId, index);
        const ended = await log.until((f) => f.run === taskId && isTerminal(f), { timeoutMs: 120_000 }).then(
          () => false,
          (error: unknown) => String(error).includes('the event stream ended'),
        );
        // A subscription that ended is a failure the assertions report; starting more runs would only hide it.
        if (ended) return;
      }
    }

    /** Starts a run every PROBE_INTERVAL_MS until `until` says stop, without waiting for any of them. */
    async function probeStarts(index: number, until: () => boolean): Promise<void> {
      const client = clients[index]!;
      const pending: Promise<void>[] = [];
      while (!until()) {
        const issuedAt = Date.now();
        pending.push(
          client.call<{ task_id: string }>('start', { identity: {}, query: SHORT_RUN, idempotency_key: randomUUID() }).then(
            (started) => {
              probes.push({ client: index, issuedAt, answeredAt: Date.now(), taskId: started.task_id });
              accepted.set(started.task_id, index);
            },
            (error: unknown) => {
              probes.push({ client: index, issuedAt, answeredAt: Date.now(), error: isArsError(error) ? `${error.status} ${error.code}` : String(error) });
            },
          ),
        );
        await sleep(PROBE_INTERVAL_MS);
      }
      await Promise.all(pending);
    }

    beforeAll(async () => {
      // The load clients, then the probe client (index CLIENTS), each with its own session and event stream.
      for (let i = 0; i <= CLIENTS; i++) {
        const client = await clientFor('load', `user-${i}`, `load-${i}`);
        clients.push(client);
        logs.push(new EventLog(client, { lastEventId: await streamCursor(client) }));
      }
      const loops = Array.from({ length: CLIENTS }, (_, i) => clientLoop(i));
      const executor = deployment.podsOf('run-executor')[0] as LocalPod;
      timeline.loadStarted = Date.now();
      await sleep(4_000);
      timeline.executorKilled = Date.now();
      executor.kill();
      // Longer than the ack wait (8 s), so that clients whose run was on the killed replica get it back,
      // redelivered to the other, and start more while this one is still down.
      await sleep(EXECUTOR_DOWN_MS);
      timeline.executorRestarting = Date.now();
      await executor.restart();
      timeline.executorReady = Date.now();
      await sleep(2_000);
      let probing: Promise<void> = Promise.resolve();
      if (NATS_NODE_FAULT) {
        const victim = await streamLeader('EVENTS');
        timeline.natsKilled = Date.now();
        nats.servers[victim]!.kill();
        let natsDown = true;
        probing = probeStarts(CLIENTS, () => !natsDown);
        // Long enough for the failover to finish and the two left to serve on their own for a while.
        await sleep(NATS_DOWN_MS);
        natsDown = false;
        timeline.natsRestarting = Date.now();
        restartedNats.push(await nats.servers[victim]!.restart());
        timeline.natsRestarted = Date.now();
      }
      await sleep(6_000);
      stopLoad = true;
      timeline.loadStopped = Date.now();
      await Promise.all([...loops, probing]);
      // The probe's runs end too before the assertions read the streams.
      const probeLog = logs[CLIENTS]!;
      await Promise.all(
        probes
          .filter((p) => p.taskId !== undefined)
          .map((p) => probeLog.until((f) => f.run === p.taskId && isTerminal(f), { timeoutMs: 120_000 }).catch(() => undefined)),
      );
      timeline.allEnded = Date.now();
    }, 300_000);

    afterAll(async () => {
      await Promise.all(logs.map((log) => log.close()));
    });

    /** The index of the server that leads a stream's replicas. */
    async function streamLeader(stream: string): Promise<number> {
      const bus = await connectBus({ servers: nats.url, name: 'leader-check' });
      try {
        const leader = (await bus.jsm.streams.info(stream)).cluster?.leader ?? '';
        const index = Number(/n(\d+)$/.exec(leader)?.[1] ?? '1') - 1;
        return index >= 0 && index < nats.servers.length ? index : 0;
      } finally {
        await bus.close();
      }
    }

    function terminalsOf(frames: readonly EventFrame[], taskId: string): EventFrame[] {
      return frames.filter((f) => f.run === taskId && isTerminal(f));
    }

    it('ends every started run with exactly one terminal event, on the stream and in storage', async () => {
      const report = {
        runsStarted: accepted.size,
        runsCompleted: [...accepted].filter(([task, i]) => terminalsOf(logs[i]!.frames, task).some((f) => f.type === 'task.completed')).length,
        startsRefused: starts.filter((s) => s.error !== undefined).length,
        startsRetried: starts.filter((s) => s.retryOf !== undefined).length,
        runsRequeued,
        executorRecoveryMs: timeline.executorReady! - timeline.executorRestarting!,
        natsFault: NATS_NODE_FAULT,
        ...(NATS_NODE_FAULT
          ? {
              natsRecoveryMs: timeline.natsRestarted! - timeline.natsRestarting!,
              // From the kill of a NATS node to the first start accepted after it.
              natsFailoverMs:
                Math.min(...[...starts, ...probes].filter((s) => s.taskId !== undefined && s.issuedAt > timeline.natsKilled!).map((s) => s.answeredAt)) -
                timeline.natsKilled!,
              probes: { sent: probes.length, accepted: probes.filter((p) => p.taskId !== undefined).length },
            }
          : {}),
        allEndedAfterLoadMs: timeline.allEnded! - timeline.loadStopped!,
        refusals: Object.fromEntries(
          [...Map.groupBy(starts.filter((s) => s.error !== undefined), (s) => s.error!)].map(([code, list]) => [code, list.length]),
        ),
        abandoned,
      };
      log.info({ report }, 'cluster faults');
      // Starts accepted per second of the load, and when each fault happened, for bench/RESULTS.md.
      const second = (t: number) => Math.floor((t - timeline.loadStarted!) / 1000);
      const perSecond = new Array<number>(second(timeline.loadStopped!) + 1).fill(0);
      for (const start of starts) if (start.taskId !== undefined) perSecond[second(start.answeredAt)]! += 1;
      const moments = Object.fromEntries(Object.entries(timeline).map(([name, t]) => [name, (t - timeline.loadStarted!) / 1000]));
      log.info({ timeline: moments, startsAcceptedPerSecond: perSecond.join(' ') }, 'cluster timeline (s)');
      expect(accepted.size).toBeGreaterThan(CLIENTS);
      for (const [taskId, index] of accepted) {
        const onStream = terminalsOf(logs[index]!.frames, taskId);
        if (onStream.length === 1) continue;
        // Say what became of it before failing: its task and what storage holds of it.
        const task = await clients[index]!.call('tasks.get', { identity: {}, task_id: taskId }).catch((e: unknown) => String(e));
        const stored = (await storedEvents(clients[index]!, { run: taskId })).map((f) => `${f.sequence} ${f.type}`);
        expect(onStream, `run ${taskId} on the stream; task ${JSON.stringify(task).slice(0, 300)}; stored ${stored.join(', ')}`).toHaveLength(1);
      }
      for (let i = 0; i < clients.length; i++) {
        const stored = await storedEvents(clients[i]!, {});
        for (const [taskId, index] of accepted) {
          if (index !== i) continue;
          const terminals = terminalsOf(stored, taskId);
          const detail = terminals.map((f) => `${f.sequence} ${f.type} ${f.occurred_at} ${JSON.stringify(f.payload).slice(0, 160)}`).join('; ');
          expect(terminals, `run ${taskId} stored: ${detail}`).toHaveLength(1);
        }
      }
    });

    it('shows no SSE subscriber a gap or a duplicate', async () => {
      for (let i = 0; i < clients.length; i++) {
        const seen = logs[i]!.frames.map((f) => f.sequence);
        expect(new Set(seen).size, `client ${i} duplicates`).toBe(seen.length);
        expect(seen, `client ${i} order`).toEqual([...seen].sort((a, b) => a - b));
        const storedFrames = await storedEvents(clients[i]!, {});
        const stored = storedFrames.map((f) => f.sequence);
        const missing = storedFrames.filter((f) => !seen.includes(f.sequence)).map((f) => `${f.sequence} ${f.type} ${f.run} ${f.occurred_at}`);
        const extra = seen.filter((sequence) => !stored.includes(sequence));
        const ended = logs[i]!.endedWith;
        const state = `${seen.length} received${ended === undefined ? '' : `, the subscription ended: ${ended}`}`;
        expect({ missing, extra }, `client ${i}: what the stream delivered is what was stored (${state})`).toEqual({ missing: [], extra: [] });
        expect(seen).toEqual(stored);
      }
    });

    it('refuses no start while one of the two executors is down', () => {
      // From just after the kill (starts already sent to the dying replica are retried) until its replacement is ready.
      const down = starts.filter((s) => s.issuedAt > timeline.executorKilled! + 200 && s.answeredAt < timeline.executorReady!);
      expect(down.length).toBeGreaterThan(0);
      expect(down.filter((s) => s.error !== undefined)).toEqual([]);
      expect(starts.filter((s) => s.error !== undefined && !/^(5\d\d|0) /.test(s.error))).toEqual([]);
    });

    it.skipIf(!NATS_NODE_FAULT)('keeps serving on two of three NATS nodes', () => {
      const during = probes.filter(
        (s) =>
          s.taskId !== undefined &&
          s.issuedAt > timeline.natsKilled! + FAILOVER_ALLOWANCE_MS &&
          s.answeredAt < timeline.natsRestarting!,
      );
      const relative = (t: number) => ((t - timeline.natsKilled!) / 1000).toFixed(1);
      const seen = probes.map((p) => `${relative(p.issuedAt)}→${relative(p.answeredAt)} ${p.error ?? 'ok'}`).join(', ');
      expect(during.length, `probe starts, seconds after the kill (restart at ${relative(timeline.natsRestarting!)}): ${seen}`).toBeGreaterThan(0);
      const completedDuring = during.filter((s) =>
        terminalsOf(logs[s.client]!.frames, s.taskId!).some((f) => f.type === 'task.completed'),
      );
      expect(completedDuring.length).toBeGreaterThan(0);
    });

    it('loses no start: a start refused as retryable is accepted when retried with its idempotency key', () => {
      expect(abandoned).toEqual([]);
    });
  });
});
