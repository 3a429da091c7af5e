/** A task status (or any short state) as a coloured badge; the text carries the meaning, not the colour. */
export function StatusBadge({ status }: { readonly status: string }) {
  return <span className={`badge status-${status.replace(/[^a-z_]/gi, '')}`}>{status}</span>;
}
