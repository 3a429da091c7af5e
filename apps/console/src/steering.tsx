import { useState } from 'react';
import type { ArsClient } from '@ars/client';
import { ConfirmDialog, ErrorNotice, StatusBadge } from './components/index.ts';
import type { SteeringEffect } from './timeline.ts';

/** One steering control: its method, its button, and how its payload is asked for. */
interface Control {
  readonly method: string;
  readonly label: string;
  readonly variant?: 'danger';
  /** The payload; with `ask`, built from the dialog's text. */
  readonly payload: (text: string) => Record<string, unknown>;
  readonly ask?: {
    readonly title: string;
    readonly label: string;
    readonly type?: 'number';
    readonly multiline?: boolean;
  };
  readonly confirm?: string;
  readonly adminOnly?: boolean;
}

const CONTROLS: readonly Control[] = [
  { method: 'pause', label: 'Pause', payload: () => ({}) },
  { method: 'resume', label: 'Resume', payload: () => ({}) },
  { method: 'cancel', label: 'Cancel', variant: 'danger', payload: () => ({}), confirm: 'Cancel this run?' },
  {
    method: 'cancel',
    label: 'Hard cancel',
    variant: 'danger',
    payload: () => ({ hard: true }),
    confirm: 'Hard cancel this run? In-flight work is abandoned.',
  },
  {
    method: 'redirect',
    label: 'Redirect',
    payload: (goal) => ({ goal }),
    ask: { title: 'Redirect the run', label: 'New goal', multiline: true },
  },
  {
    method: 'inject_context',
    label: 'Inject context',
    payload: (note) => ({ note }),
    ask: { title: 'Inject context', label: 'Context for the next step', multiline: true },
  },
  {
    method: 'user_message',
    label: 'Message',
    payload: (message) => ({ message }),
    ask: { title: 'Send a message to the run', label: 'Message', multiline: true },
  },
  {
    method: 'prioritize',
    label: 'Prioritize',
    payload: (priority) => ({ priority: Number(priority) }),
    ask: { title: 'Change the priority', label: 'Priority (integer)', type: 'number' },
    adminOnly: true,
  },
];

/**
 * The steering buttons of a live run. A 200 only means enqueued: each sent
 * control is listed until its `control.applied` or `control.rejected`
 * arrives on the stream.
 */
export function SteeringPanel({
  client,
  taskId,
  isAdmin,
  live,
  effects,
  onSend,
  onRefused,
}: {
  readonly client: ArsClient;
  readonly taskId: string;
  readonly isAdmin: boolean;
  readonly live: boolean;
  readonly effects: readonly SteeringEffect[];
  /** Called before the request goes out (its events may arrive before its answer); returns the effect's id. */
  readonly onSend: (method: string) => number;
  /** The request was refused: the effect will never settle. */
  readonly onRefused: (id: number) => void;
}) {
  const [open, setOpen] = useState<Control | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);

  const send = async (control: Control, text: string) => {
    setError(undefined);
    const id = onSend(control.method);
    try {
      await client.call(control.method, { identity: { run: taskId }, payload: control.payload(text) });
    } catch (error) {
      onRefused(id);
      throw error;
    }
  };
  const click = (control: Control) => {
    if (control.ask !== undefined || control.confirm !== undefined) setOpen(control);
    else void send(control, '').catch(setError);
  };

  return (
    <section aria-labelledby="steering-title" className="card">
      <h2 id="steering-title">Steering</h2>
      <div className="steering">
        {CONTROLS.filter((c) => isAdmin || c.adminOnly !== true).map((control) => (
          <button
            key={control.label}
            type="button"
            className={`button ${control.variant ?? ''}`}
            disabled={!live}
            onClick={() => click(control)}
          >
            {control.label}
          </button>
        ))}
      </div>
      <ErrorNotice error={error} title="Control refused" />
      <ul className="effects" aria-live="polite" aria-label="Sent controls">
        {effects.map((effect) => (
          <li key={effect.id}>
            {effect.method} <StatusBadge status={effect.state} />
            {effect.detail !== undefined && effect.detail !== '' && <span> {effect.detail}</span>}
          </li>
        ))}
      </ul>
      <ConfirmDialog
        open={open !== undefined}
        title={open?.ask?.title ?? open?.confirm ?? ''}
        confirmLabel={open?.label ?? 'Send'}
        variant={open?.variant === 'danger' ? 'danger' : 'primary'}
        {...(open?.ask === undefined
          ? {}
          : {
              input: {
                label: open.ask.label,
                required: true,
                ...(open.ask.type ? { type: open.ask.type } : {}),
                ...(open.ask.multiline ? { multiline: true } : {}),
              },
            })}
        onConfirm={(text) => (open === undefined ? undefined : send(open, text))}
        onClose={() => setOpen(undefined)}
      />
    </section>
  );
}
