import { useCallback, useId, useState } from 'react';
import type { AgentControlResponse, AgentListResponse, EventFrame, SubscribeOptions } from '@ars/client';
import { ConfirmDialog, DataTable, ErrorNotice, StatusBadge, useEventStream } from '../components/index.ts';
import type { Column } from '../components/index.ts';
import { Pager, useCursorPages } from '../components/cursor-pages.tsx';
import '../components/pages.css';
import { FLEET_EVENT_TYPES, applyFleetFrame, fleetRows, tenantCount } from '../fleet-state.ts';
import type { FleetRow } from '../fleet-state.ts';
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
    {
      header: 'Runs',
      render: (a) =>
        a.runs_in_flight === undefined ? '—' : `${a.runs_in_flight} running, ${a.runs_queued ?? 0} queued`,
    },
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

const FLEET_COLUMNS: Column<FleetRow>[] = [
  { header: 'Tenant', render: (r) => r.tenant },
  { header: 'Agent', render: (r) => r.agentId },
  { header: 'State', render: (r) => <StatusBadge status={r.state} /> },
  { header: 'Health', render: (r) => r.health },
  { header: 'Incarnation', render: (r) => r.incarnation ?? '—', secondary: true },
  { header: 'Last event', render: (r) => r.lastEvent, secondary: true },
  { header: 'When', render: (r) => new Date(r.lastAt).toLocaleString(), secondary: true },
];

/**
 * The fleet of every tenant, read-only: agents.list reads one tenant, so this
 * folds the agent.* events the stream fans in across tenants (admin or
 * console:fleet), replayed from the start of the retained stream, then live.
 */
function AcrossTenants({ client }: Pick<PageProps, 'client'>) {
  const [fleet, setFleet] = useState<ReadonlyMap<string, FleetRow>>(new Map());
  const onFrame = useCallback((frame: EventFrame) => setFleet((current) => applyFleetFrame(current, frame)), []);
  const options: SubscribeOptions = { lastEventId: 0, types: FLEET_EVENT_TYPES, admin: true };
  const stream = useEventStream(client, options, 'fleet', onFrame);
  const rows = fleetRows(fleet);
  return (
    <section aria-labelledby="all-tenants">
      <h2 id="all-tenants">Fleet across tenants</h2>
      <p className="hint">
        From the agent events of every tenant (read-only). {rows.length} agents in {tenantCount(rows)} tenants.{' '}
        <span className="live" role="status">
          {stream.status === 'live' ? 'Live' : stream.status === 'failed' ? 'Stream stopped' : 'Connecting…'}
        </span>
      </p>
      <ErrorNotice error={stream.error} title="Event stream" />
      <DataTable
        caption="Agents of every tenant"
        columns={FLEET_COLUMNS}
        rows={rows}
        rowKey={(r) => `${r.tenant}/${r.agentId}`}
        empty="No agent events yet."
      />
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
