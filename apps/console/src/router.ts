import { useEffect, useState } from 'react';
import type { ConsolePage, PageModule, RouteParams } from './page-props.ts';

/** The console's location: the part of the URL after `#`, e.g. `/runs/abc?x=1`. Hash routing: no server fallback needed. */
export function currentPath(): string {
  const hash = window.location.hash.replace(/^#/, '');
  return hash.startsWith('/') ? hash : '/';
}

export function navigate(path: string): void {
  window.location.hash = path.startsWith('/') ? path : `/${path}`;
}

/** The current hash path, re-rendering on change. */
export function useLocationPath(): string {
  const [path, setPath] = useState(currentPath);
  useEffect(() => {
    const onChange = () => setPath(currentPath());
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return path;
}

/** Matches `pattern` (`/runs/:taskId`) against a path; the params, or undefined. */
export function matchPath(pattern: string, pathname: string): Record<string, string> | undefined {
  const want = pattern.split('/').filter(Boolean);
  const got = pathname.split('/').filter(Boolean);
  if (want.length !== got.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i] as string;
    const g = got[i] as string;
    if (w.startsWith(':')) params[w.slice(1)] = decodeURIComponent(g);
    else if (w !== g) return undefined;
  }
  return params;
}

/** The page matching `path` (static segments before `:params`), with its params and the query's. */
export function resolveRoute(
  pages: readonly PageModule[],
  path: string,
): { readonly module: PageModule; readonly params: RouteParams } | undefined {
  const [pathname = '/', query = ''] = path.split('?', 2);
  const ranked = [...pages].sort((a, b) => specificity(b.page) - specificity(a.page));
  for (const module of ranked) {
    const params = matchPath(module.page.path, pathname);
    if (params !== undefined)
      return { module, params: { ...Object.fromEntries(new URLSearchParams(query)), ...params } };
  }
  return undefined;
}

function specificity(page: ConsolePage): number {
  return page.path.split('/').filter((s) => s !== '' && !s.startsWith(':')).length * 10 - page.path.split(':').length;
}
