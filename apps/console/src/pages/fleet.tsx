import { useId, useState } from 'react';
import type { AgentControlResponse, AgentListResponse } from '@ars/client';
import { ConfirmDialog, DataTable, ErrorNotice, StatusBadge } from '../components/index.ts';
import type { Column } from '../components/index.ts';
import { Pager, useCursorPages } from '../components/cursor-pages.tsx';
import '../components/pages.css';
import type { ConsolePage, PageProps } from '../page-props.ts';

export const page: ConsolePage = {
  path: '/fleet',
  title: 'Fleet',
  nav: true,
  order: 80,
  navScopes: ['admin', 'console:fleet'],
};

type Agent = AgentListResponse['items'][number];
type Verb = 'drain' | 'pause' | 'restart' | 'force_stop' | 'deregister';
const PAGE_SIZE = 25;
const STATES = ['running', 'draining', 'paused', 'stopped', 'deregistered'] as const;

/** The fleet-control verbs, as buttons: text, what the confirmation says, and whether it is destructive. */
const VERBS: readonly {
  readonly verb: Verb;
  readonly label: string;
  readonly effect: string;
  readonly danger: boolean;
}[] = [
  { verb: 'drain', label: 'Drain', effect: 'New runs are refused; queued and in-flight runs finish.', danger: false },
  { verb: 'pause', label: 'Pause', effect: 'Queued runs wait; in-flight runs park at their next step.', danger: false },
  {
    verb: 'restart',
    label: 'Restart',
    effect: 'The agent returns to running with its head revision reloaded (a new incarnation).',
    danger: false,
  },
  {
    verb: 'force_stop',
    label: 'Force stop',
    effect: 'New runs are refused and in-flight runs are hard-cancelled now.',
    danger: true,
  },
  {
    verb: 'deregister',
    label: 'Deregister',
    effect: 'The agent leaves the fleet until its next configuration revision registers it again.',
    danger: true,
  },
];

/** Runs in flight and queued; a dash when the run-executor did not answer in time. */
function runsOf(a: Agent): string {
  return a.runs_in_flight === undefined ? '—' : `${a.runs_in_flight} running, ${a.runs_queued ?? 0} queued`;
}

/** The columns of the table across tenants: no controls, no link (the configuration page is the caller's tenant's). */
const FLEET_COLUMNS: Column<Agent>[] = [
  { header: 'Tenant', render: (a) => a.tenant },
  { header: 'Agent', render: (a) => a.agent_id },
  { header: 'State', render: (a) => <StatusBadge status={a.state} /> },
  { header: 'Health', render: (a) => a.health },
  { header: 'Runs', render: runsOf },
  { header: 'Incarnation', render: (a) => a.incarnation, secondary: true },
  { header: 'Registered', render: (a) => new Date(a.registered_at).toLocaleString(), secondary: true },
];

