import type { Subscriber } from './subscriber.ts';

/** The event a subscriber gets, last, when its token stops being accepted (the type `auth.rejected` is published under). */
export const AUTH_REJECTED_NOTICE = 'auth.rejected';

/**
 * setTimeout's largest delay (about 24.8 days); a longer wait is armed in
 * steps, since a larger delay would fire at once.
 */
const MAX_TIMER_MS = 2_147_483_647;

/** What keeps a subscription authorized: the token that opened it. */
export interface StreamAuthority {
  /**
   * Epoch ms from which the token is refused: its `exp` plus the verifier's
   * clock tolerance. Absent: it does not expire.
   */
  readonly refusedFromMs?: number;
  /** Calls `listener` once when the token gets revoked; returns the unsubscribe. */
  readonly onRevoked: (listener: () => void) => () => void;
  /** The `auth.rejected` members naming the token. */
  readonly token: { readonly kid: string; readonly issuer: string; readonly subject: string };
}

/**
 * Closes `subscriber` when its token expires or is revoked, whichever comes
 * first, with a last `auth.rejected` frame (Reason `expired` or `revoked`,
 * KID, Issuer, Subject: the members the event registry gives it) addressed to
 * that subscriber only: the client fetches a new token and resumes with
 * `Last-Event-ID`. Answers the cleanup, to run when the stream ends.
 */
export function watchAuthority(subscriber: Subscriber, authority: StreamAuthority, now: () => number): () => void {
  let timer: NodeJS.Timeout | undefined;
  let offRevoked: (() => void) | undefined;
  const stop = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    offRevoked?.();
    offRevoked = undefined;
  };
  const close = (reason: 'expired' | 'revoked') => {
    stop();
    subscriber.closeWithNotice(
      AUTH_REJECTED_NOTICE,
      { Reason: reason, KID: authority.token.kid, Issuer: authority.token.issuer, Subject: authority.token.subject },
      'unauthorized',
    );
  };
  const arm = (refusedFromMs: number) => {
    const wait = refusedFromMs - now();
    if (wait <= 0) {
      close('expired');
      return;
    }
    timer = setTimeout(() => arm(refusedFromMs), Math.min(wait, MAX_TIMER_MS));
    timer.unref();
  };
  offRevoked = authority.onRevoked(() => close('revoked'));
  if (authority.refusedFromMs !== undefined) arm(authority.refusedFromMs);
  if (subscriber.closed) stop();
  return stop;
}
