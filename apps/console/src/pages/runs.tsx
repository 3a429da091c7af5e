import { useCallback, useEffect, useId, useRef, useState } from 'react';
import type { FormEvent } from 'react';
import type { EventFrame, SubscribeOptions } from '@ars/client';
import { DataTable, ErrorNotice, ScopeToggle, StatusBadge, useEventStream, useSnapshot } from '../components/index.ts';
import type { Column } from '../components/index.ts';
import type { ConsolePage, PageProps } from '../page-props.ts';
import { applyFrame, rebase } from '../runs-state.ts';
import type { RunsView } from '../runs-state.ts';
import { STATUS_EVENT_TYPES, TASK_STATUSES } from '../task-status.ts';
import type { TaskRow } from '../task-status.ts';

export const page: ConsolePage = { path: '/runs', title: 'Runs', nav: true, order: 10 };

const PAGE_SIZE = 50;
/** How many stream events are kept to re-apply over a fresh snapshot. */
const RECENT_LIMIT = 500;

function StartRunForm({ client, navigate }: Pick<PageProps, 'client' | 'navigate'>) {
  const queryId = useId();
  const agentId = useId();
  const [query, setQuery] = useState('');
  const [agent, setAgent] = useState('');
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const started = await client.start({ query, ...(agent.trim() === '' ? {} : { agent_id: agent.trim() }) });
      navigate(`/runs/${encodeURIComponent(started.task_id)}`);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="card" onSubmit={(e) => void submit(e)} aria-label="Start a run">
      <h2>Start a run</h2>
      <div className="field">
        <label htmlFor={queryId}>Query</label>
        <textarea
          id={queryId}
          name="query"
          rows={2}
          required
          value={query}
          onChange={(e) => setQuery(e.target.value)}
        />
      </div>
      <div className="field">
        <label htmlFor={agentId}>Agent id (optional)</label>
        <input id={agentId} name="agent_id" value={agent} onChange={(e) => setAgent(e.target.value)} />
      </div>
      <ErrorNotice error={error} title="Start refused" />
      <button type="submit" className="button primary" disabled={busy} aria-busy={busy}>
        Start run
      </button>
    </form>
  );
}

/** The runs list: a tasks.list snapshot kept live by the event stream from the snapshot's sequence. */
export default function RunsPage({ client, identity, navigate, params }: PageProps) {
  const tenantWide = params.scope === 'tenant';
  const [view, setView] = useState<RunsView | undefined>(undefined);
  const recent = useRef<EventFrame[]>([]);
  const [streamFrom, setStreamFrom] = useState<number | undefined>(undefined);

  const fetch = useCallback(
    () => client.tasks.list({ limit: PAGE_SIZE, ...(tenantWide ? { filter: { tenant_ids: [identity.tenant] } } : {}) }),
    [client, identity.tenant, tenantWide],
  );
  const { error, load } = useSnapshot(fetch, (snapshot) => {
    recent.current = recent.current.filter((f) => f.sequence > snapshot.sequence);
    setView(rebase(snapshot, recent.current));
    setStreamFrom((from) => from ?? snapshot.sequence);
  });

  const onFrame = useCallback(
    (frame: EventFrame) => {
      if (tenantWide && frame.tenant !== identity.tenant) return;
      recent.current.push(frame);
      if (recent.current.length > RECENT_LIMIT) recent.current.shift();
      setView((current) => (current === undefined ? current : applyFrame(current, frame)));
    },
    [identity.tenant, tenantWide],
  );
  const options: SubscribeOptions | undefined =
    streamFrom === undefined ? undefined : { lastEventId: streamFrom, types: STATUS_EVENT_TYPES, admin: tenantWide };
  const stream = useEventStream(client, options, `${tenantWide}:${streamFrom}`, onFrame);

  // A task the snapshot does not know (new, or past its page): read the list again.
  const unknownCount = view?.unknown.length ?? 0;
  useEffect(() => {
    if (unknownCount === 0) return undefined;
    const timer = setTimeout(() => void load(), 300);
    return () => clearTimeout(timer);
  }, [unknownCount, load]);

  const columns: Column<TaskRow>[] = [
    {
      header: 'Run',
      render: (row) => <a href={`#/runs/${encodeURIComponent(row.task_id)}`}>{row.task_id}</a>,
    },
    { header: 'Status', render: (row) => <StatusBadge status={row.status} /> },
    { header: 'Query', render: (row) => <span className="query">{row.query}</span> },
    {
      header: 'Session',
      render: (row) => (tenantWide ? `${row.user} / ${row.session}` : row.session),
      secondary: true,
    },
    { header: 'Created', render: (row) => new Date(row.created_at).toLocaleString(), secondary: true },
  ];

  return (
    <>
      <h1>Runs</h1>
      <div className="toolbar">
        <ScopeToggle tenantWide={tenantWide} onChange={(on) => navigate(on ? '/runs?scope=tenant' : '/runs')} />
        <button type="button" className="button" onClick={() => void load()}>
          Refresh
        </button>
        <span className="live" role="status">
          {stream.status === 'live' ? 'Live' : stream.status === 'failed' ? 'Stream stopped' : 'Connecting…'}
        </span>
      </div>
      <ErrorNotice error={error} title="Cannot list runs" />
      <ErrorNotice error={stream.error} title="Event stream" />
      {view !== undefined && (
        <>
          <ul className="counters" aria-label="Runs by status">
            {TASK_STATUSES.map((status) => (
              <li key={status} data-status={status}>
                {status}
                <span className="count">{view.counts[status]}</span>
              </li>
            ))}
          </ul>
          <DataTable
            caption={tenantWide ? `Runs of tenant ${identity.tenant}` : `Runs of session ${identity.session}`}
            columns={columns}
            rows={view.rows}
            rowKey={(row) => row.task_id}
            empty="No runs yet."
          />
        </>
      )}
      <StartRunForm client={client} navigate={navigate} />
    </>
  );
}
