import {
  KeyedSeries,
  SECONDS_BUCKETS,
  SERVICE_ATTRIBUTE,
  TOKEN_BUCKETS,
  counterFamily,
  histogramFamily,
} from '@ars/telemetry';
import type { Attributes, BoundCounter, BoundHistogram } from '@ars/telemetry';
import type { PublishObserver, RunMeta } from '../engine/event-pipeline.ts';

/**
 * The run metrics, derived from the events the executor stores and from
 * nothing else: `task.started` and the terminal events count runs and time
 * them from their acceptance, `llm.cost.recorded` gives tokens and cost by
 * model, `tool.*` the tool calls by tool and outcome. One switch on the type
 * per stored event; every series is bound once (per agent, model or tool)
 * and recording is arithmetic.
 */

const EXECUTOR: Attributes = { [SERVICE_ATTRIBUTE]: 'run-executor' };

export const RUNS_STARTED = counterFamily('ars.runs.started', {
  description: 'Runs an executor started (task.started), by agent',
  unit: '{run}',
});
export const RUNS_FINISHED = counterFamily('ars.runs.finished', {
  description:
    'Runs that ended, by agent and outcome (completed, failed, cancelled); failed ones by error code (error.type)',
  unit: '{run}',
});
export const RUN_DURATION = histogramFamily('ars.run.duration', {
  description: 'Time from a run being accepted (its start) to its terminal event, by agent and outcome',
  unit: 's',
  boundaries: SECONDS_BUCKETS,
});
export const RUN_TIME_TO_FIRST_EVENT = histogramFamily('ars.run.time_to_first_event', {
  description:
    'Time from a run being accepted to its first event after task.started (the first sign of its planner: usually a streamed LLM chunk), by agent',
  unit: 's',
  boundaries: SECONDS_BUCKETS,
});
export const TOKEN_USAGE = histogramFamily('gen_ai.client.token.usage', {
  description: 'Tokens of each LLM call, by model and token type (input, output)',
  unit: '{token}',
  boundaries: TOKEN_BUCKETS,
});
export const LLM_COST = counterFamily('ars.llm.cost', {
  description: 'Cost of the LLM calls as the provider priced them, by model',
  unit: 'USD',
});
export const TOOL_CALLS = counterFamily('ars.tool.calls', {
  description:
    'Tool call events by tool and outcome: completed, failed (each failed attempt), invalid_args, policy_exhausted',
  unit: '{call}',
});
export const TOOL_DURATION = histogramFamily('ars.tool.duration', {
  description: 'Duration of the successful tool calls (all attempts), by tool',
  unit: 's',
  boundaries: SECONDS_BUCKETS,
});

const OUTCOMES = { 'task.completed': 'completed', 'task.failed': 'failed', 'task.cancelled': 'cancelled' } as const;
type Terminal = keyof typeof OUTCOMES;

/** The bound series of one agent. */
interface AgentSeries {
  readonly started: BoundCounter;
  readonly firstEvent: BoundHistogram;
  /** Completed and cancelled runs; failed ones are counted by code in `failedBy`. */
  readonly finished: Record<Exclude<Terminal, 'task.failed'>, BoundCounter>;
  readonly duration: Record<Terminal, BoundHistogram>;
  /** Failed runs by error code, bound on the code's first failure. */
  readonly failedBy: KeyedSeries<BoundCounter>;
}

interface ModelSeries {
  readonly input: BoundHistogram;
  readonly output: BoundHistogram;
  readonly cost: BoundCounter;
}

interface ToolSeries {
  readonly completed: BoundCounter;
  readonly failed: BoundCounter;
  readonly invalidArgs: BoundCounter;
  readonly exhausted: BoundCounter;
  readonly duration: BoundHistogram;
}

/** Runs started here whose first event after `task.started` has not come yet; bounded. */
const MAX_AWAITING_FIRST_EVENT = 10_000;

