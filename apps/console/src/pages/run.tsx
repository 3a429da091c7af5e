import { useCallback, useMemo, useRef, useState } from 'react';
import type { EventFrame, SubscribeOptions } from '@ars/client';
import { ErrorNotice, JsonView, StatusBadge, useEventStream, useLoad } from '../components/index.ts';
import type { ConsolePage, PageProps } from '../page-props.ts';
import { SteeringPanel } from '../steering.tsx';
import { isTerminalStatus, statusAfter } from '../task-status.ts';
import type { TaskStatus } from '../task-status.ts';
import { buildTimeline, costTotals, settleEffect } from '../timeline.ts';
import type { SteeringEffect, TimelineEntry, ToolOutcome } from '../timeline.ts';

export const page: ConsolePage = { path: '/runs/:taskId', title: 'Run' };

function entryClass(frame: EventFrame): string {
  if (frame.type.startsWith('tool.')) return 'tool';
  if (frame.type.startsWith('control.') || frame.type.startsWith('pause.')) return 'control';
  if (frame.type === 'llm.cost.recorded') return 'cost';
  if (statusAfter(frame) !== undefined && frame.type !== 'task.spawned' && frame.type !== 'task.started')
    return 'terminal';
  return '';
}

/** A one-line reading of an event's payload; the full payload is one click away. */
function summary(frame: EventFrame): string {
  const p = frame.payload;
  switch (frame.type) {
    case 'tool.invoked':
      return `${String(p.ToolName)} (${String(p.Transport)})`;
    case 'tool.completed':
      return `${String(p.ToolName)} done in ${String(p.DurationMS)} ms, ${String(p.Attempts)} attempt(s)`;
    case 'tool.failed':
      return `${String(p.ToolName)}: ${String(p.ErrorClass)} ${String(p.ErrorMessage ?? '')}`;
    case 'tool.approval_requested':
      return `${String(p.Tool)} waits for approval: ${String(p.Reason ?? '')}`;
    case 'planner.decision':
      return `${String(p.DecisionKind)}${p.Tool ? ` → ${String(p.Tool)}` : ''}`;
    case 'llm.cost.recorded': {
      const cost = p.Cost as { total?: number; currency?: string } | undefined;
      const usage = p.Usage as { input_tokens?: number; output_tokens?: number } | undefined;
      return `${String(p.Model)}: ${cost?.total ?? 0} ${cost?.currency ?? ''}, ${usage?.input_tokens ?? 0} in / ${usage?.output_tokens ?? 0} out tokens`;
    }
    case 'control.received':
    case 'control.applied':
      return `${String(p.Type)} ${String(p.Outcome ?? '')}`;
    case 'control.rejected':
      return `${String(p.Type)}: ${String(p.Reason ?? '')}`;
    case 'task.failed':
      return String(p.ErrorCode ?? '');
    case 'task.cancelled':
      return String(p.Reason ?? '');
    default:
      return '';
  }
}

/** The state line of a tool call: running, or how it ended and in how long. */
function toolState(outcome: ToolOutcome): string {
  const attempts = outcome.attempts !== undefined && outcome.attempts > 1 ? `, ${outcome.attempts} attempts` : '';
  switch (outcome.state) {
    case 'running':
      return 'running…';
    case 'completed':
      return `completed in ${outcome.durationMs ?? 0} ms${attempts}`;
    case 'failed':
      return `attempt failed${attempts}: ${outcome.error ?? ''}`;
    case 'exhausted':
      return `failed${attempts}: ${outcome.error ?? ''}`;
    case 'invalid_args':
      return `arguments refused: ${outcome.error ?? ''}`;
  }
}

function Entry({ entry }: { readonly entry: TimelineEntry }) {
  if (entry.kind === 'llm') {
    return (
      <li className={entry.stream === 'reasoning' ? 'llm reasoning' : 'llm'}>
        <span className="kind">{entry.stream === 'reasoning' ? 'reasoning' : 'llm.completion'}</span>
        <div className="llm-text">{entry.text}</div>
      </li>
    );
  }
  if (entry.kind === 'tool') {
    const failed = entry.outcome.state !== 'completed' && entry.outcome.state !== 'running';
    return (
      <li className={failed ? 'tool failed' : 'tool'} data-type="tool.call" data-tool={entry.tool}>
        <span className="kind">
          tool {entry.tool} ({entry.transport})
        </span>{' '}
        <span data-testid="tool-state">{toolState(entry.outcome)}</span>
        {entry.args !== '' && (
          <pre className="json" aria-label={`Arguments of ${entry.tool}`}>
            {entry.args}
          </pre>
        )}
        <JsonView value={entry.frames.map((f) => ({ type: f.type, payload: f.payload }))} summary="events" />
      </li>
    );
  }
  const { frame } = entry;
  return (
    <li className={entryClass(frame)} data-type={frame.type}>
      <span className="kind">
        #{frame.sequence} {frame.type}
      </span>{' '}
      <span>{summary(frame)}</span>
      <JsonView value={frame.payload} summary="payload" />
    </li>
  );
}

