/** The console's shared component kit: import from `../components/index.ts`. */
export { ActionButton } from './action-button.tsx';
export type { ActionButtonProps } from './action-button.tsx';
export { ConfirmDialog } from './confirm-dialog.tsx';
export type { ConfirmDialogProps } from './confirm-dialog.tsx';
export { DataTable } from './data-table.tsx';
export type { Column, DataTableProps } from './data-table.tsx';
export { ErrorNotice, describeError } from './error-notice.tsx';
export { JsonView } from './json-view.tsx';
export { StatusBadge } from './status-badge.tsx';
export { useEventStream } from './use-event-stream.ts';
export type { StreamState } from './use-event-stream.ts';
export { useLoad } from './use-load.ts';
export { useSnapshot } from './use-snapshot.ts';
export type { Snapshot } from './use-snapshot.ts';
export type { Loaded } from './use-load.ts';
export { ScopeToggle } from './scope-toggle.tsx';
