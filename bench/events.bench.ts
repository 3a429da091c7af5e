/**
 * Benchmark (issue 4): the event stream of one gateway.
 *
 * 1. Replay: `Last-Event-ID: 0` over a session holding the first 100,000
 *    events of the stream, until `replay.complete`; events/s.
 * 2. Idle memory: the gateway's resident memory with N idle subscribers
 *    (own sessions, heartbeats only) minus without; bytes per subscriber.
 * 3. Fan-out: 1,000 concurrent SSE subscribers spread over S sessions,
 *    2,000 events/s published round-robin over the sessions; publish-to-
 *    delivery p50/p99 and deliveries/s.
 *
 * nats-server and the gateway run as their own processes; the publisher (raw
 * NATS protocol) and the subscribers run here.
 *
 *   node bench/events.bench.ts [--subscribers 1000] [--rate 2000] [--sessions 1000,100]
 *     [--duration 10000] [--warmup 3000] [--replay 100000] [--idle 1000]
 */
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import { startTestNats } from '@ars/testkit';
import { startGatewayProcess } from './src/gateway-process.ts';
import type { GatewayProcess } from './src/gateway-process.ts';
import { quantile } from './src/load.ts';
import { connectPublisher } from './src/nats-publisher.ts';
import type { Identity, NatsPublisher } from './src/nats-publisher.ts';
import { openSse } from './src/sse-stream.ts';
import type { SseConnection } from './src/sse-stream.ts';

const { values } = parseArgs({
  options: {
    subscribers: { type: 'string', default: '1000' },
    rate: { type: 'string', default: '2000' },
    sessions: { type: 'string', default: '1000,100' },
    duration: { type: 'string', default: '10000' },
    warmup: { type: 'string', default: '3000' },
    replay: { type: 'string', default: '100000' },
    idle: { type: 'string', default: '1000' },
  },
});
const SUBSCRIBERS = Number(values.subscribers);
const RATE = Number(values.rate);
const SESSIONS = values.sessions.split(',').map(Number);
const DURATION_MS = Number(values.duration);
const WARMUP_MS = Number(values.warmup);
const REPLAY_EVENTS = Number(values.replay);
const IDLE_SUBSCRIBERS = Number(values.idle);

const TENANT = 'bench';
const USER = 'bench';
const dispatcher = new Agent({ pipelining: 1, bodyTimeout: 0, headersTimeout: 0, keepAliveTimeout: 60_000 });

const now = () => performance.timeOrigin + performance.now();
const print = (line: string) => process.stdout.write(`${line}\n`);
/** The 1-minute load average: other work on the machine shows in the latencies. */
const load = () => `load ${loadavg()[0]!.toFixed(2)} on ${cpus().length} cores`;
const f = (n: number, digits = 2) => n.toFixed(digits);

async function bootstrapToken(gateway: GatewayProcess): Promise<string> {
  const response = await request(`${gateway.baseUrl}/v1/dev/bootstrap.json`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ tenant: TENANT, user: USER, session: 'default', scopes: [] }),
    dispatcher,
  });
  const body = (await response.body.json()) as { access_token: string };
  return body.access_token;
}

/** The stream's last sequence, through events.list. */
async function lastSequence(gateway: GatewayProcess, token: string): Promise<number> {
  const response = await request(`${gateway.baseUrl}/v1/events/list`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ identity: {}, limit: 1, after_sequence: 1_000_000_000 }),
    dispatcher,
  });
  const body = (await response.body.json()) as { last_sequence: number };
  return body.last_sequence;
}

function identity(session: string, run = 'bench-run'): Identity {
  return { tenant: TENANT, user: USER, session, run };
}

const PAYLOAD_PAD = 'x'.repeat(120);

async function replayScenario(gateway: GatewayProcess, token: string, publisher: NatsPublisher): Promise<void> {
  const session = 'replay';
  for (let i = 0; i < REPLAY_EVENTS; i++) {
    publisher.publish(identity(session), 'task.started', {
      TaskID: `replay-${i}-${PAYLOAD_PAD}`,
      PriorState: 'pending',
    });
    if (i % 5_000 === 4_999) await publisher.flush();
  }
  await publisher.flush();
  while ((await lastSequence(gateway, token)) < REPLAY_EVENTS) await sleep(50);
  const rates: number[] = [];
  for (let round = 0; round < 3; round++) {
    let frames = 0;
    const started = performance.now();
    let finished = 0;
    let complete!: () => void;
    const completed = new Promise<void>((resolve) => (complete = resolve));
    const connection = await openSse(
      `${gateway.baseUrl}/v1/events`,
      { authorization: `Bearer ${token}`, 'x-service-session': session, 'last-event-id': '0' },
      dispatcher,
      {
        frame: () => void (frames += 1),
        named: (event) => {
          if (event !== 'replay.complete') return;
          finished = performance.now();
          complete();
        },
      },
    );
    await completed;
    connection.close();
    await connection.done;
    const seconds = (finished - started) / 1000;
    rates.push(frames / seconds);
    print(
      `replay  round ${round + 1}: ${frames} events from sequence 1 in ${f(seconds * 1000, 0)} ms = ${f(frames / seconds, 0)} events/s`,
    );
  }
  rates.sort((a, b) => a - b);
  print(`replay  median ${f(rates[1]!, 0)} events/s (target >= 50000)`);
}

