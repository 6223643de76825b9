/**
 * Which envtest release index kubesmith reads, and where that index may send it. The index names the
 * archives and the SHA-512 digests that check them, so whoever can change it (a pull request that edits an
 * index in the repository, anyone on the network to a plain http server) chooses the binaries run next:
 * - the index comes over https: or from disk (a path or a file: URL); plain http: only with
 *   --allow-insecure-index, since anyone on the way could then swap an archive and its digest together;
 * - its links keep its class: an index on a server links to https: URLs only (never to a file on this
 *   machine), an index on disk to files in its own directory (or below) or to https: URLs; plain http:
 *   links only with --allow-insecure-index;
 * - an archive, and every redirect on its way, may reach an internal address (loopback, link-local such as
 *   the cloud metadata service at 169.254.169.254, a private network) only when the index itself came from
 *   an address of the same kind: an index on the internet cannot aim requests at services only this machine
 *   or its network can reach, while a mirror on a private network keeps its archives beside it.
 */
import { realpath } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { refusedArchive, refusedIndex, type Message } from './messages.js';

/** kubesmith will not read this index or fetch this archive; not worth a retry, nor a fallback to a build. */
export class Refused extends Error {
  readonly hint: string;

  constructor({ message, hint }: Message) {
    super(message);
    this.name = 'Refused';
    this.hint = hint;
  }
}

/** Throws Refused unless the index location is https:, file:, or http: with --allow-insecure-index. */
export function checkIndexUrl(url: URL, allowInsecure: boolean): void {
  if (url.protocol === 'https:' || url.protocol === 'file:') return;
  if (url.protocol === 'http:' && allowInsecure) return;
  throw new Refused(refusedIndex(url.href, url.protocol));
}

/**
 * Throws Refused when the index at `index` may not link to the archive `name` at `archive`: by scheme, and
 * for an index on disk, by place (its directory or below; symbolic links are checked by checkLocalArchive).
 */
export function checkArchiveLink(name: string, archive: URL, index: URL, allowInsecure: boolean): void {
  const refuse = (why: string, insecure = false): never => {
    throw new Refused(refusedArchive(name, index.href, why, insecure));
  };
  const onDisk = index.protocol === 'file:';
  switch (archive.protocol) {
    case 'https:':
      return;
    case 'http:':
      if (!allowInsecure) refuse(`it links to ${archive.href}, over plain http`, true);
      return;
    case 'file:':
      if (!onDisk)
        refuse(
          `it links to ${archive.href}, a file on this machine; an index on a server links to https: URLs only`,
        );
      {
        const file = localPath(archive);
        if (file === undefined) refuse(`it links to ${archive.href}, a file on another host`);
        else if (!isInside(file, path.dirname(fileURLToPath(index))))
          refuse(`it links to ${file}, outside the index's directory`);
      }
      return;
    default:
      refuse(
        `it links to ${archive.href}; an archive link is an https: URL${onDisk ? ' or a file beside the index' : ''}`,
      );
  }
}

/**
 * For an index on disk: throws Refused when the archive file, once symbolic links are resolved, is outside
 * the index's directory (also resolved). A missing file is left for the download to report.
 */
export async function checkLocalArchive(name: string, archive: URL, index: URL): Promise<void> {
  let file: string;
  try {
    file = await realpath(fileURLToPath(archive));
  } catch {
    return;
  }
  const dir = await realpath(path.dirname(fileURLToPath(index)));
  if (!isInside(file, dir))
    throw new Refused(
      refusedArchive(
        name,
        index.href,
        `${fileURLToPath(archive)} leads to ${file}, outside the index's directory`,
        false,
      ),
    );
}

/** The path of a file: URL on this machine; undefined for one naming another host (`file://server/x`). */
function localPath(url: URL): string | undefined {
  try {
    return fileURLToPath(url);
  } catch {
    return undefined;
  }
}

function isInside(file: string, dir: string): boolean {
  const relative = path.relative(dir, file);
  return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative);
}

export type AddressZone = 'public' | 'private-network' | 'loopback' | 'link-local';

const ZONES: [AddressZone, net.BlockList][] = [
  // 0.0.0.0 and :: reach this machine too.
  ['loopback', blockList(['127.0.0.0/8', '0.0.0.0/8'], ['::1/128', '::/128'])],
  ['link-local', blockList(['169.254.0.0/16'], ['fe80::/10'])],
  [
    'private-network',
    blockList(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10'], ['fc00::/7', 'fec0::/10']),
  ],
];

function blockList(ipv4: string[], ipv6: string[]): net.BlockList {
  const list = new net.BlockList();
  for (const [type, subnets] of [
    ['ipv4', ipv4],
    ['ipv6', ipv6],
  ] as const)
    for (const subnet of subnets) {
      const [address = '', prefix = ''] = subnet.split('/');
      list.addSubnet(address, Number(prefix), type);
    }
  return list;
}

/** The kind of network `ip` is on (IPv4-mapped IPv6 addresses count as their IPv4 address). */
export function addressZone(ip: string): AddressZone {
  const type = net.isIPv6(ip) ? 'ipv6' : 'ipv4';
  return ZONES.find(([, list]) => list.check(ip, type))?.[0] ?? 'public';
}

/**
 * The address rule for the archives of an index that came from `indexAddress` (undefined: from disk): a
 * function saying what `ip` is when a connection to it is refused (`a loopback address, and ...`), or
 * undefined when it is allowed.
 */
export function archiveAddressRule(indexAddress: string | undefined): (ip: string) => string | undefined {
  const home = indexAddress === undefined ? undefined : addressZone(indexAddress);
  return (ip) => {
    const zone = addressZone(ip);
    if (zone === 'public' || zone === home) return undefined;
    const from = home === undefined ? 'is on disk' : `came from a ${home} address`;
    return `a ${zone} address, and the index ${from}`;
  };
}
