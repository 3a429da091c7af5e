import { useId, useState } from 'react';
import type { SessionsListResponse } from '@ars/client';
import { DataTable, ErrorNotice, ScopeToggle, StatusBadge } from '../components/index.ts';
import type { Column } from '../components/index.ts';
import { Pager, useCursorPages } from '../components/cursor-pages.tsx';
import type { ConsolePage, PageProps } from '../page-props.ts';

export const page: ConsolePage = { path: '/sessions', title: 'Sessions', nav: true, order: 30 };

type SessionRow = SessionsListResponse['items'][number];
const PAGE_SIZE = 25;
const STATUSES = ['open', 'closed'] as const;

/**
 * The caller's sessions (sessions.list, paged), filtered by status and text;
 * with the tenant toggle, every user's sessions of the tenant (admin or
 * console:fleet; others see the 403).
 */
export default function SessionsPage({ client, identity, navigate, params }: PageProps) {
  const tenantWide = params.scope === 'tenant';
  const textId = useId();
  const statusId = useId();
  const [text, setText] = useState(params.text ?? '');
  const [status, setStatus] = useState<'' | 'open' | 'closed'>('');
  const [applied, setApplied] = useState({ text: params.text ?? '', status: '' as '' | 'open' | 'closed' });

  const pages = useCursorPages<SessionRow, SessionsListResponse>(
    (cursor) => {
      const filter = {
        ...(tenantWide ? { tenant_ids: [identity.tenant] } : {}),
        ...(applied.status === '' ? {} : { status: [applied.status] }),
        ...(applied.text === '' ? {} : { text: applied.text }),
      };
      return client.sessions.list({
        limit: PAGE_SIZE,
        ...(cursor === undefined ? {} : { cursor }),
        ...(Object.keys(filter).length === 0 ? {} : { filter }),
      });
    },
    [client, tenantWide, identity.tenant, applied.text, applied.status],
  );

  const link = (row: SessionRow) =>
    row.tenant === identity.tenant && row.user === identity.user ? (
      <a href={`#/sessions/${encodeURIComponent(row.session_id)}`}>{row.session_id}</a>
    ) : (
      <span title="another user's session: only its owner inspects it">{row.session_id}</span>
    );
  const columns: Column<SessionRow>[] = [
    {
      header: 'Session',
      render: (row) => (
        <>
          {link(row)}
          {row.session_id === identity.session && row.user === identity.user && (
            <span className="hint"> (current)</span>
          )}
        </>
      ),
    },
    { header: 'Title', render: (row) => row.title ?? '' },
    { header: 'Status', render: (row) => <StatusBadge status={row.status} /> },
    ...(tenantWide ? [{ header: 'User', render: (row: SessionRow) => row.user, secondary: true }] : []),
    { header: 'Runs', render: (row) => row.task_count ?? '', secondary: true },
    { header: 'Last seen', render: (row) => new Date(row.last_seen_at).toLocaleString(), secondary: true },
  ];

  return (
    <>
      <h1>Sessions</h1>
      <form
        className="toolbar"
        aria-label="Filter sessions"
        onSubmit={(e) => {
          e.preventDefault();
          setApplied({ text: text.trim(), status });
        }}
      >
        <span className="field">
          <label htmlFor={textId}>Text</label>
          <input id={textId} type="search" value={text} onChange={(e) => setText(e.target.value)} />
        </span>
        <span className="field">
          <label htmlFor={statusId}>Status</label>
          <select id={statusId} value={status} onChange={(e) => setStatus(e.target.value as '' | 'open' | 'closed')}>
            <option value="">Any</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </span>
        <button type="submit" className="button">
          Filter
        </button>
        <ScopeToggle
          tenantWide={tenantWide}
          label="Whole tenant (admin, console:fleet)"
          onChange={(on) => navigate(on ? '/sessions?scope=tenant' : '/sessions')}
        />
        <button type="button" className="button" onClick={() => void pages.reload()}>
          Refresh
        </button>
      </form>
      <ErrorNotice error={pages.error} title="Cannot list sessions" />
      {pages.data !== undefined && (
        <DataTable
          caption={tenantWide ? `Sessions of tenant ${identity.tenant}` : `Sessions of ${identity.user}`}
          columns={columns}
          rows={pages.data.items}
          rowKey={(row) => `${row.tenant}/${row.user}/${row.session_id}`}
          empty="No sessions."
        />
      )}
      <Pager pages={pages} label="sessions" />
    </>
  );
}