/** Opens `count` idle subscriptions (sessions `<prefix>-<i>`) and waits until each is live. */
async function openIdle(gateway: GatewayProcess, token: string, prefix: string, count: number) {
  const connections: SseConnection[] = [];
  const ready: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    let live!: () => void;
    ready.push(new Promise((resolve) => (live = resolve)));
    connections.push(
      await openSse(
        `${gateway.baseUrl}/v1/events`,
        { authorization: `Bearer ${token}`, 'x-service-session': `${prefix}-${i}` },
        dispatcher,
        { named: (event) => event === 'replay.complete' && live() },
      ),
    );
  }
  await Promise.all(ready);
  return connections;
}

async function closeAll(connections: readonly SseConnection[]): Promise<void> {
  for (const connection of connections) connection.close();
  await Promise.all(connections.map((connection) => connection.done));
}

/** On a fresh gateway, warmed by 50 subscriptions opened and closed, so that freed memory does not hide growth. */
async function idleScenario(gateway: GatewayProcess, token: string): Promise<void> {
  await closeAll(await openIdle(gateway, token, 'warm', 50));
  await sleep(2_000);
  const before = await gateway.rss();
  const connections = await openIdle(gateway, token, 'idle', IDLE_SUBSCRIBERS);
  await sleep(2_000);
  const after = await gateway.rss();
  const per = (after - before) / IDLE_SUBSCRIBERS;
  print(
    `idle    ${IDLE_SUBSCRIBERS} subscribers: gateway RSS ${f(before / 1_048_576, 1)} MiB -> ${f(after / 1_048_576, 1)} MiB = ${f(per / 1024, 1)} KiB per idle subscriber (target < 50 KiB)`,
  );
  await closeAll(connections);
}

async function fanOutScenario(
  gateway: GatewayProcess,
  token: string,
  publisher: NatsPublisher,
  sessions: number,
): Promise<void> {
  const latencies: number[] = [];
  let measuring = false;
  let delivered = 0;
  const connections: SseConnection[] = [];
  const ready: Promise<void>[] = [];
  for (let i = 0; i < SUBSCRIBERS; i++) {
    let live!: () => void;
    ready.push(new Promise((resolve) => (live = resolve)));
    connections.push(
      await openSse(
        `${gateway.baseUrl}/v1/events`,
        { authorization: `Bearer ${token}`, 'x-service-session': `fan-${sessions}-${i % sessions}` },
        dispatcher,
        {
          frame: (data) => {
            if (!measuring) return;
            const sent = Number((JSON.parse(data) as { payload: { TaskID: string } }).payload.TaskID);
            latencies.push(now() - sent);
            delivered += 1;
          },
          named: (event) => event === 'replay.complete' && live(),
        },
      ),
    );
  }
  await Promise.all(ready);

  let published = 0;
  let publishedMeasured = 0;
  const start = performance.now();
  const measureFrom = start + WARMUP_MS;
  const end = measureFrom + DURATION_MS;
  while (performance.now() < end) {
    const t = performance.now();
    if (!measuring && t >= measureFrom) measuring = true;
    const due = Math.floor(((t - start) / 1000) * RATE);
    for (; published < due; published++) {
      publisher.publish(identity(`fan-${sessions}-${published % sessions}`), 'task.started', {
        TaskID: String(now()),
        PriorState: 'pending',
      });
      if (measuring) publishedMeasured += 1;
    }
    await sleep(2);
  }
  await publisher.flush();
  await sleep(1_000);
  measuring = false;
  await closeAll(connections);

  latencies.sort((a, b) => a - b);
  const perEvent = SUBSCRIBERS / sessions;
  const expected = publishedMeasured * perEvent;
  print(
    `fan-out ${SUBSCRIBERS} subscribers / ${sessions} sessions (${f(perEvent, 0)} per event), ${RATE} events/s published: ` +
      `p50 ${f(quantile(latencies, 0.5))} ms  p99 ${f(quantile(latencies, 0.99))} ms  max ${f(latencies.at(-1) ?? NaN)} ms  ` +
      `${f(delivered / (DURATION_MS / 1000), 0)} deliveries/s (${delivered}/${expected} expected) (target p99 < 50 ms; ${load()})`,
  );
}

const nats = await startTestNats();
const publisher = await connectPublisher(nats.url);
try {
  print(`event stream benchmark: node ${process.version}, ${load()}`);
  if (IDLE_SUBSCRIBERS > 0) {
    const fresh = await startGatewayProcess(nats.url);
    try {
      await idleScenario(fresh, await bootstrapToken(fresh));
    } finally {
      await fresh.stop();
    }
  }
  const gateway = await startGatewayProcess(nats.url);
  try {
    const token = await bootstrapToken(gateway);
    if (REPLAY_EVENTS > 0) await replayScenario(gateway, token, publisher);
    for (const sessions of SESSIONS) await fanOutScenario(gateway, token, publisher, sessions);
  } finally {
    await gateway.stop();
  }
} finally {
  await publisher.close();
  await nats.stop();
  await dispatcher.close();
}
