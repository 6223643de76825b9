#!/usr/bin/env node
/**
 * Provisions the CEL conformance data (the `simple` suite's textproto files of the Go module cel.dev/expr)
 * that runtime/test/cel-conformance.test.ts runs through kubesmith's CEL engine. The module comes from the
 * Go module proxy (GOPROXY's first proxy, else https://proxy.golang.org), bounded in time and size, and is
 * checked against the go.sum hash pinned below before anything of it is kept; only
 * tests/simple/testdata/*.textproto is extracted, into a staging directory of the cache renamed into place:
 *
 *   $XDG_CACHE_HOME/kubesmith/cel-conformance/<version>/   (default ~/.cache/kubesmith/cel-conformance/<version>/)
 *
 * The version is the one kube-apiserver 1.37's go.mod pins (k8s.io/kubernetes v1.37.2: cel.dev/expr
 * v0.25.1), the data its cel-go was tested against. To refresh it: set CEL_EXPR_VERSION to the version the
 * new go.mod pins and CEL_EXPR_HASH to that version's `h1:` line of go.sum (or of
 * https://sum.golang.org/lookup/cel.dev/expr@<version>), run `npm run cel-conformance`, then the test.
 *
 * Without network it prints why and exits 0 (the conformance test then fails with the same hint), but
 * under CI=true (or KUBESMITH_REQUIRE_ENVTEST=1) it exits 1.
 */
import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { inflateRawSync } from 'node:zlib';

export const CEL_EXPR_MODULE = 'cel.dev/expr';
export const CEL_EXPR_VERSION = 'v0.25.1';
/** go.sum's hash of the module zip (Go's dirhash "h1"), as sum.golang.org records it. */
export const CEL_EXPR_HASH = 'h1:1KrZg61W6TWSxuNZ37Xy49ps13NUovb66QLprthtwi4=';

const DEFAULT_PROXY = 'https://proxy.golang.org';
/** The module zip is ~240 KB; anything much bigger is not it. */
const MAX_ZIP_BYTES = 16 * 1024 * 1024;
const MAX_FILE_BYTES = 4 * 1024 * 1024;
const DOWNLOAD_TIMEOUT_MS = 60_000;
const TESTDATA = 'tests/simple/testdata/';

export class ConformanceDataError extends Error {
  constructor(message, hint) {
    super(message);
    this.name = 'ConformanceDataError';
    this.hint = hint;
  }
}

const NETWORK_HINT =
  'check that the Go module proxy is reachable (GOPROXY, default https://proxy.golang.org), then run `npm run cel-conformance`';

export function conformanceCachePath(env = process.env) {
  const xdg = env.XDG_CACHE_HOME;
  const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(env.HOME || os.homedir(), '.cache');
  return path.join(base, 'kubesmith', 'cel-conformance', CEL_EXPR_VERSION);
}

/**
 * The proxies GOPROXY lists, in order, up to `direct` or `off` (kubesmith does not fetch from version
 * control). Go's list separators: `,` (next only on 404/410) and `|` (next on any error); both are read as
 * "try the next one" here, which only ever tries more.
 */
export function proxies(env = process.env) {
  const list = env.GOPROXY === undefined || env.GOPROXY.trim() === '' ? DEFAULT_PROXY : env.GOPROXY;
  const out = [];
  for (const entry of list.split(/[,|]/).map((e) => e.trim())) {
    if (entry === '') continue;
    if (entry === 'direct' || entry === 'off') break;
    const url = new URL(entry.includes('://') ? entry : `https://${entry}`);
    if (url.protocol !== 'https:' && url.protocol !== 'http:' && url.protocol !== 'file:')
      throw new ConformanceDataError(`GOPROXY entry ${entry} is not an http(s) or file URL`, 'fix GOPROXY');
    out.push(url);
  }
  if (out.length === 0)
    throw new ConformanceDataError(
      `GOPROXY=${env.GOPROXY} names no module proxy (only direct or off)`,
      `set GOPROXY to a module proxy (e.g. ${DEFAULT_PROXY}) to fetch ${CEL_EXPR_MODULE}`,
    );
  return out;
}

/** A module path as the proxy protocol spells it: upper-case letters as `!` and the lower-case one. */
const escapePath = (p) => p.replace(/[A-Z]/g, (c) => `!${c.toLowerCase()}`);

