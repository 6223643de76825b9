/**
 * Downloads the prebuilt envtest binaries as setup-envtest does: find the archive for a version and platform
 * in the envtest release index, stream it into the staging directory while computing its SHA-512, compare
 * with the index's digest, and only then unpack `controller-tools/envtest/{etcd,kube-apiserver,kubectl}`.
 * Where the index may come from and where its links may lead is trust.ts's rule, applied here to each
 * request. Making the cache entry from the staging directory (verify, rename, cleanup) is resolve.ts's job.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { FetchError, fetchUrl, RefusedFetch, type FetchOptions } from './http.js';
import {
  archiveName,
  envtestPlatform,
  IndexError,
  loadIndex,
  nearbyVersions,
  pickArchive,
  type ArchiveRef,
} from './index-file.js';
import { insecureArchive, insecureIndex, refusedArchive } from './messages.js';
import { readTar, TarError } from './tar.js';
import { archiveAddressRule, checkArchiveLink, checkIndexUrl, checkLocalArchive, Refused } from './trust.js';
import { BINARIES } from './versions.js';

/** Bounds: today's archives are ~70 MB packed, ~200 MB unpacked (kube-apiserver is the largest). */
const MAX_ARCHIVE_BYTES = 1024 * 1024 * 1024;
const TAR_LIMITS = {
  maxEntryBytes: 1024 * 1024 * 1024,
  maxTotalBytes: 3 * 1024 * 1024 * 1024,
  maxEntries: 10_000,
};
/** The directory inside the archive that holds the binaries. */
const ARCHIVE_DIR = 'controller-tools/envtest';

export interface DownloadContext {
  version: string;
  indexUrl: URL;
  /** Default: this machine's, in Go's names. */
  platform?: { os: string; arch: string };
  /** Timeouts and retries of each request. Default: http.ts's. */
  fetch?: Omit<FetchOptions, 'maxBytes' | 'addressRule'>;
  /** --allow-insecure-index: plain http for the index and the archives (each says so in a warning). */
  allowInsecure?: boolean;
  /** One line per step, and a progress line every few seconds. */
  progress: (line: string) => void;
  /** A warning line. Default: progress. */
  warn?: (line: string) => void;
  /** On a terminal: a status line that replaces the previous one ('' clears it). */
  transient?: (line: string) => void;
}

/** Why the download did not happen; `message` is one line. */
export class DownloadError extends Error {
  constructor(
    message: string,
    /** unreachable: no index (network); invalid: the index is not one; missing: no archive for the version. */
    readonly kind: 'unreachable' | 'invalid' | 'missing' | 'failed',
    /** For `missing`: versions the index does have, nearest first. */
    readonly nearby: string[] = [],
  ) {
    super(message);
    this.name = 'DownloadError';
  }
}

/** An archive as the index names it, with what the index allows the download to reach. */
export interface LocatedArchive extends ArchiveRef {
  /** The index's location: an archive on disk must be in its directory. */
  indexUrl: URL;
  /** Why the download may not connect to an IP address (see trust.ts), or undefined. */
  addressRule: (ip: string) => string | undefined;
}

/**
 * Reads the index and finds the archive; throws a DownloadError saying why not, or Refused when the
 * index's link for it breaks trust.ts's rules.
 */
export async function locateArchive(context: DownloadContext): Promise<LocatedArchive> {
  const platform = context.platform ?? envtestPlatform();
  // resolve.ts checked the location up front already; here too, where the request is made.
  checkIndexUrl(context.indexUrl, context.allowInsecure ?? false);
  if (context.indexUrl.protocol === 'http:')
    (context.warn ?? context.progress)(insecureIndex(context.indexUrl.href));
  try {
    const index = await loadIndex(context.indexUrl, context.fetch);
    const archive = pickArchive(index, context.version, platform);
    if (!archive) {
      const nearby = nearbyVersions(index, context.version, platform);
      throw new DownloadError(
        `the envtest release index ${context.indexUrl.href} has no ${archiveName(context.version, platform)}`,
        'missing',
        nearby,
      );
    }
    checkArchiveLink(archive.name, archive.url, index.url, context.allowInsecure ?? false);
    return { ...archive, indexUrl: index.url, addressRule: archiveAddressRule(index.address) };
  } catch (error) {
    if (error instanceof IndexError) throw new DownloadError(error.message, error.kind);
    throw error;
  }
}