function bindAgent(agent: string): AgentSeries {
  const base = { ...EXECUTOR, 'ars.agent': agent };
  const outcome = (terminal: Terminal) => ({ ...base, 'ars.run.outcome': OUTCOMES[terminal] });
  return {
    started: RUNS_STARTED.bind(base),
    firstEvent: RUN_TIME_TO_FIRST_EVENT.bind(base),
    finished: {
      'task.completed': RUNS_FINISHED.bind(outcome('task.completed')),
      'task.cancelled': RUNS_FINISHED.bind(outcome('task.cancelled')),
    },
    duration: {
      'task.completed': RUN_DURATION.bind(outcome('task.completed')),
      'task.failed': RUN_DURATION.bind(outcome('task.failed')),
      'task.cancelled': RUN_DURATION.bind(outcome('task.cancelled')),
    },
    failedBy: new KeyedSeries((code) => RUNS_FINISHED.bind({ ...outcome('task.failed'), 'error.type': code }), 100),
  };
}

function bindModel(model: string): ModelSeries {
  const base = { ...EXECUTOR, 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': model };
  return {
    input: TOKEN_USAGE.bind({ ...base, 'gen_ai.token.type': 'input' }),
    output: TOKEN_USAGE.bind({ ...base, 'gen_ai.token.type': 'output' }),
    cost: LLM_COST.bind(base),
  };
}

function bindTool(tool: string): ToolSeries {
  const base = { ...EXECUTOR, 'ars.tool.name': tool };
  const outcome = (value: string) => TOOL_CALLS.bind({ ...base, 'ars.tool.outcome': value });
  return {
    completed: outcome('completed'),
    failed: outcome('failed'),
    invalidArgs: outcome('invalid_args'),
    exhausted: outcome('policy_exhausted'),
    duration: TOOL_DURATION.bind(base),
  };
}

function numberOf(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

/** The executor's {@link PublishObserver}: run, LLM and tool metrics from the stored events. */
export function createRunMetrics(now: () => number = Date.now): PublishObserver {
  const agents = new KeyedSeries(bindAgent);
  const models = new KeyedSeries(bindModel);
  const tools = new KeyedSeries(bindTool, 1_000);
  /** The runs whose `task.started` was stored here and whose next event is the first one. */
  const awaitingFirst = new Set<RunMeta>();

  const firstEvent = (meta: RunMeta): void => {
    if (!awaitingFirst.delete(meta)) return;
    agents.get(meta.agentId).firstEvent.record(Math.max(0, now() - meta.acceptedAtMs) / 1000);
  };

  const tool = (type: string, payload: Record<string, unknown>): void => {
    const name = payload.ToolName;
    if (typeof name !== 'string') return;
    const series = tools.get(name);
    if (type === 'tool.completed') {
      series.completed.add();
      series.duration.record(numberOf(payload.DurationMS) / 1000);
    } else if (type === 'tool.failed') series.failed.add();
    else if (type === 'tool.invalid_args') series.invalidArgs.add();
    else if (type === 'tool.policy_exhausted') series.exhausted.add();
  };

  const cost = (payload: Record<string, unknown>): void => {
    const series = models.get(typeof payload.Model === 'string' ? payload.Model : 'unknown');
    const usage = record(payload.Usage);
    series.input.record(numberOf(usage.input_tokens));
    series.output.record(numberOf(usage.output_tokens));
    series.cost.add(numberOf(record(payload.Cost).total));
  };

  const terminal = (type: Terminal, payload: Record<string, unknown>, meta: RunMeta): void => {
    awaitingFirst.delete(meta);
    const series = agents.get(meta.agentId);
    if (type === 'task.failed') {
      series.failedBy.get(typeof payload.ErrorCode === 'string' ? payload.ErrorCode : 'internal').add();
    } else {
      series.finished[type].add();
    }
    series.duration[type].record(Math.max(0, now() - meta.acceptedAtMs) / 1000);
  };

  return {
    stored(type, payload, meta) {
      if (meta !== undefined) {
        if (type === 'task.started') {
          agents.get(meta.agentId).started.add();
          if (awaitingFirst.size >= MAX_AWAITING_FIRST_EVENT) awaitingFirst.clear();
          awaitingFirst.add(meta);
          return;
        }
        if (type in OUTCOMES) {
          terminal(type as Terminal, payload, meta);
          return;
        }
        firstEvent(meta);
      }
      if (type === 'llm.cost.recorded') cost(payload);
      else if (type.startsWith('tool.')) tool(type, payload);
    },
  };
}
