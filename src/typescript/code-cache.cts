/**
 * A V8 code cache for ts-morph's bundles (TypeScript's 9 MB compiler among them) and re2js, for Node
 * versions without `module.enableCompileCache` (before 22.1). Compiling them is a fifth of a cold
 * `kubesmith manifests` on Node 20; with the cache, V8 skips parsing them and the functions compiled in an
 * earlier run.
 *
 * While ts-morph is required its bundles, and re2js whenever it is, are read and compiled here, with
 * `vm.Script`, and the cached data kept in `.cache/kubesmith/v8/` of the node_modules directory that holds
 * @ts-morph/common, one file per bundle, named by a hash of the bundle's path and its bytes' CRC-32 (file
 * times are no proof: npm gives every installed file the same one) and of Node's version and architecture.
 * The bundle is read as bytes, not through Node's loader: the key then needs no UTF-8 encoding of the
 * source, and an ASCII-only bundle (TypeScript's is) becomes a string without UTF-8 decoding. For the 9 MB
 * compiler that took the read and a SHA-256 of the bytes from about 35 ms to 18 (Node 20, this machine); a
 * CRC-32 saves 3.4 ms more. A cache V8 rejects (other V8 flags) is rewritten; one that cannot be read or
 * written is done without. The data is written when the process exits, so it includes what the run
 * compiled, to a temporary file renamed into place.
 * `NODE_DISABLE_COMPILE_CACHE=1` turns it off, as it does Node's own compile cache.
 */