async function download(url) {
  if (url.protocol === 'file:') {
    const { readFileSync, statSync } = await import('node:fs');
    if (statSync(url).size > MAX_ZIP_BYTES) throw new Error(`${url.href} is over ${MAX_ZIP_BYTES} bytes`);
    return readFileSync(url);
  }
  const response = await globalThis.fetch(url, {
    signal: globalThis.AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS),
    redirect: 'follow',
  });
  if (!response.ok) throw new Error(`${url.href}: HTTP ${response.status}`);
  if (new URL(response.url).protocol !== url.protocol && url.protocol === 'https:')
    throw new Error(`${url.href} redirected to ${response.url}, off https`);
  const declared = Number(response.headers.get('content-length') ?? 0);
  if (declared > MAX_ZIP_BYTES) throw new Error(`${url.href} is ${declared} bytes, over ${MAX_ZIP_BYTES}`);
  const chunks = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += chunk.length;
    if (size > MAX_ZIP_BYTES) throw new Error(`${url.href} is over ${MAX_ZIP_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** The files of a zip (no zip64, no encryption: a Go module zip is neither), by name. */
export function readZip(zip) {
  let end = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 22 - 0xffff); i--) {
    if (zip.readUInt32LE(i) === 0x06054b50) {
      end = i;
      break;
    }
  }
  if (end < 0) throw new Error('not a zip file (no end of central directory)');
  const count = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  const files = new Map();
  let total = 0;
  for (let n = 0; n < count; n++) {
    if (at + 46 > zip.length || zip.readUInt32LE(at) !== 0x02014b50)
      throw new Error('corrupt zip central directory');
    const flags = zip.readUInt16LE(at + 8);
    const method = zip.readUInt16LE(at + 10);
    const compressed = zip.readUInt32LE(at + 20);
    const size = zip.readUInt32LE(at + 24);
    const nameLength = zip.readUInt16LE(at + 28);
    const skip = zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
    const local = zip.readUInt32LE(at + 42);
    const name = zip.subarray(at + 46, at + 46 + nameLength).toString('utf8');
    at += 46 + nameLength + skip;
    if (flags & 1) throw new Error(`${name}: encrypted zip entry`);
    if (size > MAX_FILE_BYTES || (total += size) > MAX_ZIP_BYTES * 4) throw new Error(`${name}: too large`);
    if (local + 30 > zip.length || zip.readUInt32LE(local) !== 0x04034b50)
      throw new Error(`${name}: corrupt local header`);
    const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const raw = zip.subarray(start, start + compressed);
    if (raw.length !== compressed) throw new Error(`${name}: truncated`);
    let data;
    if (method === 0) data = raw;
    else if (method === 8) data = inflateRawSync(raw, { maxOutputLength: MAX_FILE_BYTES });
    else throw new Error(`${name}: unsupported zip compression method ${method}`);
    if (data.length !== size) throw new Error(`${name}: size mismatch`);
    if (files.has(name)) throw new Error(`${name}: twice in the zip`);
    files.set(name, data);
  }
  return files;
}

/** Go's dirhash.Hash1 of a module zip's files: what go.sum records. */
export function hash1(files) {
  const summary = [...files.keys()]
    .sort()
    .map((name) => {
      if (name.includes('\n')) throw new Error(`file name with a newline: ${JSON.stringify(name)}`);
      return `${createHash('sha256').update(files.get(name)).digest('hex')}  ${name}\n`;
    })
    .join('');
  return `h1:${createHash('sha256').update(summary).digest('base64')}`;
}

/**
 * The directory holding the conformance textproto files, downloading and verifying them first when the
 * cache lacks them.
 */
export async function ensureConformanceData(env = process.env, log = () => {}) {
  const dir = conformanceCachePath(env);
  if (existsSync(path.join(dir, '.complete'))) return dir;
  const file = `${escapePath(CEL_EXPR_MODULE)}/@v/${CEL_EXPR_VERSION}.zip`;
  const failures = [];
  let zip;
  for (const proxy of proxies(env)) {
    const url = new URL(`${proxy.href.replace(/\/?$/, '/')}${file}`);
    try {
      log(`cel-conformance: downloading ${url.href}`);
      zip = await download(url);
      break;
    } catch (error) {
      failures.push(error instanceof Error ? error.message : String(error));
    }
  }
  if (!zip)
    throw new ConformanceDataError(
      `could not download ${CEL_EXPR_MODULE}@${CEL_EXPR_VERSION}: ${failures.join('; ')}`,
      NETWORK_HINT,
    );
  let files;
  try {
    files = readZip(zip);
  } catch (error) {
    throw new ConformanceDataError(
      `${CEL_EXPR_MODULE}@${CEL_EXPR_VERSION} from the proxy is not a readable zip: ${error.message}`,
      NETWORK_HINT,
    );
  }
  const got = hash1(files);
  if (got !== CEL_EXPR_HASH)
    throw new ConformanceDataError(
      `${CEL_EXPR_MODULE}@${CEL_EXPR_VERSION} from the proxy hashes to ${got}, not the pinned ${CEL_EXPR_HASH}`,
      'the proxy served other bytes than the checksum database records: use another GOPROXY',
    );
  const prefix = `${CEL_EXPR_MODULE}@${CEL_EXPR_VERSION}/${TESTDATA}`;
  const parent = path.dirname(dir);
  mkdirSync(parent, { recursive: true });
  const staging = mkdtempSync(path.join(parent, '.download-'));
  try {
    let kept = 0;
    for (const [name, data] of files) {
      const base = name.slice(prefix.length);
      if (!name.startsWith(prefix) || !/^[a-z0-9_]+\.textproto$/.test(base)) continue;
      writeFileSync(path.join(staging, base), data);
      kept++;
    }
    if (kept === 0)
      throw new ConformanceDataError(
        `${CEL_EXPR_MODULE}@${CEL_EXPR_VERSION} holds no ${TESTDATA}*.textproto`,
        'pin a version that has the simple suite',
      );
    writeFileSync(
      path.join(staging, '.complete'),
      `${CEL_EXPR_MODULE}@${CEL_EXPR_VERSION} ${CEL_EXPR_HASH}\n`,
    );
    rmSync(dir, { recursive: true, force: true });
    // rename(2) is atomic: a concurrent run sees no data or all of it.
    renameSync(staging, dir);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return dir;
}

function required(env) {
  for (const value of [env.KUBESMITH_REQUIRE_ENVTEST, env.CI]) {
    if (value === undefined || value === '') continue;
    return !['0', 'false', 'no'].includes(value.toLowerCase());
  }
  return false;
}

async function main() {
  try {
    const dir = await ensureConformanceData(process.env, (line) => console.error(line));
    console.error(`cel-conformance ${CEL_EXPR_MODULE}@${CEL_EXPR_VERSION}: ${dir}`);
  } catch (error) {
    const strict = required(process.env);
    console.error(`${strict ? 'error' : 'skip'}: ${error.message}\nhint: ${error.hint ?? NETWORK_HINT}`);
    process.exit(strict ? 1 : 0);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) await main();
