import { useId, useState } from 'react';
import type { FormEvent } from 'react';
import type { MemoryListResponse, MemoryPutResponse } from '@ars/client';
import { ConfirmDialog, DataTable, ErrorNotice, JsonView } from '../components/index.ts';
import type { Column } from '../components/index.ts';
import { Pager, useCursorPages } from '../components/cursor-pages.tsx';
import '../components/pages.css';
import { formatBytes } from '../artifact-bytes.ts';
import type { ConsolePage, PageProps } from '../page-props.ts';

export const page: ConsolePage = { path: '/memory', title: 'Memory', nav: true, order: 50 };

type MemoryItem = MemoryListResponse['items'][number];
type Tier = MemoryItem['tier'];
const TIERS: readonly Tier[] = ['tenant', 'user', 'session'];
const PAGE_SIZE = 25;

/** The JSON a value field holds; a text that is not JSON is stored as that string. */
function parseValue(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function PutForm({ client, onStored }: Pick<PageProps, 'client'> & { readonly onStored: () => void }) {
  const tierId = useId();
  const keyId = useId();
  const valueId = useId();
  const [tier, setTier] = useState<Tier>('session');
  const [key, setKey] = useState('');
  const [value, setValue] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const [stored, setStored] = useState<MemoryPutResponse['item'] | undefined>(undefined);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    setStored(undefined);
    try {
      const put = await client.memory.put({ tier, key: key.trim(), value: parseValue(value) });
      setStored(put.item);
      onStored();
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="card" aria-label="Store a memory item" onSubmit={(e) => void submit(e)}>
      <h2>Store an item</h2>
      <p className="hint">memory.put needs the admin scope; without it the service's refusal shows here.</p>
      <div className="form-grid">
        <div className="field">
          <label htmlFor={tierId}>Tier</label>
          <select id={tierId} value={tier} onChange={(e) => setTier(e.target.value as Tier)}>
            {TIERS.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={keyId}>Key</label>
          <input id={keyId} required value={key} onChange={(e) => setKey(e.target.value)} />
        </div>
      </div>
      <div className="field">
        <label htmlFor={valueId}>Value (JSON, or plain text)</label>
        <textarea id={valueId} rows={3} required value={value} onChange={(e) => setValue(e.target.value)} />
      </div>
      <ErrorNotice error={error} title="Store refused" />
      {stored !== undefined && (
        <p className="result" role="status">
          Stored {stored.tier} item <code>{stored.key}</code>, version {stored.version}.
        </p>
      )}
      <button type="submit" className="button primary" disabled={busy} aria-busy={busy}>
        Store
      </button>
    </form>
  );
}

/** Memory items in scope (memory.list, paged, by tier and key prefix), their values, store and delete (admin). */
export default function MemoryPage({ client, identity }: PageProps) {
  const tierId = useId();
  const prefixId = useId();
  const [tier, setTier] = useState<'' | Tier>('');
  const [prefix, setPrefix] = useState('');
  const [applied, setApplied] = useState<{ tier: '' | Tier; prefix: string }>({ tier: '', prefix: '' });
  const [deleting, setDeleting] = useState<MemoryItem | undefined>(undefined);
  const [deleted, setDeleted] = useState<string | undefined>(undefined);
  const isAdmin = identity.scopes.includes('admin');
  const pages = useCursorPages<MemoryItem, MemoryListResponse>(
    (cursor) => {
      const filter = {
        ...(applied.tier === '' ? {} : { tier: applied.tier }),
        ...(applied.prefix === '' ? {} : { prefix: applied.prefix }),
      };
      return client.memory.list({
        limit: PAGE_SIZE,
        ...(cursor === undefined ? {} : { cursor }),
        ...(Object.keys(filter).length === 0 ? {} : { filter }),
      });
    },
    [client, applied.tier, applied.prefix],
  );

  const columns: Column<MemoryItem>[] = [
    { header: 'Key', render: (item) => <code>{item.key}</code> },
    { header: 'Tier', render: (item) => item.tier },
    { header: 'Value', render: (item) => <JsonView value={item.value} summary={`Value of ${item.key}`} /> },
    { header: 'Version', render: (item) => item.version, secondary: true },
    { header: 'Size', render: (item) => formatBytes(item.size_bytes), secondary: true },
    { header: 'Updated', render: (item) => new Date(item.updated_at).toLocaleString(), secondary: true },
    ...(isAdmin
      ? [
          {
            header: 'Actions',
            render: (item: MemoryItem) => (
              <button
                type="button"
                className="button danger"
                aria-label={`Delete ${item.tier} item ${item.key}`}
                onClick={() => setDeleting(item)}
              >
                Delete
              </button>
            ),
          },
        ]
      : []),
  ];

  return (
    <>
      <h1>Memory</h1>
      <form
        className="toolbar"
        aria-label="Filter memory"
        onSubmit={(e) => {
          e.preventDefault();
          setApplied({ tier, prefix: prefix.trim() });
        }}
      >
        <span className="field">
          <label htmlFor={tierId}>Tier</label>
          <select id={tierId} value={tier} onChange={(e) => setTier(e.target.value as '' | Tier)}>
            <option value="">Any</option>
            {TIERS.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </span>
        <span className="field">
          <label htmlFor={prefixId}>Key prefix</label>
          <input id={prefixId} value={prefix} onChange={(e) => setPrefix(e.target.value)} />
        </span>
        <button type="submit" className="button">
          Filter
        </button>
        <button type="button" className="button" onClick={() => void pages.reload()}>
          Refresh
        </button>
      </form>
      <ErrorNotice error={pages.error} title="Cannot list memory" />
      {deleted !== undefined && (
        <p className="result" role="status">
          Deleted {deleted}.
        </p>
      )}
      {pages.data !== undefined && (
        <DataTable
          caption="Memory items"
          columns={columns}
          rows={pages.data.items}
          rowKey={(item) => `${item.tenant}/${item.tier}/${item.key}`}
          empty="No memory items."
        />
      )}
      <Pager pages={pages} label="memory items" />
      <PutForm client={client} onStored={() => void pages.reload()} />
      <ConfirmDialog
        open={deleting !== undefined}
        title={`Delete the ${deleting?.tier ?? ''} item ${deleting?.key ?? ''}?`}
        confirmLabel="Delete"
        variant="danger"
        onConfirm={async () => {
          if (deleting === undefined) return;
          await client.memory.delete({ tier: deleting.tier, key: deleting.key });
          setDeleted(`${deleting.tier} item ${deleting.key}`);
          await pages.reload();
        }}
        onClose={() => setDeleting(undefined)}
      />
    </>
  );
}
