/**
 * Part of `npm run build`: gives the CLI the runtime's validator (runtime/src/validation: the checks of an
 * object against a CRD as the API server makes them, its CEL environment, RE2 patterns) in dist/validation/,
 * where the CLI's `#validation/*.js` imports (package.json "imports") find it. The CLI cannot depend on
 * @kubesmith/runtime (a packed CLI installs before the runtime is on the registry: see docs/architecture.md),
 * so it carries this copy of the one engine, made from the same sources in the same build, rather than a
 * second implementation.
 *
 * The runtime's own JavaScript is a bundle (runtime/scripts/build.mjs), with the validator in hashed chunks
 * the CLI cannot name, so each module is compiled here on its own (TypeScript's transpileModule: the modules
 * are self-contained, and the runtime's tsc run has type-checked them); the declarations are the runtime's.
 * Usage: node scripts/validation-files.mjs (after the runtime's build)
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const sources = fileURLToPath(new URL('../runtime/src/validation', import.meta.url));
const declarations = fileURLToPath(new URL('../runtime/dist/validation', import.meta.url));
const to = fileURLToPath(new URL('../dist/validation', import.meta.url));

const modules = readdirSync(sources)
  .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'))
  .map((name) => name.slice(0, -'.ts'.length))
  .sort();
if (!modules.includes('validate')) throw new Error(`${sources} holds no validate.ts`);
const built = new Set(readdirSync(declarations, { withFileTypes: true }).map((entry) => entry.name));
const missing = modules.filter((name) => !built.has(`${name}.d.ts`));
if (missing.length > 0) {
  throw new Error(`${declarations} lacks ${missing.join(', ')} (.d.ts): build the runtime first`);
}

rmSync(to, { recursive: true, force: true });
mkdirSync(to, { recursive: true });
for (const name of modules) {
  const { outputText } = ts.transpileModule(readFileSync(path.join(sources, `${name}.ts`), 'utf8'), {
    fileName: `${name}.ts`,
    compilerOptions: {
      // ES modules, as the runtime's (a .ts file name alone would let NodeNext pick CommonJS here).
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      removeComments: true,
    },
  });
  writeFileSync(path.join(to, `${name}.js`), outputText);
  copyFileSync(path.join(declarations, `${name}.d.ts`), path.join(to, `${name}.d.ts`));
}
