/**
 * @opentelemetry/api is an optional peer of the runtime: a child process imports the built runtime
 * (runtime/dist, what `npm run build` makes) under hooks that see every module that resolves into
 * @opentelemetry (ESM imports through a resolve hook, CommonJS requires through Module._resolveFilename),
 * and either refuse it (as if it were not installed) or only report it. prom-client's own require of it
 * (prom-client depends on it, for exemplars) is let through: under pnpm's strict layout the runtime cannot
 * resolve prom-client's dependencies, and this is the case the refusal plays.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const runtimeDist = fileURLToPath(new URL('../dist/index.js', import.meta.url));

/** A resolve hook that refuses @opentelemetry, or only reports it, as `mode` says. */
const HOOK = `
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (resolved.url.includes('/@opentelemetry/') && !String(context.parentURL).includes('/prom-client/')) {
    if (process.env.OTEL_HOOK === 'refuse') throw new Error('Cannot find package ' + specifier);
    process.stdout.write('loaded ' + specifier + '\\n');
  }
  return resolved;
}`;

/** Runs `body` after importing the runtime; prints what of @opentelemetry was loaded, then 'ok'. */
function runChild(body: string, mode: 'refuse' | 'report'): string {
  const script = `
import { register, createRequire } from 'node:module';
const Module = createRequire(import.meta.url)('node:module');
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, parent, ...rest) {
  if (request.startsWith('@opentelemetry/') && !String(parent?.filename).includes('/prom-client/')) {
    if (process.env.OTEL_HOOK === 'refuse') {
      const error = new Error("Cannot find module '" + request + "'");
      error.code = 'MODULE_NOT_FOUND';
      throw error;
    }
    process.stdout.write('loaded ' + request + '\\n');
  }
  return resolveFilename.call(this, request, parent, ...rest);
};
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(HOOK)}));
const runtime = await import(${JSON.stringify(pathToFileURL(runtimeDist).href)});
const lines = [];
const logger = runtime.createLogger({ write: (line) => lines.push(line) });
const manager = (tracing) => new runtime.Manager({
  newClient: () => ({}),
  newInformer: () => { throw new Error('no informers'); },
  metrics: { bindAddress: '0' },
  healthProbeBindAddress: '0',
  handleSignals: false,
  logger,
  ...(tracing ? { tracing } : {}),
});
${body}
console.log('ok');
`;
  return execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 30_000,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, OTEL_HOOK: mode, KUBECONFIG: '' },
  });
}

describe('@opentelemetry/api is optional', () => {
  it('importing the runtime and making a manager without tracing: the runtime loads nothing of OpenTelemetry', () => {
    expect(existsSync(runtimeDist), 'runtime/dist is missing: run `npm run build`').toBe(true);
    expect(runChild('manager();', 'report').trim()).toBe('ok');
  });

  it('tracing on loads @opentelemetry/api, and only then', () => {
    const out = runChild(
      "const m = manager({ enabled: true }); if (!m.tracing) throw new Error('no tracer');",
      'report',
    );
    expect(out).toMatch(/^loaded @opentelemetry\/api$/m);
  });

  it('without the package, tracing on warns once with a hint and the manager works without spans', () => {
    const out = runChild(
      `const m = manager({ enabled: true });
if (m.tracing !== undefined) throw new Error('a tracer without @opentelemetry/api');
const warning = lines.map((line) => JSON.parse(line)).filter((line) => line.level === 'warn');
if (warning.length !== 1 || !/@opentelemetry\\/api cannot be loaded/.test(warning[0].msg)) throw new Error(lines.join(''));
if (!/hint: npm install @opentelemetry\\/api/.test(warning[0].msg)) throw new Error(lines.join(''));`,
      'refuse',
    );
    expect(out.trim()).toBe('ok');
  });
});
