import { useState } from 'react';
import type { SessionsDeleteResponse, StateHistoryResponse } from '@ars/client';
import { ActionButton, ConfirmDialog, DataTable, ErrorNotice, StatusBadge, useLoad } from '../components/index.ts';
import type { Column } from '../components/index.ts';
import { Pager, useCursorPages } from '../components/cursor-pages.tsx';
import '../components/pages.css';
import type { ConsolePage, PageProps } from '../page-props.ts';
import { TASK_STATUSES } from '../task-status.ts';

export const page: ConsolePage = { path: '/sessions/:sessionId', title: 'Session' };

type HistoryItem = StateHistoryResponse['items'][number];
const HISTORY_PAGE = 50;

function ErasedNotice({ erased }: { readonly erased: SessionsDeleteResponse }) {
  return (
    <div className="result" role="status">
      <p>
        Session <strong>{erased.session_id}</strong> was erased at {new Date(erased.erased_at).toLocaleString()}. Its id
        cannot be used again.
      </p>
      <dl className="facts">
        <dt>Runs deleted</dt>
        <dd>{erased.tasks_deleted}</dd>
        <dt>State records deleted</dt>
        <dd>{erased.state_records_deleted}</dd>
        <dt>Artifacts deleted</dt>
        <dd>{erased.artifacts_deleted}</dd>
        <dt>Memory purged</dt>
        <dd>{erased.memory_purged ? 'yes' : 'no'}</dd>
        <dt>Events purged</dt>
        <dd>{erased.events_purged ? 'yes' : 'no'}</dd>
      </dl>
      <a href="#/sessions">All sessions</a>
    </div>
  );
}

function StateHistory({ client, sessionId }: Pick<PageProps, 'client'> & { readonly sessionId: string }) {
  const pages = useCursorPages<HistoryItem, StateHistoryResponse>(
    (cursor) =>
      client.state.history(
        { limit: HISTORY_PAGE, ...(cursor === undefined ? {} : { cursor }) },
        { session: sessionId },
      ),
    [client, sessionId],
  );
  const columns: Column<HistoryItem>[] = [
    { header: '#', render: (item) => item.seq, secondary: true },
    { header: 'When', render: (item) => new Date(item.occurred_at).toLocaleString() },
    { header: 'Kind', render: (item) => (item.kind === 'turn' ? `turn (${item.role ?? '?'})` : 'run state') },
    {
      header: 'What',
      render: (item) =>
        item.kind === 'turn' ? (
          <span className="llm-text">{item.content ?? ''}</span>
        ) : (
          <>
            {item.task_id !== undefined && <code>{item.task_id}</code>} {item.prior_status ?? '∅'} →{' '}
            {item.status !== undefined && <StatusBadge status={item.status} />}
          </>
        ),
    },
  ];
  return (
    <section aria-labelledby="history-title">
      <h2 id="history-title">State history</h2>
      <ErrorNotice error={pages.error} title="Cannot read the state history" />
      {pages.data !== undefined && (
        <DataTable
          caption="Run states and turns, oldest first"
          columns={columns}
          rows={pages.data.items}
          rowKey={(i) => String(i.seq)}
          empty="No history yet."
        />
      )}
      <Pager pages={pages} label="the state history" />
    </section>
  );
}

/** One session: its facts, runs by status, state history, rename, and erasure (typed confirmation). */
export default function SessionPage({ client, identity, params }: PageProps) {
  const sessionId = params.sessionId ?? '';
  const [erasing, setErasing] = useState(false);
  const [erased, setErased] = useState<SessionsDeleteResponse | undefined>(undefined);
  const [renaming, setRenaming] = useState(false);
  const inspect = useLoad(
    () => client.sessions.inspect({ session_id: sessionId }, { session: sessionId }),
    [client, sessionId],
  );

  const erase = async (typed: string) => {
    if (typed.trim() !== sessionId) throw new Error(`Type the session id ${sessionId} exactly to erase it.`);
    setErased(await client.sessions.delete({}, { session: sessionId }));
  };

  const session = inspect.data?.session;
  return (
    <>
      <p>
        <a href="#/sessions">All sessions</a>
      </p>
      <h1>
        Session <code>{sessionId}</code>
      </h1>
      {erased !== undefined ? (
        <ErasedNotice erased={erased} />
      ) : (
        <>
          <ErrorNotice error={inspect.error} title="Cannot inspect the session" />
          {session !== undefined && inspect.data !== undefined && (
            <section className="card" aria-label="Session facts">
              <dl className="facts">
                <dt>Title</dt>
                <dd>{session.title ?? '(none)'}</dd>
                <dt>Status</dt>
                <dd>
                  <StatusBadge status={session.status} />
                  {session.closed_reason !== undefined && ` (${session.closed_reason})`}
                </dd>
                <dt>Owner</dt>
                <dd>
                  {session.tenant} / {session.user}
                </dd>
                <dt>Created</dt>
                <dd>{new Date(session.created_at).toLocaleString()}</dd>
                <dt>Last seen</dt>
                <dd>{new Date(session.last_seen_at).toLocaleString()}</dd>
                <dt>Artifacts</dt>
                <dd>{inspect.data.artifact_count}</dd>
                {inspect.data.memory_item_count !== undefined && (
                  <>
                    <dt>Memory items</dt>
                    <dd>{inspect.data.memory_item_count}</dd>
                  </>
                )}
                {inspect.data.last_task_id !== undefined && (
                  <>
                    <dt>Last run</dt>
                    <dd>
                      {sessionId === identity.session ? (
                        <a href={`#/runs/${encodeURIComponent(inspect.data.last_task_id)}`}>
                          {inspect.data.last_task_id}
                        </a>
                      ) : (
                        <code>{inspect.data.last_task_id}</code>
                      )}
                    </dd>
                  </>
                )}
              </dl>
              <ul className="counters" aria-label="Runs by status">
                {TASK_STATUSES.map((status) => (
                  <li key={status} data-status={status}>
                    {status}
                    <span className="count">{inspect.data?.task_counts[status] ?? 0}</span>
                  </li>
                ))}
              </ul>
              <div className="buttons">
                <ActionButton action={() => inspect.reload()}>Refresh</ActionButton>
                <button type="button" className="button" onClick={() => setRenaming(true)}>
                  Rename
                </button>
                <button type="button" className="button danger" onClick={() => setErasing(true)}>
                  Erase session
                </button>
              </div>
            </section>
          )}
          {inspect.data !== undefined && <StateHistory client={client} sessionId={sessionId} />}
          <ConfirmDialog
            open={renaming}
            title="Rename the session"
            confirmLabel="Rename"
            input={{ label: 'Title', required: true, initial: session?.title ?? '' }}
            onConfirm={async (title) => {
              await client.sessions.set_title({ session_id: sessionId, title });
              await inspect.reload();
            }}
            onClose={() => setRenaming(false)}
          />
          <ConfirmDialog
            open={erasing}
            title="Erase this session permanently"
            confirmLabel="Erase"
            variant="danger"
            input={{ label: `Type the session id (${sessionId}) to confirm`, required: true }}
            onConfirm={erase}
            onClose={() => setErasing(false)}
          >
            <p>
              Every run, state record, artifact, memory item and event of this session is deleted, and the session id
              can never be used again. This cannot be undone.
            </p>
          </ConfirmDialog>
        </>
      )}
    </>
  );
}
