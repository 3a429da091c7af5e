import { EVENTS_STREAM, eventFilterSubject } from '@ars/bus';
import { defineService, startPeriodic } from '@ars/service-kit';
import type { PeriodicJob, ServiceContext, ServiceImplementation } from '@ars/service-kit';
import { createCatalog } from './catalog/admission.ts';
import { createTurnQueries } from './catalog/turn-queries.ts';
import { reapIdleSessions } from './catalog/idle-reaper.ts';
import { SessionConfig } from './config.ts';
import { ARTIFACTS_CONSUMER, ARTIFACT_EVENTS_FILTER, createArtifactEventHandler } from './consumers/artifact-events.ts';
import { startDurableConsumer } from './consumers/durable-consumer.ts';
import type { RunningConsumer } from './consumers/durable-consumer.ts';
import { STATE_RECORDS_CONSUMER, createTaskEventHandler } from './consumers/task-events.ts';
import type { SessionTriple } from './domain/session.ts';
import { TASK_EVENTS_FILTER } from './domain/state-records.ts';
import { createEraser } from './erasure/eraser.ts';
import { admissionReuseMs, admitHandler } from './handlers/admit.handler.ts';
import { searchSessionsHandler } from './handlers/search-sessions.handler.ts';
import { sessionsDeleteHandler } from './handlers/sessions-delete.handler.ts';
import { sessionsInspectHandler } from './handlers/sessions-inspect.handler.ts';
import { sessionsListHandler } from './handlers/sessions-list.handler.ts';
import { sessionsSetTitleHandler } from './handlers/sessions-set-title.handler.ts';
import { stateHistoryHandler } from './handlers/state-history.handler.ts';
import { createSessionEvents } from './session-events.ts';
import { createProjectionRepository } from './store/projection.repository.ts';
import { createSessionRepository } from './store/session.repository.ts';
import { createStateRecordRepository } from './store/state-record.repository.ts';

async function build(context: ServiceContext<SessionConfig>): Promise<ServiceImplementation> {
  const { config, bus, store, logger, publisher, rpc } = context;
  const now = (): Date => new Date();
  const sessions = createSessionRepository(store);
  const records = createStateRecordRepository(store);
  const projections = createProjectionRepository(store);
  await sessions.ensureIndexes();
  await records.ensureIndexes();
  await projections.ensureIndexes();

  const events = createSessionEvents(publisher, logger);
  const catalog = createCatalog({ sessions, events, now });
  const turns = createTurnQueries();
  const purgeEvents = async (triple: SessionTriple): Promise<number> =>
    (await bus.jsm.streams.purge(EVENTS_STREAM, { filter: eventFilterSubject(triple) })).purged;
  const eraser = createEraser({
    sessions,
    records,
    projections,
    rpc,
    purgeEvents,
    events,
    logger: logger.child({ component: 'erasure' }),
    now,
    cascadeTimeoutMs: config.SESSION_CASCADE_TIMEOUT_SECONDS * 1000,
  });

  const stoppers: (() => Promise<void>)[] = [];
  const consumers: RunningConsumer[] = [
    await startDurableConsumer({
      bus,
      logger: logger.child({ component: 'state-records' }),
      durable: STATE_RECORDS_CONSUMER,
      filterSubject: TASK_EVENTS_FILTER,
      handle: createTaskEventHandler({ catalog, sessions, records, projections, events, rpc, logger, turns }),
      // A session's records follow its events in order; sessions do not wait for each other.
      orderingKey: (frame) => JSON.stringify([frame.tenant, frame.user, frame.session]),
    }),
    await startDurableConsumer({
      bus,
      logger: logger.child({ component: 'artifact-counts' }),
      durable: ARTIFACTS_CONSUMER,
      filterSubject: ARTIFACT_EVENTS_FILTER,
      handle: createArtifactEventHandler({ sessions, projections }),
    }),
  ];
  const jobs: PeriodicJob[] = [
    startPeriodic(async () => void (await eraser.resumeAll()), {
      name: 'erasure-resumer',
      intervalMs: config.SESSION_ERASURE_RETRY_SECONDS * 1000,
      logger,
      runAtStart: true,
    }),
  ];
  if (config.SESSION_IDLE_CLOSE_SECONDS > 0) {
    const reaperLogger = logger.child({ component: 'idle-reaper' });
    const idleSeconds = config.SESSION_IDLE_CLOSE_SECONDS;
    const reap = async (): Promise<void> =>
      void (await reapIdleSessions({ sessions, events, logger: reaperLogger, now, idleSeconds }));
    jobs.push(
      startPeriodic(reap, { name: 'idle-reaper', intervalMs: config.SESSION_REAP_INTERVAL_SECONDS * 1000, logger }),
    );
  }
  stoppers.push(...jobs.map((job) => () => job.stop()), ...consumers.map((c) => () => c.stop()));

  return {
    handlers: {
      'sessions.list': sessionsListHandler(sessions),
      'sessions.inspect': sessionsInspectHandler(sessions, projections),
      'sessions.set_title': sessionsSetTitleHandler(sessions, events),
      'sessions.delete': sessionsDeleteHandler(eraser),
      'search.sessions': searchSessionsHandler(sessions),
      'state.history': stateHistoryHandler(sessions, records),
    },
    internalHandlers: [
      admitHandler(
        catalog,
        turns,
        admissionReuseMs(config.SESSION_ADMISSION_REUSE_SECONDS, config.SESSION_IDLE_CLOSE_SECONDS),
      ),
    ],
    async stop() {
      for (const stop of stoppers) await stop();
    },
  };
}

/**
 * The session service: sessions.*, state.history and search.sessions; the
 * session catalog (`_session.admit` for starts), the state-record consumer
 * of task events, idle reaping, and the erasure cascade with its resumer.
 */
export const sessionService = defineService({
  name: 'session',
  version: '0.1.0',
  config: SessionConfig,
  build,
});
