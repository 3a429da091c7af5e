import { useId, useState } from 'react';
import type { FormEvent } from 'react';
import { bootstrapToken } from '@ars/client';
import { ErrorNotice } from './components/index.ts';
import { identityFromToken, isLoopbackHost } from './identity.ts';

/**
 * Sign-in: paste a connection token (optionally naming a session other than
 * the token's); on a loopback address, one click mints a dev token through
 * the gateway's bootstrap (`POST /v1/dev/bootstrap.json`, dev mode only).
 */
export function SignInPage({ onSignIn }: { readonly onSignIn: (token: string, session?: string) => void }) {
  const tokenId = useId();
  const sessionId = useId();
  const [token, setToken] = useState('');
  const [session, setSession] = useState('');
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const loopback = isLoopbackHost(window.location.hostname);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    try {
      identityFromToken(token, session);
      onSignIn(token.trim(), session.trim() || undefined);
    } catch (caught) {
      setError(caught);
    }
  };

  const bootstrap = async () => {
    setBusy(true);
    setError(undefined);
    try {
      onSignIn(await bootstrapToken(window.location.origin), session.trim() || undefined);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="sign-in" id="main">
      <h1>Agent Run Service console</h1>
      <form onSubmit={submit} aria-label="Sign in">
        <div className="field">
          <label htmlFor={tokenId}>Connection token</label>
          <textarea
            id={tokenId}
            name="token"
            rows={4}
            required
            autoComplete="off"
            spellCheck={false}
            value={token}
            onChange={(e) => setToken(e.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor={sessionId}>Session (optional: defaults to the token&apos;s)</label>
          <input id={sessionId} name="session" value={session} onChange={(e) => setSession(e.target.value)} />
        </div>
        <ErrorNotice error={error} title="Cannot sign in" />
        <div className="buttons">
          <button type="submit" className="button primary">
            Sign in
          </button>
          {loopback && (
            <button type="button" className="button" disabled={busy} aria-busy={busy} onClick={() => void bootstrap()}>
              Sign in with a dev token
            </button>
          )}
        </div>
        {loopback && (
          <p className="hint">The dev token comes from this gateway&apos;s bootstrap (dev mode, loopback only).</p>
        )}
      </form>
    </main>
  );
}
