/**
 * The envtest release index that controller-tools publishes (`envtest-releases.yaml`) and that
 * controller-runtime's setup-envtest reads:
 *
 * ```yaml
 * releases:
 *   v1.36.0:
 *     envtest-v1.36.0-linux-amd64.tar.gz:
 *       hash: <SHA-512 of the archive, hex>
 *       selfLink: <URL of the archive>
 * ```
 *
 * Each archive holds `controller-tools/envtest/{etcd,kube-apiserver,kubectl}`. This module finds the index
 * (flag, environment, default), reads it, and picks the archive for a version and platform.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse } from 'yaml';
import { fetchUrl, RefusedFetch, type FetchOptions } from './http.js';
import { refusedIndexRedirect } from './messages.js';
import { Refused } from './trust.js';

/** Where setup-envtest reads the index by default. */
export const DEFAULT_INDEX_URL =
  'https://raw.githubusercontent.com/kubernetes-sigs/controller-tools/HEAD/envtest-releases.yaml';

/** The environment variable that overrides the index location (mirrors, air-gapped machines). */
const INDEX_URL_VARIABLE = 'KUBESMITH_ENVTEST_INDEX_URL';

/** The index today is ~30 KB; anything near this is not an index. */
const MAX_INDEX_BYTES = 8 * 1024 * 1024;

export interface ArchiveRef {
  /** `envtest-v1.36.0-linux-amd64.tar.gz` */
  name: string;
  /** SHA-512 of the archive, lower-case hex. */
  sha512: string;
  /** Where to get it: `selfLink` resolved against the index URL (so relative links work). */
  url: URL;
}

export interface EnvtestIndex {
  url: URL;
  /** The IP address the index came from; undefined for an index on disk. */
  address: string | undefined;
  /** Archive name -> its hash and link, over all releases (setup-envtest matches on archive names too). */
  archives: Map<string, { hash: unknown; selfLink: unknown }>;
}

/** The index could not be read or is not an envtest release index. */
export class IndexError extends Error {
  constructor(
    message: string,
    readonly kind: 'unreachable' | 'invalid',
  ) {
    super(message);
    this.name = 'IndexError';
  }
}

/**
 * The index location: the `--index-url` flag, else $KUBESMITH_ENVTEST_INDEX_URL, else the default. A value
 * without a URL scheme is a path on disk, resolved against `cwd`.
 */
export function indexLocation(flag: string | undefined, env: NodeJS.ProcessEnv, cwd = process.cwd()): URL {
  const value = flag || env[INDEX_URL_VARIABLE] || DEFAULT_INDEX_URL;
  // Two letters or more before the colon: `C:\x` stays a path.
  if (/^[a-z][a-z0-9+.-]+:/i.test(value)) {
    try {
      return new URL(value);
    } catch {
      throw new IndexError(`the envtest index location "${value}" is not a valid URL`, 'invalid');
    }
  }
  return pathToFileURL(path.resolve(cwd, value));
}

/** Reads and parses the index at `url` (whose scheme trust.ts's checkIndexUrl has accepted). */
export async function loadIndex(
  url: URL,
  fetchOptions: Omit<FetchOptions, 'maxBytes' | 'addressRule'> = {},
): Promise<EnvtestIndex> {
  let text = '';
  let address: string | undefined;
  try {
    const fetched = await fetchUrl(url, { ...fetchOptions, maxBytes: MAX_INDEX_BYTES });
    address = fetched.address;
    const chunks: Buffer[] = [];
    for await (const chunk of fetched.body) chunks.push(chunk);
    text = Buffer.concat(chunks).toString('utf8');
  } catch (error) {
    if (error instanceof RefusedFetch) throw new Refused(refusedIndexRedirect(url.href, error.message));
    throw new IndexError(
      `cannot read the envtest release index ${url.href}: ${(error as Error).message}`,
      'unreachable',
    );
  }
  return parseIndex(text, url, address);
}

