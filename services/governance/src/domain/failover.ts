import type { FailoverProvider } from '@ars/contracts';

/**
 * The provider to fail over to from `from`, on hop `hopIndex` (1 for the
 * first failover of a call): the next one after `from` in the chain, or the
 * chain's first when `from` is not in it (the run's primary came from its
 * agent configuration). None when the chain is exhausted, or when
 * `hopIndex` exceeds the chain's length (a guard against loops).
 */
export function nextProvider(
  chain: readonly FailoverProvider[],
  from: string,
  hopIndex: number,
): FailoverProvider | undefined {
  if (hopIndex > chain.length) return undefined;
  const position = chain.findIndex((p) => p.name === from);
  return position < 0 ? chain[0] : chain[position + 1];
}

/** How many more hops the chain allows after `to` (0 when it is the last). */
export function remainingHops(chain: readonly FailoverProvider[], to: FailoverProvider | undefined): number {
  if (to === undefined) return 0;
  return chain.length - 1 - chain.findIndex((p) => p.name === to.name);
}