/** One run: its facts, its live timeline (LLM text, tool calls, costs, controls) and the steering buttons. */
export default function RunPage({ client, identity, params }: PageProps) {
  const taskId = params.taskId ?? '';
  const detail = useLoad(() => client.tasks.get({ task_id: taskId }), [client, taskId]);
  const [frames, setFrames] = useState<EventFrame[]>([]);
  const [effects, setEffects] = useState<readonly SteeringEffect[]>([]);
  const nextEffect = useRef(1);
  const seen = useRef(new Set<number>());

  const onFrame = useCallback((frame: EventFrame) => {
    if (seen.current.has(frame.sequence)) return;
    seen.current.add(frame.sequence);
    setFrames((all) => [...all, frame]);
    setEffects((current) => settleEffect(current, frame));
  }, []);
  // The run's whole history from the start of the stream, then live.
  const options: SubscribeOptions | undefined = taskId === '' ? undefined : { run: taskId, lastEventId: 0 };
  const stream = useEventStream(client, options, taskId, onFrame);

  const task = detail.data?.task;
  const status: TaskStatus | undefined = useMemo(() => {
    if (task === undefined) return undefined;
    let current: TaskStatus = task.status;
    const asOf = detail.data?.sequence ?? 0;
    for (const frame of frames) {
      const next = frame.sequence > asOf ? statusAfter(frame) : undefined;
      if (next !== undefined) current = next;
    }
    return current;
  }, [task, frames, detail.data?.sequence]);
  const timeline = useMemo(() => buildTimeline(frames), [frames]);
  const costs = useMemo(() => costTotals(frames), [frames]);
  const parked = useMemo(() => {
    const requested = frames.filter((f) => f.type === 'pause.requested').length;
    const resumed = frames.filter((f) => f.type === 'pause.resumed').length;
    return requested > resumed;
  }, [frames]);
  const live = status !== undefined && !isTerminalStatus(status);

  return (
    <>
      <h1>
        Run <code>{taskId}</code>
      </h1>
      <p>
        <a href="#/runs">All runs</a>
      </p>
      <ErrorNotice error={detail.error} title="Cannot read the run" />
      {task !== undefined && status !== undefined && (
        <dl className="facts">
          <dt>Status</dt>
          <dd data-testid="run-status">
            <StatusBadge status={status} />
            {parked && live && <StatusBadge status="paused" />}
          </dd>
          <dt>Query</dt>
          <dd>{task.query}</dd>
          {task.goal !== '' && task.goal !== task.query && (
            <>
              <dt>Goal</dt>
              <dd>{task.goal}</dd>
            </>
          )}
          <dt>Session</dt>
          <dd>
            {task.tenant} / {task.user} / {task.session}
          </dd>
          <dt>Priority</dt>
          <dd>{task.priority}</dd>
          <dt>Cost</dt>
          <dd>
            {Object.keys(costs).length === 0
              ? `${detail.data?.cost_total.cost ?? 0} ${detail.data?.cost_total.currency ?? ''}`
              : Object.entries(costs)
                  .map(([currency, total]) => `${total.toFixed(6)} ${currency}`)
                  .join(', ')}
          </dd>
          {task.error_code !== undefined && (
            <>
              <dt>Error</dt>
              <dd>
                {task.error_code} {task.error_message ?? ''}
              </dd>
            </>
          )}
        </dl>
      )}
      {task !== undefined && (
        <SteeringPanel
          client={client}
          taskId={taskId}
          isAdmin={identity.scopes.includes('admin')}
          live={live}
          effects={effects}
          onSend={(method) => {
            const id = nextEffect.current++;
            setEffects((all) => [...all, { id, method, state: 'sent' }]);
            return id;
          }}
          onRefused={(id) => setEffects((all) => all.filter((effect) => effect.id !== id))}
        />
      )}
      <section aria-labelledby="timeline-title">
        <h2 id="timeline-title">Timeline</h2>
        <p className="live" role="status">
          {stream.status === 'failed' ? 'Stream stopped' : `${frames.length} events`}
        </p>
        <ErrorNotice error={stream.error} title="Event stream" />
        <ol className="timeline" aria-label="Events of the run">
          {timeline.map((entry) => (
            <Entry key={entry.key} entry={entry} />
          ))}
        </ol>
      </section>
    </>
  );
}