import { isAscii } from 'node:buffer';
import { createHash } from 'node:crypto';
import {
  closeSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import Module from 'node:module';
import path from 'node:path';
import vm from 'node:vm';
import type * as WorkerThreads from 'node:worker_threads';
import { crc32 } from 'node:zlib';

/** The bundles worth caching: typescript.js (and ts-morph.js, ts-morph-common.js, where they are loaded). */
const BUNDLE = /[\\/]node_modules[\\/](?:ts-morph|@ts-morph[\\/]common)[\\/]dist[\\/][^\\/]+\.js$/;
/**
 * A bundle required later in the run, after TypeScript: re2js (260 KB), which the schema checks load for
 * the first pattern (runtime/src/validation/re2.ts). From the cache, loading it and compiling a realistic
 * corpus's five patterns took about 17 ms of CPU instead of 33.
 */
const LATER_BUNDLE = /[\\/]node_modules[\\/]re2js[\\/]build[\\/]index\.cjs$/;

type LoadExtension = (this: unknown, mod: Module, filename: string) => unknown;

interface Entry {
  script: vm.Script;
  file: string;
  /** Whether the cache must be (re)written: none was read, or V8 rejected it. */
  write: boolean;
}

/**
 * Until the returned function is called, ts-morph's bundles are compiled through the code cache. Call it
 * once ts-morph is loaded; re2js goes through the cache whenever it is loaded.
 */
export function installCodeCache(): () => void {
  const extensions = (Module as unknown as { _extensions?: Record<string, LoadExtension> })._extensions;
  const nothing = () => {};
  if (
    typeof (Module as { enableCompileCache?: unknown }).enableCompileCache === 'function' ||
    process.env['NODE_DISABLE_COMPILE_CACHE'] ||
    typeof extensions?.['.js'] !== 'function'
  ) {
    return nothing;
  }
  // KUBESMITH_CODE_CACHE_DIR puts the cache elsewhere: the code cache's own test uses it, so that the
  // kubesmith processes other tests run at the same time cannot rewrite the files it damages on purpose.
  let dir = process.env['KUBESMITH_CODE_CACHE_DIR'] ?? '';
  if (!dir) {
    try {
      // node_modules/@ts-morph/common/package.json: ts-morph itself is only a dev dependency.
      const pkg = require.resolve('@ts-morph/common/package.json');
      dir = path.join(path.dirname(path.dirname(path.dirname(pkg))), '.cache', 'kubesmith', 'v8');
    } catch {
      return nothing;
    }
  }
  const entries: Entry[] = [];
  const original = extensions['.js'];
  let loading = true;
  // The bundles are CommonJS files without a byte order mark: all of Node's loading that applies to them
  // is reading and compiling, which compileCached does. (A `.cjs` file is loaded as a `.js` one.)
  extensions['.js'] = function (this: unknown, mod: Module, filename: string) {
    if (!(loading && BUNDLE.test(filename)) && !LATER_BUNDLE.test(filename)) {
      return original.call(this, mod, filename);
    }
    return compileCached(mod, filename, dir, entries);
  };
  // Written at exit, so that a bundle loaded late is saved too, with what the run compiled.
  process.once('exit', () => {
    if (entries.some((e) => e.write)) save(dir, entries);
  });
  return () => {
    loading = false;
  };
}

function cacheFile(dir: string, filename: string, bytes: Buffer): string {
  // The bytes enter as their CRC-32 and length, as Node's own compile cache checks a source: a third of
  // SHA-256's time over the 9 MB compiler (1.9 ms against 5.3), and a change it misses would also have
  // to keep the length, which V8 checks again.
  const key = createHash('sha256')
    .update(`${filename}\0${process.version}\0${process.arch}\0${bytes.length}\0${crc32(bytes)}`)
    .digest('hex');
  return path.join(dir, `${path.basename(filename)}-${key.slice(0, 16)}.v8`);
}

/**
 * The function Node's loader wraps a CommonJS module in (Module.wrap), ours: the bundle is read between
 * its two halves, in one buffer (wrapping the text afterwards would make a second string of 9 MB, and V8
 * a third, flat one).
 */
const WRAPPER_HEAD = '(function (exports, require, module, __filename, __dirname) { ';
const WRAPPER_TAIL = '\n});';

/**
 * `file` read whole into the buffer `place` gives for its size, at the offset it gives; the bytes read,
 * or undefined when it cannot be read.
 */
function readWhole(
  file: string,
  place: (size: number) => { buffer: Buffer; offset: number },
): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const size = fstatSync(fd).size;
    const { buffer, offset } = place(size);
    let read = 0;
    while (read < size) {
      const n = readSync(fd, buffer, offset + read, size - read, read);
      if (n === 0) return undefined; // shorter than it was a moment ago
      read += n;
    }
    return buffer.subarray(offset, offset + size);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/**
 * What Node's loader does for a CommonJS file (its `_compile`), with `vm.Script` and cached data. A page
 * of memory a process touches first costs a page fault, which on a virtual machine is much of a short
 * run's system time: the bundle's bytes and its text take one allocation of its size each, and the cached
 * data reuses the first, where Node's loader and Module.wrap would take four and V8 flatten a fifth.
 */
function compileCached(mod: Module, filename: string, dir: string, entries: Entry[]): unknown {
  let buffer = Buffer.alloc(0);
  const bytes = readWhole(filename, (size) => {
    buffer = Buffer.allocUnsafe(WRAPPER_HEAD.length + size + WRAPPER_TAIL.length);
    return { buffer, offset: WRAPPER_HEAD.length };
  });
  if (!bytes) throw new Error(`cannot read ${filename}`);
  buffer.write(WRAPPER_HEAD, 0, 'latin1');
  buffer.write(WRAPPER_TAIL, WRAPPER_HEAD.length + bytes.length, 'latin1');
  const file = cacheFile(dir, filename, bytes);
  // Latin-1 decoding of ASCII is UTF-8 decoding, without the UTF-8 decoder's cost.
  const source = buffer.toString(isAscii(bytes) ? 'latin1' : 'utf8');
  // The text is a string of its own now: the buffer can take the cached data (a third of the bundle).
  const cachedData = readWhole(file, (size) =>
    size <= buffer.length ? { buffer, offset: 0 } : { buffer: Buffer.allocUnsafe(size), offset: 0 },
  );
  const script = new vm.Script(source, {
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

/** This thread's id, read when the process exits: worker_threads is not loaded for it at start. */
const threadId = (): number =>
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  (require('node:worker_threads') as typeof WorkerThreads).threadId;

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
    // The thread too: both threads of a two-thread run (parallel.ts) may write the same cache at exit.
    const temp = `${file}.${process.pid}-${threadId()}.tmp`;
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
