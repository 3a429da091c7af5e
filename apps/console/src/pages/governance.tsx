import { useId, useState } from 'react';
import type { GovernancePostureResponse, LLMPostureResponse } from '@ars/client';
import { DataTable, ErrorNotice, JsonView, useLoad } from '../components/index.ts';
import type { Column } from '../components/index.ts';
import '../components/pages.css';
import type { ConsolePage, PageProps } from '../page-props.ts';

export const page: ConsolePage = { path: '/governance', title: 'Governance', nav: true, order: 70 };

type Tier = GovernancePostureResponse['tiers'][number];
type Budget = GovernancePostureResponse['budgets'][number];
type Provider = LLMPostureResponse['providers'][number];

const money = (amount: number, currency: string) => `${amount.toFixed(2)} ${currency}`;

const TIER_COLUMNS: Column<Tier>[] = [
  { header: 'Tier', render: (t) => t.name },
  { header: 'Models', render: (t) => (t.models === undefined || t.models.length === 0 ? 'any' : t.models.join(', ')) },
  { header: 'Max tokens', render: (t) => `${t.max_tokens ?? '—'} (${t.max_tokens_policy})` },
  {
    header: 'Budget',
    render: (t) =>
      t.budget === undefined ? 'none' : `${money(t.budget.ceiling, t.budget.currency)} per ${t.budget.period}`,
  },
  {
    header: 'Rate limit',
    render: (t) =>
      t.rate_limit === undefined
        ? 'none'
        : `${t.rate_limit.capacity} ${t.rate_limit.unit}, +${t.rate_limit.refill_tokens} every ${t.rate_limit.refill_every_ms} ms (${t.rate_limit.on_limit})`,
    secondary: true,
  },
  { header: 'Failover', render: (t) => (t.failover ?? []).map((f) => f.name).join(' → ') || 'none', secondary: true },
];

const BUDGET_COLUMNS: Column<Budget>[] = [
  { header: 'Tier', render: (b) => b.tier },
  {
    header: 'Spent',
    render: (b) => (
      <>
        {money(b.spent, b.currency)} of {money(b.ceiling, b.currency)}{' '}
        <meter
          className="meter"
          min={0}
          max={b.ceiling > 0 ? b.ceiling : 1}
          value={Math.min(b.spent, b.ceiling)}
          aria-label={`Spent of tier ${b.tier}`}
        />
      </>
    ),
  },
  {
    header: 'Period',
    render: (b) =>
      `${b.period}${b.period_start === undefined ? '' : ` from ${new Date(b.period_start).toLocaleDateString()}`}`,
    secondary: true,
  },
];

const PROVIDER_COLUMNS: Column<Provider>[] = [
  { header: 'Provider', render: (p) => p.name },
  { header: 'Kind', render: (p) => p.kind },
  { header: 'Models', render: (p) => p.models.join(', ') || 'any', secondary: true },
  { header: 'Healthy', render: (p) => (p.healthy === undefined ? 'unknown' : p.healthy ? 'yes' : 'no') },
];

/**
 * The governance posture of a tenant (governance.posture: tiers, budgets and
 * spend, session overrides) and its LLM posture. Another tenant's needs admin
 * or console:fleet: the field is there for everyone and a refusal is shown.
 */
export default function GovernancePage({ client, identity, navigate, params }: PageProps) {
  const tenant = params.tenant ?? identity.tenant;
  const tenantId = useId();
  const [typed, setTyped] = useState(tenant);
  const body = tenant === identity.tenant ? {} : { identity: { tenant } };
  const posture = useLoad(() => client.governance.posture(body), [client, tenant]);
  const llm = useLoad(() => client.llm.posture(body), [client, tenant]);
  const data = posture.data;
  return (
    <>
      <h1>Governance</h1>
      <form
        className="toolbar"
        aria-label="Choose a tenant"
        onSubmit={(e) => {
          e.preventDefault();
          const next = typed.trim();
          navigate(
            next === '' || next === identity.tenant ? '/governance' : `/governance?tenant=${encodeURIComponent(next)}`,
          );
        }}
      >
        <span className="field">
          <label htmlFor={tenantId}>Tenant (another needs admin or console:fleet)</label>
          <input id={tenantId} value={typed} onChange={(e) => setTyped(e.target.value)} />
        </span>
        <button type="submit" className="button">
          Show
        </button>
        <button
          type="button"
          className="button"
          onClick={() => {
            void posture.reload();
            void llm.reload();
          }}
        >
          Refresh
        </button>
      </form>
      <ErrorNotice error={posture.error} title="Cannot read the governance posture" />
      {data !== undefined && (
        <>
          <dl className="facts" aria-label="Posture">
            <dt>Tenant</dt>
            <dd>{data.tenant}</dd>
            <dt>Default tier</dt>
            <dd>{data.default_tier}</dd>
          </dl>
          <DataTable
            caption="Tiers"
            columns={TIER_COLUMNS}
            rows={data.tiers}
            rowKey={(t) => t.name}
            empty="No tiers."
          />
          <DataTable
            caption="Budgets and spend"
            columns={BUDGET_COLUMNS}
            rows={data.budgets}
            rowKey={(b) => `${b.tier}/${b.period}`}
            empty="No budgets."
          />
          <h2>Session overrides</h2>
          {data.overrides === undefined || Object.keys(data.overrides).length === 0 ? (
            <p className="hint">None for this session.</p>
          ) : (
            <JsonView value={data.overrides} />
          )}
        </>
      )}
      <h2>LLM providers</h2>
      <ErrorNotice error={llm.error} title="Cannot read the LLM posture" />
      {llm.data !== undefined && (
        <>
          <DataTable
            caption="Providers"
            columns={PROVIDER_COLUMNS}
            rows={llm.data.providers}
            rowKey={(p) => p.name}
            empty="No providers."
          />
          <p>
            Failover order: {llm.data.failover_order.join(' → ') || 'none'}
            {llm.data.default_provider !== undefined && `; default ${llm.data.default_provider}`}
          </p>
        </>
      )}
    </>
  );
}