/** Downloads `archive`, checks its SHA-512, and unpacks the three binaries into the empty directory `outDir`. */
export async function downloadArchive(
  archive: LocatedArchive,
  outDir: string,
  context: DownloadContext,
): Promise<void> {
  const file = path.join(outDir, '.archive.tar.gz');
  const started = Date.now();
  const digest = await fetchInto(archive, file, context);
  if (digest !== archive.sha512)
    throw new DownloadError(
      `the SHA-512 of ${archive.name} from ${archive.url.href} is ${digest.slice(0, 16)}..., ` +
        `the index says ${archive.sha512.slice(0, 16)}...`,
      'failed',
    );
  context.progress(`  ${archive.name}: SHA-512 verified (${seconds(Date.now() - started)}); unpacking`);
  await unpack(archive.name, file, outDir);
  await rm(file, { force: true });
}

/** Streams the archive into `file`, hashing on the way; returns the hex SHA-512. */
async function fetchInto(archive: LocatedArchive, file: string, context: DownloadContext): Promise<string> {
  const hash = createHash('sha512');
  let meter: Meter | undefined;
  if (archive.url.protocol === 'file:') await checkLocalArchive(archive.name, archive.url, archive.indexUrl);
  if (archive.url.protocol === 'http:')
    (context.warn ?? context.progress)(
      insecureArchive(archive.name, archive.url.href, archive.indexUrl.protocol !== 'http:'),
    );
  try {
    const { body, size } = await fetchUrl(archive.url, {
      ...context.fetch,
      maxBytes: MAX_ARCHIVE_BYTES,
      addressRule: archive.addressRule,
    });
    context.progress(
      `downloading ${archive.name}${size !== undefined ? ` (${megabytes(size)})` : ''} from ${archive.url.href}`,
    );
    const current = new Meter(size, context);
    meter = current;
    await pipeline(
      body,
      async function* (chunks: AsyncIterable<Buffer>) {
        for await (const chunk of chunks) {
          hash.update(chunk);
          current.add(chunk.length);
          yield chunk;
        }
      },
      createWriteStream(file, { flags: 'wx' }),
    );
  } catch (error) {
    if (error instanceof RefusedFetch)
      throw new Refused(refusedArchive(archive.name, archive.indexUrl.href, error.message, false));
    if (error instanceof FetchError)
      throw new DownloadError(`downloading ${archive.name} failed: ${error.message}`, 'failed');
    throw error;
  } finally {
    meter?.done();
  }
  return hash.digest('hex');
}

async function unpack(name: string, file: string, outDir: string): Promise<void> {
  const wanted = new Map<string, string>(BINARIES.map((binary) => [`${ARCHIVE_DIR}/${binary}`, binary]));
  const found = new Set<string>();
  try {
    await pipeline(createReadStream(file), createGunzip(), (source: AsyncIterable<Buffer>) =>
      readTar(
        source,
        (entry) => {
          const binary = wanted.get(entry.path);
          if (!binary) return undefined;
          if (found.has(binary)) throw new TarError(`${entry.path} is in the archive twice`);
          found.add(binary);
          return path.join(outDir, binary);
        },
        TAR_LIMITS,
      ),
    );
  } catch (error) {
    // A verified archive that does not unpack: the index's digest belongs to a broken archive.
    if (error instanceof TarError || (error as NodeJS.ErrnoException).code?.startsWith('Z_'))
      throw new DownloadError(`${name} is not a valid tar.gz archive: ${(error as Error).message}`, 'failed');
    throw error;
  }
  const missing = BINARIES.filter((binary) => !found.has(binary));
  if (missing.length > 0)
    throw new DownloadError(
      `${name} lacks ${missing.map((m) => `${ARCHIVE_DIR}/${m}`).join(', ')}`,
      'failed',
    );
}

/** Progress of one download: a line every 5 s, or on a terminal a status line updated a few times a second. */
class Meter {
  private received = 0;
  private last = Date.now();

  constructor(
    private readonly size: number | undefined,
    private readonly context: DownloadContext,
  ) {}

  add(bytes: number): void {
    this.received += bytes;
    const now = Date.now();
    if (now - this.last < (this.context.transient ? 250 : 5_000)) return;
    this.last = now;
    const text = `${megabytes(this.received)}${this.size ? ` of ${megabytes(this.size)} (${Math.floor((100 * this.received) / this.size)}%)` : ''}`;
    if (this.context.transient) this.context.transient(`  ${text}`);
    else this.context.progress(`  ${text}`);
  }

  done(): void {
    this.context.transient?.('');
  }
}

function megabytes(bytes: number): string {
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
