// The `ars` command (run by the root ./ars wrapper): the composition root of
// the CLI. It reads process.env once and hands the snapshot to the commands.
import { enableCompileCache } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// The modules' compiled code (TypeScript stripped, V8's bytecode) is kept on disk and reused by the
// next start: enabled before the CLI's modules load, which is why they are imported below and not
// above. Through the environment the processes it starts (`ars up --split`'s services) share the
// folder. NODE_COMPILE_CACHE names another, NODE_DISABLE_COMPILE_CACHE=1 turns it off
// (docs/decisions.md "Node processes keep a compile cache").
process.env['NODE_COMPILE_CACHE'] ||= join(tmpdir(), 'node-compile-cache');
enableCompileCache();
const { runCli } = await import('./cli.ts');

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
