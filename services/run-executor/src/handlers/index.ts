import type { RpcHandler } from '@ars/bus';
import type { InternalHandler } from '@ars/service-kit';
import { createControlHandlers } from './controls.handler.ts';
import type { ApiDeps } from './deps.ts';
import { createStartDependencies } from './dependencies.ts';
import type { StartDependencies } from './dependencies.ts';
import { createEraseSessionHandler } from './erase-session.handler.ts';
import type { RunStateEraser } from './erase-session.handler.ts';
import { createPauseListHandler } from './pause-list.handler.ts';
import { createRunOverridesHandler } from './run-overrides.handler.ts';
import type { RunOverridesRepository } from '../store/run-overrides.repository.ts';
import { createSearchTasksHandler } from './search-tasks.handler.ts';
import { createStartHandler } from './start.handler.ts';
import { createSessionAdmissions } from './session-admissions.ts';
import { createRunAnnouncements } from './run-announcements.ts';
import { announceRun } from '../engine/announce.ts';
import type { ErasedSessionRepository } from '../store/erased-session.repository.ts';
import type { FleetGate } from '../engine/fleet-gate.ts';
import { createTaskReadHandlers } from './tasks-read.handler.ts';
import { createFlowReadHandlers } from './flows-read.handler.ts';
import { createFlowRunHandler } from './flows-run.handler.ts';
import type { FlowApi } from './flows-run.handler.ts';

export type { ApiDeps, ApiSettings } from './deps.ts';
export { apiSettingsOf } from './deps.ts';
export type { StartDependencies } from './dependencies.ts';
export type { RunStateEraser } from './erase-session.handler.ts';
export type { FlowApi } from './flows-run.handler.ts';

/** Options of {@link createApiHandlers}. */
export interface ApiHandlerOptions {
  /** The start checks; default: the session, agent-registry and artifact services over NATS. */
  readonly startDependencies?: StartDependencies;
  /** The engine's eraser of run state for `_tasks.erase_session`. */
  readonly eraseRunState?: RunStateEraser;
  /** The session run overrides `runs.set_overrides` writes; absent: the method stays unimplemented. */
  readonly runOverrides?: RunOverridesRepository;
  /** The erased-session markers `_tasks.erase_session` writes and a start with a reused admission reads. */
  readonly erasedSessions: ErasedSessionRepository;
  /** Fleet control `start` consults (a draining or stopped agent takes no new run); absent: none. */
  readonly fleet?: Pick<FleetGate, 'admitStart'>;
  /** The flow catalog and flow runs the flows.* methods read; absent: they stay unimplemented. */
  readonly flows?: FlowApi;
}

/**
 * The run-executor's API side: `start`, the nine steering controls,
 * `tasks.get`, `tasks.list`, `pause.list`, `search.tasks`,
 * `runs.set_overrides`, the flows.* methods, and the internal `_tasks.erase_session`.
 * `stop` waits for the announcements of the runs started (see `RunAnnouncements`).
 */
export function createApiHandlers(
  deps: ApiDeps,
  options: ApiHandlerOptions,
): { handlers: Record<string, RpcHandler>; internalHandlers: InternalHandler[]; stop: () => Promise<void> } {
  const checks =
    options.startDependencies ?? createStartDependencies(deps.rpc, deps.logger, deps.settings.dependencyTimeoutMs);
  const admissions = createSessionAdmissions(checks, {
    logger: deps.logger,
    onErased: (triple) => options.erasedSessions.mark(triple, new Date().toISOString()),
  });
  const announcements = createRunAnnouncements({ logger: deps.logger, send: (task) => announceRun(deps, task) });
  return {
    stop: () => announcements.stop(),
    handlers: {
      start: createStartHandler(deps, checks, admissions, announcements, options.erasedSessions, options.fleet),
      ...createControlHandlers(deps),
      ...createTaskReadHandlers(deps),
      'pause.list': createPauseListHandler(deps),
      'search.tasks': createSearchTasksHandler(deps),
      ...(options.runOverrides === undefined
        ? {}
        : { 'runs.set_overrides': createRunOverridesHandler(deps, options.runOverrides) }),
      ...(options.flows === undefined
        ? {}
        : { 'flows.run': createFlowRunHandler(deps, options.flows), ...createFlowReadHandlers(deps, options.flows) }),
    },
    internalHandlers: [createEraseSessionHandler(deps, { markers: options.erasedSessions }, options.eraseRunState)],
  };
}
