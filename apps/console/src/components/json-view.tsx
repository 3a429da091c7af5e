/** A JSON value, pretty-printed; collapsed behind `summary` when one is given. */
export function JsonView({ value, summary }: { readonly value: unknown; readonly summary?: string }) {
  const text = value === undefined ? 'undefined' : JSON.stringify(value, null, 2);
  const pre = <pre className="json">{text}</pre>;
  if (summary === undefined) return pre;
  return (
    <details className="json-details">
      <summary>{summary}</summary>
      {pre}
    </details>
  );
}
