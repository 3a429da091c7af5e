import { useState } from 'react';
import type { ReactNode } from 'react';
import { ErrorNotice } from './error-notice.tsx';

export interface ActionButtonProps {
  /** The button's text (and accessible name unless `ariaLabel`). */
  readonly children: ReactNode;
  /** The call to make; its rejection is shown under the button. */
  readonly action: () => Promise<unknown>;
  /** Called with the action's result once it resolves. */
  readonly onDone?: (result: unknown) => void;
  readonly ariaLabel?: string;
  readonly disabled?: boolean;
  /** `danger` for destructive actions. @default 'normal' */
  readonly variant?: 'normal' | 'primary' | 'danger';
}

/** A button that calls a method, is busy while it runs, and shows the service's error if it fails. */
export function ActionButton({ children, action, onDone, ariaLabel, disabled, variant = 'normal' }: ActionButtonProps) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const run = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const result = await action();
      onDone?.(result);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return (
    <span className="action">
      <button
        type="button"
        className={`button ${variant}`}
        aria-label={ariaLabel}
        aria-busy={busy}
        disabled={disabled === true || busy}
        onClick={() => void run()}
      >
        {children}
      </button>
      <ErrorNotice error={error} />
    </span>
  );
}
