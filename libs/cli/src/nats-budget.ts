// The local nats-server's memory budget, apart from local-nats.ts so that the configuration (and the
// client commands reading it) does not load the bus to know two numbers.

/**
 * The memory budget of the system's own nats-server, in MiB: about twice its
 * live data under the runs benchmark's sustained load (75–183 MiB between
 * collections on Go's defaults, which collect at twice the live heap), so
 * that it collects rarely and never near its live data. Its resident size
 * settles 50–130 MiB above the budget (the freed pages it keeps, see
 * `goMemoryEnvironment`): 247 MiB after 10,000 runs at 160, 349 at 256, with
 * the same CPU per run (bench/HISTORY.md, issue 29). 0 leaves Go's defaults.
 */
export const NATS_MEMORY_LIMIT_MIB = 160;

/** The smallest budget accepted: below it the server would collect without end. */
export const NATS_MEMORY_LIMIT_MIN_MIB = 64;