/** Parses index text; throws an IndexError naming the first problem. */
export function parseIndex(text: string, url: URL, address?: string): EnvtestIndex {
  const invalid = (detail: string): IndexError =>
    new IndexError(`the envtest release index ${url.href} does not parse: ${detail}`, 'invalid');
  let document: unknown;
  try {
    // No aliases: a few lines of YAML must not expand into gigabytes.
    document = parse(text, { maxAliasCount: 0, prettyErrors: false });
  } catch (error) {
    throw invalid((error as Error).message.split('\n')[0] ?? 'YAML error');
  }
  const releases = isMap(document) ? document['releases'] : undefined;
  if (!isMap(releases)) throw invalid('it has no "releases" mapping');
  const archives = new Map<string, { hash: unknown; selfLink: unknown }>();
  for (const [version, release] of Object.entries(releases)) {
    if (!isMap(release)) throw invalid(`releases.${version} is not a mapping of archives`);
    for (const [name, archive] of Object.entries(release)) {
      if (!isMap(archive))
        throw invalid(`releases.${version}.${name} is not a mapping with hash and selfLink`);
      archives.set(name, { hash: archive['hash'], selfLink: archive['selfLink'] });
    }
  }
  return { url, address, archives };
}

/** setup-envtest's operating system and architecture names for this machine (Go's GOOS/GOARCH). */
export function envtestPlatform(
  platform: NodeJS.Platform = process.platform,
  arch: string = process.arch,
): { os: string; arch: string } {
  const goArch: Record<string, string> = { x64: 'amd64', arm64: 'arm64', ppc64: 'ppc64le', s390x: 's390x' };
  return { os: platform === 'win32' ? 'windows' : platform, arch: goArch[arch] ?? arch };
}

export function archiveName(version: string, platform: { os: string; arch: string }): string {
  return `envtest-v${version}-${platform.os}-${platform.arch}.tar.gz`;
}

/** The archive for `version` on `platform`, or undefined when the index has none. */
export function pickArchive(
  index: EnvtestIndex,
  version: string,
  platform: { os: string; arch: string },
): ArchiveRef | undefined {
  const name = archiveName(version, platform);
  const entry = index.archives.get(name);
  if (!entry) return undefined;
  const invalid = (detail: string): IndexError =>
    new IndexError(
      `the envtest release index ${index.url.href} does not parse: ${name} ${detail}`,
      'invalid',
    );
  if (typeof entry.hash !== 'string' || !/^[0-9a-f]{128}$/i.test(entry.hash))
    throw invalid('has no "hash" that is a SHA-512 hex digest');
  if (typeof entry.selfLink !== 'string' || entry.selfLink === '') throw invalid('has no "selfLink"');
  let url: URL;
  try {
    url = new URL(entry.selfLink, index.url);
  } catch {
    throw invalid(`has a selfLink that is not a URL: ${entry.selfLink}`);
  }
  return { name, sha512: entry.hash.toLowerCase(), url };
}

/**
 * Up to `count` versions the index offers for `platform`, nearest to `version` first (same minor, then the
 * neighbouring minors), for an error message.
 */
export function nearbyVersions(
  index: EnvtestIndex,
  version: string,
  platform: { os: string; arch: string },
  count = 5,
): string[] {
  const suffix = `-${platform.os}-${platform.arch}.tar.gz`;
  const [major = 0, minor = 0, patch = 0] = version.split('.').map(Number);
  const found: { version: string; distance: number }[] = [];
  for (const name of index.archives.keys()) {
    if (!name.endsWith(suffix)) continue;
    // Releases only: `envtest-v1.31.0-beta.0-...` does not match.
    const match = /^envtest-v(\d+)\.(\d+)\.(\d+)$/.exec(name.slice(0, -suffix.length));
    if (!match) continue;
    const [ma, mi, pa] = match.slice(1).map(Number) as [number, number, number];
    const distance = Math.abs(ma - major) * 1e6 + Math.abs(mi - minor) * 1e3 + Math.abs(pa - patch);
    found.push({ version: `${ma}.${mi}.${pa}`, distance });
  }
  return found
    .sort((a, b) => a.distance - b.distance)
    .slice(0, count)
    .map((f) => f.version);
}

function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
