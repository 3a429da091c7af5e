import { useEffect, useId, useRef, useState } from 'react';
import type { FormEvent, ReactNode } from 'react';
import { ErrorNotice } from './error-notice.tsx';

export interface ConfirmDialogProps {
  readonly open: boolean;
  readonly title: string;
  readonly children?: ReactNode;
  /** Text of the confirming button. @default 'Confirm' */
  readonly confirmLabel?: string;
  /** Adds a text field; its value is passed to `onConfirm`. */
  readonly input?: {
    readonly label: string;
    readonly required?: boolean;
    readonly multiline?: boolean;
    readonly initial?: string;
    /** `number` for numeric inputs. @default 'text' */
    readonly type?: 'text' | 'number';
  };
  /** Runs on confirm; the dialog closes when it resolves and shows the error when it rejects. */
  readonly onConfirm: (value: string) => Promise<unknown> | void;
  readonly onClose: () => void;
  readonly variant?: 'primary' | 'danger';
}

/**
 * A modal dialog (the native `<dialog>`: focus trapped, Escape closes) asking
 * to confirm, optionally with a text field (a reason, a goal, a message).
 */
export function ConfirmDialog(props: ConfirmDialogProps) {
  const { open, title, children, confirmLabel = 'Confirm', input, onConfirm, onClose, variant = 'primary' } = props;
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const inputId = useId();
  const [value, setValue] = useState(input?.initial ?? '');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);

  useEffect(() => {
    const dialog = ref.current;
    if (dialog === null) return;
    if (open && !dialog.open) {
      setValue(input?.initial ?? '');
      setError(undefined);
      dialog.showModal();
    } else if (!open && dialog.open) dialog.close();
  }, [open, input?.initial]);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await onConfirm(value);
      onClose();
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  return (
    <dialog ref={ref} className="dialog" aria-labelledby={titleId} onClose={onClose}>
      <form onSubmit={(e) => void submit(e)}>
        <h2 id={titleId}>{title}</h2>
        {children}
        {input !== undefined && (
          <div className="field">
            <label htmlFor={inputId}>{input.label}</label>
            {input.multiline === true ? (
              <textarea
                id={inputId}
                value={value}
                required={input.required}
                rows={4}
                onChange={(e) => setValue(e.target.value)}
              />
            ) : (
              <input
                id={inputId}
                type={input.type ?? 'text'}
                value={value}
                required={input.required}
                onChange={(e) => setValue(e.target.value)}
              />
            )}
          </div>
        )}
        <ErrorNotice error={error} />
        <div className="dialog-buttons">
          <button type="button" className="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className={`button ${variant}`} disabled={busy} aria-busy={busy}>
            {confirmLabel}
          </button>
        </div>
      </form>
    </dialog>
  );
}
