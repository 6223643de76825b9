/**
 * Part of `npm run build`: copies the validator the runtime built (runtime/dist/validation: the checks of an
 * object against a CRD as the API server makes them, its CEL environment, RE2 patterns) into the CLI's
 * dist/validation/, where the CLI's `#validation/*.js` imports (package.json "imports") find it. The CLI
 * cannot depend on @kubesmith/runtime (a packed CLI installs before the runtime is on the registry: see
 * docs/architecture.md), so it carries this copy of the one engine, from the same build, rather than a
 * second implementation. Usage: node scripts/validation-files.mjs
 */
import { copyFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const from = fileURLToPath(new URL('../runtime/dist/validation', import.meta.url));
const to = fileURLToPath(new URL('../dist/validation', import.meta.url));

rmSync(to, { recursive: true, force: true });
mkdirSync(to, { recursive: true });
const files = readdirSync(from).filter((name) => /\.(?:js|d\.ts)$/.test(name));
if (!files.includes('validate.js')) throw new Error(`${from} holds no validate.js: build the runtime first`);
for (const name of files) copyFileSync(path.join(from, name), path.join(to, name));
