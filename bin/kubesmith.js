#!/usr/bin/env node
// Thin launcher: everything lives in the compiled CLI, which loads heavy modules lazily.
import { main } from '../dist/cli/main.js';

process.exitCode = await main(process.argv);
