/**
 * @ars/cli: the `ars` command (dev supervisor, test runner, client commands)
 * and the supervisor API that `ars up` and the e2e testkit share.
 */
export { startSystem, START_ORDER, SYSTEM_PROCESS, DEV_TOKEN_PREFIX } from './supervisor.ts';
export type { RunningSystem } from './supervisor.ts';
export {
  RestartPolicy,
  SERVICE_NODE_FLAGS,
  ARS_NODE_FLAGS,
  SystemOptions,
  SystemOptionsError,
  parseSystemOptions,
} from './system-options.ts';
export type { LogEntry, StartSystemOptions } from './system-options.ts';
export { StartupError } from './readiness.ts';
export { describeExit, spawnServiceProcess } from './service-process.ts';
export type { ExitInfo, LineHandler, ServiceProcess, ServiceProcessOptions } from './service-process.ts';
export { formatChildLine, parsePinoLine } from './log-format.ts';
export type { LogFormatOptions, ParsedLogLine } from './log-format.ts';
export { ConfigError, UpConfig, parseUpConfig } from './config.ts';
export { runCli } from './cli.ts';
export { CONSOLE_DIR, consoleBuildIsStale, ensureConsoleBuilt } from './console-build.ts';
export type { ConsoleBuildResult } from './console-build.ts';
export type { Io } from './io.ts';