/** The caller's tenant's agents (agents.list, paged) and, for admin, the five control verbs behind confirmations. */
function TenantAgents({ client, identity }: Pick<PageProps, 'client' | 'identity'>) {
  const stateId = useId();
  const forceId = useId();
  const [state, setState] = useState('');
  const [acting, setActing] = useState<{ agent: Agent; verb: (typeof VERBS)[number] } | undefined>(undefined);
  const [force, setForce] = useState(false);
  const [outcome, setOutcome] = useState<AgentControlResponse | undefined>(undefined);
  const isAdmin = identity.scopes.includes('admin');
  const pages = useCursorPages<Agent, AgentListResponse>(
    (cursor) =>
      client.agents.list({
        limit: PAGE_SIZE,
        ...(cursor === undefined ? {} : { cursor }),
        ...(state === '' ? {} : { filter: { state } }),
      }),
    [client, state],
  );

  const control = async (reason: string) => {
    if (acting === undefined) return;
    const request = {
      agent_id: acting.agent.agent_id,
      ...(reason.trim() === '' ? {} : { reason: reason.trim() }),
      ...(acting.verb.verb === 'deregister' && force ? { force: true } : {}),
    };
    setOutcome((await client.call(`agents.${acting.verb.verb}`, { identity: {}, ...request })) as AgentControlResponse);
    await pages.reload();
  };

  const columns: Column<Agent>[] = [
    {
      header: 'Agent',
      render: (a) => <a href={`#/agent-config?agent=${encodeURIComponent(a.agent_id)}`}>{a.agent_id}</a>,
    },
    { header: 'State', render: (a) => <StatusBadge status={a.state} /> },
    { header: 'Health', render: (a) => a.health },
    { header: 'Runs', render: runsOf },
    { header: 'Incarnation', render: (a) => a.incarnation, secondary: true },
    {
      header: 'Revision',
      render: (a) => (a.revision_id === undefined ? 'default' : <code>{a.revision_id}</code>),
      secondary: true,
    },
    { header: 'Registered', render: (a) => new Date(a.registered_at).toLocaleString(), secondary: true },
    ...(isAdmin
      ? [
          {
            header: 'Control',
            render: (a: Agent) => (
              <span className="buttons">
                {VERBS.map((v) => (
                  <button
                    key={v.verb}
                    type="button"
                    className={`button ${v.danger ? 'danger' : ''}`}
                    aria-label={`${v.label} ${a.agent_id}`}
                    onClick={() => {
                      setForce(false);
                      setActing({ agent: a, verb: v });
                    }}
                  >
                    {v.label}
                  </button>
                ))}
              </span>
            ),
          },
        ]
      : []),
  ];

  return (
    <section aria-labelledby="tenant-agents">
      <h2 id="tenant-agents">Agents of tenant {identity.tenant}</h2>
      <div className="toolbar">
        <span className="field">
          <label htmlFor={stateId}>State</label>
          <select id={stateId} value={state} onChange={(e) => setState(e.target.value)}>
            <option value="">Any</option>
            {STATES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </span>
        <button type="button" className="button" onClick={() => void pages.reload()}>
          Refresh
        </button>
      </div>
      {!isAdmin && (
        <p className="hint">
          Read-only: fleet control (drain, pause, restart, force stop, deregister) needs the admin scope.
        </p>
      )}
      <ErrorNotice error={pages.error} title="Cannot list agents" />
      {outcome !== undefined && (
        <p className="result" role="status">
          {outcome.command} of {outcome.agent_id}: {outcome.accepted ? 'accepted' : 'no change (already in that state)'}
          {outcome.state !== undefined && `; now ${outcome.state}`}
          {outcome.incarnation !== undefined && `, incarnation ${outcome.incarnation}`}.
        </p>
      )}
      {pages.data !== undefined && (
        <DataTable
          caption={`Agents of tenant ${identity.tenant}`}
          columns={columns}
          rows={pages.data.items}
          rowKey={(a) => a.agent_id}
          empty="No registered agents."
        />
      )}
      <Pager pages={pages} label="agents" />
      <ConfirmDialog
        open={acting !== undefined}
        title={`${acting?.verb.label ?? ''} ${acting?.agent.agent_id ?? ''}?`}
        confirmLabel={acting?.verb.label ?? 'Confirm'}
        variant={acting?.verb.danger === true ? 'danger' : 'primary'}
        input={{ label: 'Reason (optional)' }}
        onConfirm={control}
        onClose={() => setActing(undefined)}
      >
        <p>{acting?.verb.effect}</p>
        {acting?.verb.verb === 'deregister' && (
          <p className="scope-toggle">
            <input id={forceId} type="checkbox" checked={force} onChange={(e) => setForce(e.target.checked)} />
            <label htmlFor={forceId}>Force: hard-cancel its runs in flight</label>
          </p>
        )}
      </ConfirmDialog>
    </section>
  );
}

/**
 * The fleet of every tenant, read-only (admin or console:fleet): agents.list
 * with `filter.all_tenants`, in (tenant, agent id) order, paged, each agent
 * with its runs in flight and queued. Fleet control acts on the caller's own
 * tenant only (the table above), so no row here has controls.
 */
function AcrossTenants({ client }: Pick<PageProps, 'client'>) {
  const textId = useId();
  const [text, setText] = useState('');
  const needle = text.trim();
  const pages = useCursorPages<Agent, AgentListResponse>(
    (cursor) =>
      client.agents.list({
        limit: PAGE_SIZE,
        ...(cursor === undefined ? {} : { cursor }),
        filter: { all_tenants: true, ...(needle === '' ? {} : { text: needle }) },
      }),
    [client, needle],
  );
  return (
    <section aria-labelledby="all-tenants">
      <h2 id="all-tenants">Fleet across tenants</h2>
      <div className="toolbar">
        <span className="field">
          <label htmlFor={textId}>Agent id contains</label>
          <input id={textId} type="search" value={text} onChange={(e) => setText(e.target.value)} />
        </span>
        <button type="button" className="button" onClick={() => void pages.reload()}>
          Refresh
        </button>
      </div>
      <p className="hint">Every tenant&apos;s registered agents, read-only: fleet control acts on your own tenant.</p>
      <ErrorNotice error={pages.error} title="Cannot list the agents of every tenant" />
      {pages.data !== undefined && (
        <DataTable
          caption="Agents of every tenant"
          columns={FLEET_COLUMNS}
          rows={pages.data.items}
          rowKey={(a) => JSON.stringify([a.tenant, a.agent_id])}
          empty="No registered agents."
        />
      )}
      <Pager pages={pages} label="agents of every tenant" />
    </section>
  );
}

/** The agent fleet: this tenant's agents (controls for admin) and, with admin or console:fleet, every tenant's. */
export default function FleetPage({ client, identity }: PageProps) {
  const seesFleet = identity.scopes.includes('admin') || identity.scopes.includes('console:fleet');
  return (
    <>
      <h1>Fleet</h1>
      <TenantAgents client={client} identity={identity} />
      {seesFleet ? (
        <AcrossTenants client={client} />
      ) : (
        <p className="hint">The fleet of every tenant needs the admin or console:fleet scope.</p>
      )}
    </>
  );
}
