// The `ars` command (run by the root ./ars wrapper): the composition root of
// the CLI. It reads process.env once and hands the snapshot to the commands.
import { runCli } from './cli.ts';

const code = await runCli(process.argv.slice(2), {
  env: { ...process.env },
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  isTty: process.stdout.isTTY === true,
}).catch((error: unknown) => {
  process.stderr.write(`ars: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  return 1;
});
// Exit once the output is flushed, even if a library left a handle open.
process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
