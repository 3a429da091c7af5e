import { useId, useRef, useState } from 'react';
import type { FormEvent } from 'react';
import type { ArtifactsListResponse, ArtifactsPutResponse } from '@ars/client';
import { ActionButton, ConfirmDialog, DataTable, ErrorNotice } from '../components/index.ts';
import type { Column } from '../components/index.ts';
import { Pager, useCursorPages } from '../components/cursor-pages.tsx';
import '../components/pages.css';
import { base64ToBytes, bytesToBase64, downloadName, formatBytes } from '../artifact-bytes.ts';
import type { ConsolePage, PageProps } from '../page-props.ts';

export const page: ConsolePage = { path: '/artifacts', title: 'Artifacts', nav: true, order: 40 };

type ArtifactRow = ArtifactsListResponse['items'][number];
const PAGE_SIZE = 25;

function UploadForm({ client, onUploaded }: Pick<PageProps, 'client'> & { readonly onUploaded: () => void }) {
  const fileId = useId();
  const nameId = useId();
  const namespaceId = useId();
  const fileRef = useRef<HTMLInputElement>(null);
  const [name, setName] = useState('');
  const [namespace, setNamespace] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const [stored, setStored] = useState<ArtifactsPutResponse['artifact'] | undefined>(undefined);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const file = fileRef.current?.files?.[0];
    if (file === undefined) return;
    setBusy(true);
    setError(undefined);
    setStored(undefined);
    try {
      const content = bytesToBase64(new Uint8Array(await file.arrayBuffer()));
      const put = await client.artifacts.put({
        mime_type: file.type === '' ? 'application/octet-stream' : file.type,
        content_base64: content,
        name: name.trim() === '' ? file.name : name.trim(),
        ...(namespace.trim() === '' ? {} : { namespace: namespace.trim() }),
      });
      setStored(put.artifact);
      setName('');
      if (fileRef.current !== null) fileRef.current.value = '';
      onUploaded();
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="card" aria-label="Upload an artifact" onSubmit={(e) => void submit(e)}>
      <h2>Upload</h2>
      <div className="form-grid">
        <div className="field">
          <label htmlFor={fileId}>File</label>
          <input id={fileId} ref={fileRef} type="file" required />
        </div>
        <div className="field">
          <label htmlFor={nameId}>Name (default: the file's)</label>
          <input id={nameId} value={name} onChange={(e) => setName(e.target.value)} maxLength={255} />
        </div>
        <div className="field">
          <label htmlFor={namespaceId}>Namespace (default: default)</label>
          <input id={namespaceId} value={namespace} onChange={(e) => setNamespace(e.target.value)} maxLength={256} />
        </div>
      </div>
      <ErrorNotice error={error} title="Upload refused" />
      {stored !== undefined && (
        <p className="result" role="status">
          Stored <strong>{stored.name ?? stored.artifact_id}</strong> as <code>{stored.artifact_id}</code> (
          {formatBytes(stored.size_bytes)}, {stored.mime_type}).
        </p>
      )}
      <button type="submit" className="button primary" disabled={busy} aria-busy={busy}>
        Upload
      </button>
    </form>
  );
}

/** Hands the artifact's bytes to the browser as a file download. */
async function download(client: PageProps['client'], row: ArtifactRow): Promise<void> {
  const got = await client.artifacts.get({ artifact_id: row.artifact_id });
  const blob = new Blob([base64ToBytes(got.content_base64 ?? '')], { type: got.artifact.mime_type });
  const url = URL.createObjectURL(blob);
  const anchor = document.createElement('a');
  anchor.href = url;
  anchor.download = downloadName(got.artifact);
  document.body.append(anchor);
  anchor.click();
  anchor.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** The caller's artifacts (artifacts.list, paged; every user's of the tenant under admin or console:fleet), upload, download, delete (admin). */
export default function ArtifactsPage({ client, identity }: PageProps) {
  const namespaceId = useId();
  const [namespace, setNamespace] = useState('');
  const [applied, setApplied] = useState('');
  const [deleting, setDeleting] = useState<ArtifactRow | undefined>(undefined);
  const [deleted, setDeleted] = useState<string | undefined>(undefined);
  const pages = useCursorPages<ArtifactRow, ArtifactsListResponse>(
    (cursor) =>
      client.artifacts.list({
        limit: PAGE_SIZE,
        ...(cursor === undefined ? {} : { cursor }),
        ...(applied === '' ? {} : { filter: { namespace: applied } }),
      }),
    [client, applied],
  );
  const isAdmin = identity.scopes.includes('admin');

  const columns: Column<ArtifactRow>[] = [
    { header: 'Name', render: (row) => row.name ?? <code>{row.artifact_id}</code> },
    { header: 'Size', render: (row) => formatBytes(row.size_bytes) },
    { header: 'Type', render: (row) => row.mime_type, secondary: true },
    {
      header: 'Session',
      render: (row) => (row.user === identity.user ? row.session : `${row.user} / ${row.session}`),
      secondary: true,
    },
    { header: 'Namespace', render: (row) => row.namespace, secondary: true },
    { header: 'Created', render: (row) => new Date(row.created_at).toLocaleString(), secondary: true },
    {
      header: 'Actions',
      render: (row) => (
        <span className="buttons">
          <ActionButton ariaLabel={`Download ${row.name ?? row.artifact_id}`} action={() => download(client, row)}>
            Download
          </ActionButton>
          {isAdmin && (
            <button
              type="button"
              className="button danger"
              aria-label={`Delete ${row.name ?? row.artifact_id}`}
              onClick={() => setDeleting(row)}
            >
              Delete
            </button>
          )}
        </span>
      ),
    },
  ];

  return (
    <>
      <h1>Artifacts</h1>
      <form
        className="toolbar"
        aria-label="Filter artifacts"
        onSubmit={(e) => {
          e.preventDefault();
          setApplied(namespace.trim());
        }}
      >
        <span className="field">
          <label htmlFor={namespaceId}>Namespace</label>
          <input id={namespaceId} value={namespace} onChange={(e) => setNamespace(e.target.value)} />
        </span>
        <button type="submit" className="button">
          Filter
        </button>
        <button type="button" className="button" onClick={() => void pages.reload()}>
          Refresh
        </button>
      </form>
      <ErrorNotice error={pages.error} title="Cannot list artifacts" />
      {deleted !== undefined && (
        <p className="result" role="status">
          Deleted {deleted}.
        </p>
      )}
      {pages.data !== undefined && (
        <DataTable
          caption={`Artifacts of ${identity.user}`}
          columns={columns}
          rows={pages.data.items}
          rowKey={(row) => row.artifact_id}
          empty="No artifacts."
        />
      )}
      <Pager pages={pages} label="artifacts" />
      <UploadForm
        client={client}
        onUploaded={() => {
          pages.first();
          void pages.reload();
        }}
      />
      <ConfirmDialog
        open={deleting !== undefined}
        title={`Delete ${deleting?.name ?? deleting?.artifact_id ?? ''}?`}
        confirmLabel="Delete"
        variant="danger"
        onConfirm={async () => {
          if (deleting === undefined) return;
          await client.artifacts.delete({ artifact_id: deleting.artifact_id });
          setDeleted(deleting.name ?? deleting.artifact_id);
          await pages.reload();
        }}
        onClose={() => setDeleting(undefined)}
      >
        <p>The artifact's bytes and record are removed for good.</p>
      </ConfirmDialog>
    </>
  );
}
