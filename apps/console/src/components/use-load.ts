import { useCallback, useEffect, useRef, useState } from 'react';

/** The state of a load: the last data, the last error, and whether a load is under way. */
export interface Loaded<T> {
  readonly data: T | undefined;
  readonly error: unknown;
  readonly loading: boolean;
  /** Loads again (keeps showing the previous data meanwhile). */
  readonly reload: () => Promise<T | undefined>;
}

/**
 * Calls `load` on mount and whenever `deps` change; the answer of a stale call
 * is dropped. Errors are kept for display, not thrown.
 */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({
    data: undefined,
    error: undefined,
    loading: true,
  });
  const generation = useRef(0);
  const loadRef = useRef(load);
  loadRef.current = load;

  const reload = useCallback(async () => {
    const mine = ++generation.current;
    setState((s) => ({ ...s, loading: true }));
    try {
      const data = await loadRef.current();
      if (mine === generation.current) setState({ data, error: undefined, loading: false });
      return data;
    } catch (error) {
      if (mine === generation.current) setState((s) => ({ ...s, error, loading: false }));
      return undefined;
    }
  }, []);

  useEffect(() => {
    void reload();
    return () => {
      generation.current++;
    };
  }, deps);

  return { ...state, reload };
}
