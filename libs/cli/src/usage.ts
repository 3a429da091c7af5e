/** The usage text of `ars help`. */
export const USAGE = `Usage: ars <command> [arguments]

Commands:
  up [--split] [--log-format pretty|json]
                         start the whole system (nats-server unless NATS_URL, then every service and the
                         gateway in one Node process; --split runs one process per service, as deployed);
                         pretty: readable lines with their trace_id, json: the services' JSON lines as they are
  test [vitest args]     type-check, lint, then every test project (extra arguments go to vitest)
  run <query>            start a run and print its task id (--json: the start's answer);
                         --follow renders it live: streamed text, tool calls, approvals, a final line
                         with status, duration, tokens and cost (--json: one event frame per line);
                         --agent <id>, --session <id>, --idempotency-key <key>, --priority <n>
  tasks                  list the session's tasks, newest first (--status <s> (repeatable or a,b),
                         --limit <n> (20), --text <q>, --session <id>, --json)
  approve <pause-token>  approve a step that awaits approval (--reason <text>, --run <task-id>,
                         --session <id>, --json); the run is found by pause.list unless --run
  reject <pause-token>   reject it: the run ends failed (same options)
  cancel <task-id>       stop a live run (--hard, --session <id>, --json)
  pause <task-id>        park a live run at its next step (--reason <text>, --session <id>, --json)
  resume <task-id>       resume a parked run (same options)
  redirect <task-id> <goal>
                         rewrite a live run's goal (--session <id>, --json)
  events                 print the event stream, one JSON frame per line, until Ctrl-C
                         (--pretty: one readable line per frame; --run <id>, --type <type> (repeatable),
                          --admin, --from <seq>, --session <id>, --control to include stream control events)
  token [json]           mint a dev token; json may set tenant, user, session, scopes
  call <method> [json]   call a registry method and print its answer (--session <id>)
  info                   print runtime.info
  help                   print this text

Exit codes: 0 success; 1 the service refused (its error code and message are printed) or cannot be
reached; 2 bad arguments; run --follow: 0 completed, 3 failed, 4 cancelled, 130 Ctrl-C (the run goes on).

Environment of up:
  PORT (8080), HOST (127.0.0.1), DATA_DIR (.data), NATS_URL, NATS_MEMORY_LIMIT_MIB (160),
  GOMAXPROCS (1, the spawned nats-server's), MONGO_URL, STORE_ENGINE (sqlite), STORE_LOCKING,
  ARS_UP_MODE (one-process | split), NODE_COMPILE_CACHE ($TMPDIR/node-compile-cache; NODE_DISABLE_COMPILE_CACHE=1: none)
Environment of the client commands (run, tasks, approve, reject, cancel, pause, resume, redirect, events,
token, call, info):
  ARS_URL (http://127.0.0.1:8080), ARS_TOKEN (default: a dev bootstrap token),
  NO_COLOR (no colors), FORCE_COLOR (colors even when not a terminal)
`;
