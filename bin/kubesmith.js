#!/usr/bin/env node
// Thin launcher: everything lives in the compiled CLI, which loads heavy modules lazily.
import module from 'node:module';

// Node 22.1+ keeps V8's compiled code between runs: TypeScript (ts-morph) then loads in a fraction of the
// time. Older Nodes do without.
module.enableCompileCache?.();

const { main } = await import('../dist/cli/main.js');
process.exitCode = await main(process.argv);
