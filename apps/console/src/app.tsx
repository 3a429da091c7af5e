import { Component, useMemo, useState } from 'react';
import type { ErrorInfo, ReactNode } from 'react';
import { createClient } from '@ars/client';
import { ErrorNotice } from './components/index.ts';
import { hasAnyScope, identityFromToken, loadSignIn, saveSignIn } from './identity.ts';
import type { SignIn } from './identity.ts';
import type { Identity, PageModule } from './page-props.ts';
import { PAGES, navPages } from './pages.ts';
import { navigate, resolveRoute, useLocationPath } from './router.ts';
import { SignInPage } from './sign-in.tsx';

/** Catches a page's render error and shows it instead of a blank screen. */
class PageErrorBoundary extends Component<{ readonly children: ReactNode; readonly path: string }, { error: unknown }> {
  override state: { error: unknown } = { error: undefined };
  static getDerivedStateFromError(error: unknown) {
    return { error };
  }
  override componentDidUpdate(previous: { readonly path: string }) {
    if (previous.path !== this.props.path && this.state.error !== undefined) this.setState({ error: undefined });
  }
  override componentDidCatch(_error: unknown, _info: ErrorInfo) {}
  override render() {
    if (this.state.error !== undefined) return <ErrorNotice error={this.state.error} title="This page failed" />;
    return this.props.children;
  }
}

function Header({
  identity,
  pages,
  path,
  onSignOut,
}: {
  readonly identity: Identity;
  readonly pages: readonly PageModule[];
  readonly path: string;
  readonly onSignOut: () => void;
}) {
  const current = path.split('?')[0] ?? '/';
  return (
    <header className="top">
      <a
        className="skip"
        href="#main"
        onClick={(e) => {
          e.preventDefault();
          document.getElementById('main')?.focus();
        }}
      >
        Skip to content
      </a>
      <span className="brand">ARS console</span>
      <nav aria-label="Main">
        <ul>
          {navPages(pages)
            .filter((m) => hasAnyScope(identity, m.page.navScopes))
            .map((m) => (
              <li key={m.page.path}>
                <a
                  href={`#${m.page.path}`}
                  aria-current={current === m.page.path || current.startsWith(`${m.page.path}/`) ? 'page' : undefined}
                >
                  {m.page.title}
                </a>
              </li>
            ))}
        </ul>
      </nav>
      <div className="who" aria-label="Signed in as">
        <span title="tenant / user / session">
          {identity.tenant} / {identity.user} / {identity.session || '(no session)'}
        </span>
        {identity.scopes.length > 0 && <span className="scopes">{identity.scopes.join(' ')}</span>}
        <button type="button" className="button" onClick={onSignOut}>
          Sign out
        </button>
      </div>
    </header>
  );
}

/** The shell: sign-in gate, header with the nav built from the discovered pages, and the routed page. */
export function App() {
  const [signIn, setSignIn] = useState<SignIn | undefined>(loadSignIn);
  const path = useLocationPath();
  const identity = useMemo(() => {
    if (signIn === undefined) return undefined;
    try {
      return identityFromToken(signIn.token, signIn.session);
    } catch {
      return undefined;
    }
  }, [signIn]);
  const client = useMemo(
    () =>
      signIn === undefined || identity === undefined
        ? undefined
        : createClient({ baseUrl: window.location.origin, token: signIn.token, session: identity.session }),
    [signIn, identity],
  );

  const update = (next: SignIn | undefined) => {
    saveSignIn(next);
    setSignIn(next);
  };

  if (signIn === undefined || identity === undefined || client === undefined) {
    return (
      <SignInPage
        onSignIn={(token, session) => {
          update({ token, ...(session === undefined ? {} : { session }) });
          if (path === '/' || path === '/sign-in') navigate('/runs');
        }}
      />
    );
  }

  const route = resolveRoute(PAGES, path === '/' ? '/runs' : path);
  const Page = route?.module.default;
  document.title = route === undefined ? 'ARS console' : `${route.module.page.title} · ARS console`;
  return (
    <>
      <Header identity={identity} pages={PAGES} path={path} onSignOut={() => update(undefined)} />
      <main id="main" tabIndex={-1}>
        {route === undefined || Page === undefined ? (
          <p role="alert">No page at {path}.</p>
        ) : (
          <PageErrorBoundary path={path}>
            <Page
              key={path.split('?')[0]}
              client={client}
              identity={identity}
              navigate={navigate}
              params={route.params}
              token={signIn.token}
            />
          </PageErrorBoundary>
        )}
      </main>
    </>
  );
}
