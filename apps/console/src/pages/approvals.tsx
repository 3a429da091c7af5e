import { useCallback, useState } from 'react';
import type { EventFrame, PauseListResponse, SubscribeOptions } from '@ars/client';
import { ConfirmDialog, ErrorNotice, JsonView, ScopeToggle, useEventStream, useSnapshot } from '../components/index.ts';
import type { ConsolePage, PageProps } from '../page-props.ts';

export const page: ConsolePage = { path: '/approvals', title: 'Approvals', nav: true, order: 20 };

type PauseItem = PauseListResponse['items'][number];

/** The events after which a paused item may have gone (or a new one come). */
const PAUSE_EVENT_TYPES = [
  'pause.requested',
  'pause.resumed',
  'tool.approval_requested',
  'tool.approved',
  'tool.rejected',
  'task.completed',
  'task.failed',
  'task.cancelled',
];

/** The pause token an event resolves, if it resolves one. */
function resolvedToken(frame: EventFrame): string | undefined {
  const token = frame.type === 'pause.resumed' ? frame.payload.Token : frame.payload.PauseToken;
  if (frame.type !== 'pause.resumed' && frame.type !== 'tool.approved' && frame.type !== 'tool.rejected')
    return undefined;
  return typeof token === 'string' ? token : undefined;
}

const TERMINAL = new Set(['task.completed', 'task.failed', 'task.cancelled']);

/**
 * The approvals inbox: a pause.list snapshot, kept coherent by the event
 * stream from its sequence (an item another window approved disappears).
 */
export default function ApprovalsPage({ client, identity, navigate, params }: PageProps) {
  const tenantWide = params.scope === 'tenant';
  const [items, setItems] = useState<readonly PauseItem[] | undefined>(undefined);
  const [streamFrom, setStreamFrom] = useState<number | undefined>(undefined);
  const [dirty, setDirty] = useState(0);
  const [deciding, setDeciding] = useState<{ item: PauseItem; decision: 'approve' | 'reject' } | undefined>(undefined);

  const fetch = useCallback(
    () => client.pause.list({ limit: 100, ...(tenantWide ? { filter: { tenant_ids: [identity.tenant] } } : {}) }),
    [client, identity.tenant, tenantWide],
  );
  const { error, load } = useSnapshot(
    fetch,
    (snapshot) => {
      setItems(snapshot.items);
      setStreamFrom((from) => from ?? snapshot.sequence);
    },
    dirty,
  );

  const onFrame = useCallback(
    (frame: EventFrame) => {
      if (tenantWide && frame.tenant !== identity.tenant) return;
      const token = resolvedToken(frame);
      if (token !== undefined) setItems((current) => current?.filter((item) => item.token !== token));
      else if (TERMINAL.has(frame.type)) setItems((current) => current?.filter((item) => item.task_id !== frame.run));
      // New pauses (and anything the stream alone cannot settle) come from a fresh snapshot.
      if (frame.type === 'pause.requested' || frame.type === 'tool.approval_requested') setDirty((n) => n + 1);
    },
    [identity.tenant, tenantWide],
  );
  const options: SubscribeOptions | undefined =
    streamFrom === undefined ? undefined : { lastEventId: streamFrom, types: PAUSE_EVENT_TYPES, admin: tenantWide };
  const stream = useEventStream(client, options, `${tenantWide}:${streamFrom}`, onFrame);

  const decide = async (reason: string) => {
    if (deciding === undefined) return;
    const { item, decision } = deciding;
    await client.call(decision, { identity: { run: item.task_id }, payload: { token: item.token, reason } });
    setItems((current) => current?.filter((i) => i.token !== item.token));
  };

  return (
    <>
      <h1>Approvals</h1>
      <div className="toolbar">
        <ScopeToggle
          tenantWide={tenantWide}
          onChange={(on) => navigate(on ? '/approvals?scope=tenant' : '/approvals')}
        />
        <button type="button" className="button" onClick={() => void load()}>
          Refresh
        </button>
        <span className="live" role="status">
          {stream.status === 'live' ? 'Live' : stream.status === 'failed' ? 'Stream stopped' : 'Connecting…'}
        </span>
      </div>
      <ErrorNotice error={error} title="Cannot list pauses" />
      <ErrorNotice error={stream.error} title="Event stream" />
      {items !== undefined && items.length === 0 && <p>Nothing waits for a decision.</p>}
      <ul className="approvals" aria-label="Waiting for a decision">
        {items?.map((item) => (
          <li key={item.token} className="card" data-token={item.token}>
            <h2>
              {item.kind === 'approval' || item.tool !== undefined ? `Approve ${item.tool ?? 'a step'}?` : 'Paused run'}
            </h2>
            <dl className="facts">
              <dt>Run</dt>
              <dd>
                <a href={`#/runs/${encodeURIComponent(item.task_id)}`}>{item.task_id}</a>
              </dd>
              <dt>Reason</dt>
              <dd>{item.reason}</dd>
              <dt>Requested</dt>
              <dd>{new Date(item.requested_at).toLocaleString()}</dd>
              {tenantWide && (
                <>
                  <dt>Who</dt>
                  <dd>
                    {item.user} / {item.session}
                  </dd>
                </>
              )}
            </dl>
            {item.args_summary !== undefined && <JsonView value={item.args_summary} summary="Arguments" />}
            <div className="buttons">
              <button
                type="button"
                className="button primary"
                aria-label={`Approve ${item.tool ?? 'run'} of run ${item.task_id}`}
                onClick={() => setDeciding({ item, decision: 'approve' })}
              >
                Approve
              </button>
              <button
                type="button"
                className="button danger"
                aria-label={`Reject ${item.tool ?? 'run'} of run ${item.task_id}`}
                onClick={() => setDeciding({ item, decision: 'reject' })}
              >
                Reject
              </button>
            </div>
          </li>
        ))}
      </ul>
      <ConfirmDialog
        open={deciding !== undefined}
        title={deciding?.decision === 'reject' ? 'Reject this step' : 'Approve this step'}
        confirmLabel={deciding?.decision === 'reject' ? 'Reject' : 'Approve'}
        variant={deciding?.decision === 'reject' ? 'danger' : 'primary'}
        input={{ label: 'Reason', required: deciding?.decision === 'reject' }}
        onConfirm={decide}
        onClose={() => setDeciding(undefined)}
      />
    </>
  );
}
