import { useCallback, useEffect, useRef, useState } from 'react';

/** What {@link useSnapshot} gives a page. */
export interface Snapshot {
  /** The last load's error (cleared by a load that succeeds). */
  readonly error: unknown;
  /** Loads again now. */
  readonly load: () => Promise<void>;
}

/**
 * A list page's snapshot, kept live by the page's event stream: `fetch` reads
 * it and `apply` merges it into the page's state, on mount, whenever `fetch`
 * or `trigger` changes, and on {@link Snapshot.load}. The answer of an
 * overtaken load (another scope chosen meanwhile, a refresh) is dropped, error
 * included, so that a slow earlier answer never hides the latest one.
 */
export function useSnapshot<T>(fetch: () => Promise<T>, apply: (snapshot: T) => void, trigger?: unknown): Snapshot {
  const [error, setError] = useState<unknown>(undefined);
  const latest = useRef(0);
  const applyRef = useRef(apply);
  applyRef.current = apply;

  const load = useCallback(async () => {
    const mine = ++latest.current;
    try {
      const snapshot = await fetch();
      if (mine !== latest.current) return;
      applyRef.current(snapshot);
      setError(undefined);
    } catch (caught) {
      if (mine === latest.current) setError(caught);
    }
  }, [fetch]);

  useEffect(() => {
    void load();
  }, [load, trigger]);

  return { error, load };
}
