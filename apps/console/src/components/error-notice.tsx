import { isArsError } from '@ars/client';

/** One line naming an error: `403 scope_mismatch: message` for the service's errors. */
export function describeError(error: unknown): string {
  if (isArsError(error)) return `${error.status === 0 ? 'network' : error.status} ${error.code}: ${error.message}`;
  if (error instanceof Error) return error.message;
  return String(error);
}

/** Shows an error (the service's envelope: status, code, message) as an alert; nothing when there is none. */
export function ErrorNotice({ error, title }: { readonly error: unknown; readonly title?: string }) {
  if (error === undefined || error === null) return null;
  const status = isArsError(error) ? error.status : undefined;
  return (
    <div className="error-notice" role="alert" data-status={status}>
      {title !== undefined && <strong>{title}: </strong>}
      <span className="error-text">{describeError(error)}</span>
    </div>
  );
}
