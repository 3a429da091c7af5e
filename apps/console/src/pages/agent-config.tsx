import { useId, useMemo, useState } from 'react';
import type { FormEvent } from 'react';
import type { AgentConfigGetResponse, AgentConfigListRevisionsResponse } from '@ars/client';
import { ConfirmDialog, DataTable, ErrorNotice, useLoad } from '../components/index.ts';
import type { Column } from '../components/index.ts';
import { Pager, useCursorPages } from '../components/cursor-pages.tsx';
import { DiffView } from '../components/diff-view.tsx';
import { canonicalJson, diffJson } from '../config-diff.ts';
import type { ConsolePage, PageProps } from '../page-props.ts';

export const page: ConsolePage = { path: '/agent-config', title: 'Agent configuration', nav: true, order: 60 };

type Revision = AgentConfigListRevisionsResponse['items'][number];
type Config = AgentConfigGetResponse['revision']['config'];
const PAGE_SIZE = 20;

function AgentPicker({
  client,
  agentId,
  navigate,
}: Pick<PageProps, 'client' | 'navigate'> & { readonly agentId: string }) {
  const inputId = useId();
  const listId = useId();
  const [value, setValue] = useState(agentId);
  // The fleet's agents, as suggestions only: the page works for any agent id.
  const agents = useLoad(() => client.agents.list({ limit: 100 }), [client]);
  return (
    <form
      className="toolbar"
      aria-label="Choose an agent"
      onSubmit={(e) => {
        e.preventDefault();
        if (value.trim() !== '') navigate(`/agent-config?agent=${encodeURIComponent(value.trim())}`);
      }}
    >
      <span className="field">
        <label htmlFor={inputId}>Agent id</label>
        <input id={inputId} list={listId} required value={value} onChange={(e) => setValue(e.target.value)} />
        <datalist id={listId}>
          {agents.data?.items.map((a) => (
            <option key={a.agent_id} value={a.agent_id} />
          ))}
        </datalist>
      </span>
      <button type="submit" className="button">
        Open
      </button>
    </form>
  );
}

/** The line diff of two revisions' canonical JSON configuration. */
function RevisionDiff({
  client,
  agentId,
  from,
  to,
}: Pick<PageProps, 'client'> & { readonly agentId: string; readonly from: string; readonly to: string }) {
  const both = useLoad(
    () =>
      Promise.all([
        client.agent_config.get({ agent_id: agentId, revision_id: from }),
        client.agent_config.get({ agent_id: agentId, revision_id: to }),
      ]),
    [client, agentId, from, to],
  );
  const lines = useMemo(
    () => (both.data === undefined ? undefined : diffJson(both.data[0].revision.config, both.data[1].revision.config)),
    [both.data],
  );
  return (
    <>
      <ErrorNotice error={both.error} title="Cannot read the revisions" />
      {lines !== undefined && <DiffView lines={lines} label={`Changes from ${from} to ${to}`} />}
    </>
  );
}

function RevisionSelect({
  label,
  value,
  revisions,
  onChange,
}: {
  readonly label: string;
  readonly value: string;
  readonly revisions: readonly Revision[];
  readonly onChange: (id: string) => void;
}) {
  const id = useId();
  return (
    <span className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
        {revisions.map((r) => (
          <option key={r.revision_id} value={r.revision_id}>
            {r.revision_id}
            {r.head ? ' (head)' : ''}
            {r.message === undefined ? '' : ` · ${r.message}`}
          </option>
        ))}
      </select>
    </span>
  );
}

function NewRevisionForm({
  client,
  agentId,
  head,
  onSaved,
}: Pick<PageProps, 'client'> & {
  readonly agentId: string;
  readonly head: Revision | undefined;
  readonly onSaved: (revisionId: string) => void;
}) {
  const configId = useId();
  const messageId = useId();
  const current = useLoad(
    () =>
      head === undefined
        ? Promise.resolve(undefined)
        : client.agent_config.get({ agent_id: agentId, revision_id: head.revision_id }),
    [client, agentId, head?.revision_id],
  );
  const [text, setText] = useState<string | undefined>(undefined);
  const [message, setMessage] = useState('');
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const shown = text ?? canonicalJson(current.data?.revision.config ?? {});
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const config = JSON.parse(shown) as Config;
      const saved = await client.agent_config.set_revision({
        agent_id: agentId,
        config,
        ...(head === undefined ? {} : { parent_revision_id: head.revision_id }),
        ...(message.trim() === '' ? {} : { message: message.trim() }),
      });
      setText(undefined);
      setMessage('');
      onSaved(saved.revision.revision_id);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return (
    <details className="card">
      <summary>New revision</summary>
      <form aria-label="Write a new revision" onSubmit={(e) => void submit(e)}>
        <div className="field">
          <label htmlFor={configId}>Configuration (JSON; starts from the head)</label>
          <textarea
            id={configId}
            rows={12}
            className="json"
            value={shown}
            onChange={(e) => setText(e.target.value)}
            spellCheck={false}
          />
        </div>
        <div className="field">
          <label htmlFor={messageId}>Message</label>
          <input id={messageId} value={message} onChange={(e) => setMessage(e.target.value)} />
        </div>
        <ErrorNotice error={error} title="Revision refused" />
        <button type="submit" className="button primary" disabled={busy} aria-busy={busy}>
          Save revision
        </button>
      </form>
    </details>
  );
}

