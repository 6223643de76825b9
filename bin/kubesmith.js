#!/usr/bin/env node
// Thin launcher: everything lives in the compiled CLI, which loads heavy modules lazily.
import { existsSync } from 'node:fs';
import module from 'node:module';
import { fileURLToPath } from 'node:url';

// Node 22.1+ keeps V8's compiled code between runs: TypeScript (ts-morph) then loads in a fraction of the
// time. Older Nodes do without.
module.enableCompileCache?.();

const compiled = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(compiled)) {
  // Only a checkout can lack dist/: `npm install` builds it (the prepare script).
  const root = fileURLToPath(new URL('..', import.meta.url));
  process.stderr.write(
    `error: kubesmith is not built (${fileURLToPath(compiled)} is missing)\n` +
      `hint: run \`npm install\` in ${root}: it builds the CLI and the runtime\n`,
  );
  process.exit(1);
}
// A reader that stops early (`kubesmith create api --help | head`) closes the pipe: the output nobody reads
// any more is dropped, and the command ends with the exit code it would have had, without a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error) => {
    if (error.code !== 'EPIPE') throw error;
  });
}
const { main } = await import(compiled.href);
process.exitCode = await main(process.argv);
