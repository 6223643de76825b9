/**
 * A V8 code cache for ts-morph's bundles (TypeScript's 9 MB compiler among them), for Node versions
 * without `module.enableCompileCache` (before 22.1). Compiling them is a fifth of a cold
 * `kubesmith manifests` on Node 20; with the cache, V8 skips parsing them and the functions compiled in an
 * earlier run.
 *
 * While ts-morph is required, its bundles are compiled with `vm.Script` and the cached data kept in
 * `.cache/kubesmith/v8/` of the node_modules directory that holds ts-morph, one file per bundle, named by
 * a hash of the bundle's path and source (about 10 ms for the compiler, the one bundle the generator loads:
 * file times are no proof, npm gives every installed file the same one) and of Node's version and
 * architecture. A cache V8 rejects (other V8
 * flags) is rewritten; one that cannot be read or written is done without. The data is written when the
 * process exits, so it includes what the run compiled, to a temporary file renamed into place.
 * `NODE_DISABLE_COMPILE_CACHE=1` turns it off, as it does Node's own compile cache.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import Module from 'node:module';
import path from 'node:path';
import vm from 'node:vm';

/** The bundles worth caching: typescript.js (and ts-morph.js, ts-morph-common.js, where they are loaded). */
const BUNDLE = /[\\/]node_modules[\\/](?:ts-morph|@ts-morph[\\/]common)[\\/]dist[\\/][^\\/]+\.js$/;

interface Compile {
  (this: Module, content: string, filename: string, ...rest: unknown[]): unknown;
}

interface Entry {
  script: vm.Script;
  file: string;
  /** Whether the cache must be (re)written: none was read, or V8 rejected it. */
  write: boolean;
}

/**
 * Until the returned function is called, ts-morph's bundles are compiled through the code cache. Call it
 * once ts-morph is loaded.
 */
export function installCodeCache(): () => void {
  const proto = Module.prototype as unknown as { _compile: Compile };
  const nothing = () => {};
  if (
    typeof (Module as { enableCompileCache?: unknown }).enableCompileCache === 'function' ||
    process.env['NODE_DISABLE_COMPILE_CACHE'] ||
    typeof proto._compile !== 'function'
  ) {
    return nothing;
  }
  // KUBESMITH_CODE_CACHE_DIR puts the cache elsewhere: the code cache's own test uses it, so that the
  // kubesmith processes other tests run at the same time cannot rewrite the files it damages on purpose.
  let dir = process.env['KUBESMITH_CODE_CACHE_DIR'] ?? '';
  if (!dir) {
    try {
      const pkg = require.resolve('ts-morph/package.json');
      dir = path.join(path.dirname(path.dirname(pkg)), '.cache', 'kubesmith', 'v8');
    } catch {
      return nothing;
    }
  }
  const entries: Entry[] = [];
  const original = proto._compile;
  proto._compile = function (this: Module, content: string, filename: string, ...rest: unknown[]) {
    if (!BUNDLE.test(filename)) return original.call(this, content, filename, ...rest);
    return compileCached(this, content, filename, dir, entries);
  };
  return () => {
    proto._compile = original;
    if (entries.some((e) => e.write)) process.once('exit', () => save(dir, entries));
  };
}

function cacheFile(dir: string, filename: string, content: string): string {
  const key = createHash('sha256')
    .update(`${filename}\0${process.version}\0${process.arch}\0`)
    .update(content)
    .digest('hex');
  return path.join(dir, `${path.basename(filename)}-${key.slice(0, 16)}.v8`);
}

/** What Module.prototype._compile does for a CommonJS file, with `vm.Script` and cached data. */
function compileCached(
  mod: Module,
  content: string,
  filename: string,
  dir: string,
  entries: Entry[],
): unknown {
  const file = cacheFile(dir, filename, content);
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(file);
  } catch {
    // No cache yet.
  }
  const script = new vm.Script(Module.wrap(content), {
    filename,
    ...(cachedData ? { cachedData } : {}),
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  entries.push({ script, file, write: cachedData === undefined || script.cachedDataRejected === true });
  const fn = script.runInThisContext({ displayErrors: true }) as (...args: unknown[]) => unknown;
  const require = ((id: string) => mod.require(id)) as NodeJS.Require;
  const internal = Module as unknown as {
    _resolveFilename(request: string, parent: Module, isMain: boolean, options?: unknown): string;
    _resolveLookupPaths(request: string, parent: Module): string[] | null;
    _extensions: NodeJS.Require['extensions'];
    _cache: NodeJS.Require['cache'];
  };
  const resolve = ((request: string, options?: { paths?: string[] }) =>
    internal._resolveFilename(request, mod, false, options)) as NodeJS.RequireResolve;
  resolve.paths = (request: string) => internal._resolveLookupPaths(request, mod);
  require.resolve = resolve;
  require.main = process.mainModule;
  require.extensions = internal._extensions;
  require.cache = internal._cache;
  return fn.call(mod.exports, mod.exports, require, mod, filename, path.dirname(filename));
}

/** Writes the cached data of each bundle that needs it, and removes the caches of older builds. */
function save(dir: string, entries: readonly Entry[]): void {
  let existing: string[];
  try {
    mkdirSync(dir, { recursive: true });
    existing = readdirSync(dir);
  } catch {
    return; // A cache that cannot be written only costs the next run the time it would have saved.
  }
  for (const { script, file, write } of entries) {
    if (!write) continue;
    const temp = `${file}.${process.pid}.tmp`;
    try {
      writeFileSync(temp, script.createCachedData());
      renameSync(temp, file);
    } catch {
      rmSync(temp, { force: true });
      continue;
    }
    const prefix = `${path.basename(file).replace(/-[0-9a-f]{16}\.v8$/, '')}-`;
    for (const name of existing) {
      if (name.startsWith(prefix) && name.endsWith('.v8') && name !== path.basename(file)) {
        rmSync(path.join(dir, name), { force: true });
      }
    }
  }
}