function AgentRevisions({
  client,
  agentId,
  isAdmin,
}: Pick<PageProps, 'client'> & { readonly agentId: string; readonly isAdmin: boolean }) {
  const pages = useCursorPages<Revision, AgentConfigListRevisionsResponse>(
    (cursor) =>
      client.agent_config.list_revisions({
        agent_id: agentId,
        limit: PAGE_SIZE,
        ...(cursor === undefined ? {} : { cursor }),
      }),
    [client, agentId],
  );
  const [picked, setPicked] = useState<{ from?: string; to?: string }>({});
  const [rollingBack, setRollingBack] = useState<Revision | undefined>(undefined);
  const [done, setDone] = useState<string | undefined>(undefined);
  const items = pages.data?.items ?? [];
  const head = pages.pageNumber === 1 ? items.find((r) => r.head) : undefined;
  const to = picked.to ?? head?.revision_id ?? items[0]?.revision_id;
  const toRow = items.find((r) => r.revision_id === to);
  const from = picked.from ?? toRow?.parent_revision_id ?? items.find((r) => r.revision_id !== to)?.revision_id;

  const columns: Column<Revision>[] = [
    {
      header: 'Revision',
      render: (r) => (
        <>
          <code>{r.revision_id}</code>
          {r.head && <span className="badge status-running"> head</span>}
        </>
      ),
    },
    { header: 'Message', render: (r) => r.message ?? '' },
    {
      header: 'Author',
      render: (r) => `${r.author.user}${r.author.run === '' ? '' : ` (run ${r.author.run})`}`,
      secondary: true,
    },
    { header: 'Created', render: (r) => new Date(r.created_at).toLocaleString(), secondary: true },
    {
      header: 'Actions',
      render: (r) =>
        r.head ? null : (
          <span className="buttons">
            <button
              type="button"
              className="button"
              aria-label={`Compare ${r.revision_id} with the head`}
              onClick={() => setPicked({ from: r.revision_id })}
            >
              Compare with head
            </button>
            {isAdmin && (
              <button
                type="button"
                className="button danger"
                aria-label={`Roll back to ${r.revision_id}`}
                onClick={() => setRollingBack(r)}
              >
                Roll back to this
              </button>
            )}
          </span>
        ),
    },
  ];

  const rollback = async (message: string) => {
    if (rollingBack === undefined) return;
    const previousHead = head?.revision_id;
    const made = await client.agent_config.rollback({
      agent_id: agentId,
      to_revision_id: rollingBack.revision_id,
      ...(previousHead === undefined ? {} : { parent_revision_id: previousHead }),
      ...(message.trim() === '' ? {} : { message: message.trim() }),
    });
    setDone(`Rolled back to ${rollingBack.revision_id}: new head ${made.revision.revision_id}.`);
    setPicked(previousHead === undefined ? {} : { from: previousHead, to: made.revision.revision_id });
    pages.first();
    await pages.reload();
  };

  return (
    <>
      <ErrorNotice error={pages.error} title="Cannot list the revisions" />
      {done !== undefined && (
        <p className="result" role="status">
          {done}
        </p>
      )}
      {pages.data !== undefined && (
        <DataTable
          caption={`Revisions of ${agentId}, newest first`}
          columns={columns}
          rows={items}
          rowKey={(r) => r.revision_id}
          empty="No revisions: this agent has no configuration yet."
        />
      )}
      <Pager pages={pages} label="revisions" />
      {items.length > 1 && from !== undefined && to !== undefined && (
        <section aria-labelledby="diff-title">
          <h2 id="diff-title">Diff</h2>
          <div className="toolbar">
            <RevisionSelect
              label="From"
              value={from}
              revisions={items}
              onChange={(id) => setPicked({ from: id, to })}
            />
            <RevisionSelect label="To" value={to} revisions={items} onChange={(id) => setPicked({ from, to: id })} />
          </div>
          <RevisionDiff client={client} agentId={agentId} from={from} to={to} />
        </section>
      )}
      {pages.error === undefined && (
        <NewRevisionForm
          client={client}
          agentId={agentId}
          head={head}
          onSaved={(id) => {
            setDone(`Saved revision ${id}.`);
            setPicked(head === undefined ? {} : { from: head.revision_id, to: id });
            pages.first();
            void pages.reload();
          }}
        />
      )}
      <ConfirmDialog
        open={rollingBack !== undefined}
        title={`Roll ${agentId} back to ${rollingBack?.revision_id ?? ''}?`}
        confirmLabel="Roll back"
        variant="danger"
        input={{ label: 'Message (optional)', initial: `rollback to ${rollingBack?.revision_id ?? ''}` }}
        onConfirm={rollback}
        onClose={() => setRollingBack(undefined)}
      >
        <p>A new head revision is written with that revision's configuration; new runs of the agent use it.</p>
      </ConfirmDialog>
    </>
  );
}

/** Agent configuration: an agent's revisions (paged), a line diff of any two, rollback and a new revision (admin). */
export default function AgentConfigPage({ client, identity, navigate, params }: PageProps) {
  const agentId = params.agent ?? '';
  return (
    <>
      <h1>Agent configuration</h1>
      <AgentPicker client={client} agentId={agentId} navigate={navigate} />
      {agentId === '' ? (
        <p className="hint">Choose an agent to see its revisions.</p>
      ) : (
        <AgentRevisions key={agentId} client={client} agentId={agentId} isAdmin={identity.scopes.includes('admin')} />
      )}
    </>
  );
}
