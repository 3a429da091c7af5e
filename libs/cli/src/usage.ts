/** The usage text of `ars help`. */
export const USAGE = `Usage: ars <command> [arguments]

Commands:
  up [--split] [--log-format pretty|json]
                         start the whole system (nats-server unless NATS_URL, then every service and the
                         gateway in one Node process; --split runs one process per service, as deployed);
                         pretty: readable lines with their trace_id, json: the services' JSON lines as they are
  test [vitest args]     type-check, lint, then every test project (extra arguments go to vitest)
  token [json]           mint a dev token; json may set tenant, user, session, scopes
  call <method> [json]   call a registry method and print its answer (--session <id>)
  events                 print the event stream, one JSON frame per line, until Ctrl-C
                         (--run <id>, --type <type> (repeatable), --admin, --from <seq>,
                          --session <id>, --control to include stream control events)
  info                   print runtime.info
  help                   print this text

Environment of up:
  PORT (8080), HOST (127.0.0.1), DATA_DIR (.data), NATS_URL, NATS_MEMORY_LIMIT_MIB (160),
  MONGO_URL, STORE_ENGINE (sqlite), ARS_UP_MODE (one-process | split)
Environment of token, call, events, info:
  ARS_URL (http://127.0.0.1:8080), ARS_TOKEN (default: a dev bootstrap token)
`;
