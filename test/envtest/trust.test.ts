import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  addressZone,
  archiveAddressRule,
  checkArchiveLink,
  checkIndexUrl,
  checkLocalArchive,
  Refused,
} from '../../src/envtest/trust.js';

const NAME = 'envtest-v1.36.3-linux-amd64.tar.gz';
const REMOTE = new URL('https://mirror.example.com/envtest/envtest-releases.yaml');
const LOCAL = new URL('file:///srv/mirror/envtest-releases.yaml');

function refusal(check: () => unknown): Refused {
  try {
    check();
  } catch (error) {
    expect(error).toBeInstanceOf(Refused);
    return error as Refused;
  }
  throw new Error('not refused');
}

describe('checkIndexUrl: where an index may come from', () => {
  it('accepts https: and files, and plain http: only with --allow-insecure-index', () => {
    expect(() => checkIndexUrl(REMOTE, false)).not.toThrow();
    expect(() => checkIndexUrl(LOCAL, false)).not.toThrow();
    const http = new URL('http://mirror.example.com/envtest-releases.yaml');
    const refused = refusal(() => checkIndexUrl(http, false));
    expect(refused.message).toBe(
      'refusing the envtest release index http://mirror.example.com/envtest-releases.yaml: it comes over plain ' +
        'http, so anyone on the way can change the binaries it names and the SHA-512 digests that check them',
    );
    expect(refused.hint).toBe(
      'point --index-url (or KUBESMITH_ENVTEST_INDEX_URL) at an https: URL or a local path, or pass ' +
        '--allow-insecure-index if you trust the network to that server',
    );
    expect(() => checkIndexUrl(http, true)).not.toThrow();
  });

  it('refuses any other scheme, with or without the flag', () => {
    const ftp = new URL('ftp://mirror.example.com/envtest-releases.yaml');
    expect(refusal(() => checkIndexUrl(ftp, true)).message).toBe(
      'refusing the envtest release index ftp://mirror.example.com/envtest-releases.yaml: an index is an ' +
        'https: URL or a local path, not ftp:',
    );
  });
});

describe('checkArchiveLink: an index’s links keep its class', () => {
  const link = (selfLink: string, index: URL) => new URL(selfLink, index);

  it('lets an index on a server link to https: URLs only: no file, no plain http', () => {
    expect(() => checkArchiveLink(NAME, link(`archives/${NAME}`, REMOTE), REMOTE, false)).not.toThrow();
    const file = refusal(() => checkArchiveLink(NAME, link('file:///etc/shadow', REMOTE), REMOTE, true));
    expect(file.message).toBe(
      `refusing ${NAME} from the envtest release index ${REMOTE.href}: it links to file:///etc/shadow, a file ` +
        'on this machine; an index on a server links to https: URLs only',
    );
    expect(file.hint).toContain(`fix the index's selfLink for ${NAME}`);
    const http = refusal(() =>
      checkArchiveLink(NAME, link(`http://mirror.example.com/${NAME}`, REMOTE), REMOTE, false),
    );
    expect(http.message).toContain(`it links to http://mirror.example.com/${NAME}, over plain http`);
    expect(http.hint).toContain('--allow-insecure-index');
    expect(() =>
      checkArchiveLink(NAME, link(`http://mirror.example.com/${NAME}`, REMOTE), REMOTE, true),
    ).not.toThrow();
  });

  it('lets an index on disk link to files in its directory or below, or to https: URLs', () => {
    expect(() => checkArchiveLink(NAME, link(`archives/${NAME}`, LOCAL), LOCAL, false)).not.toThrow();
    expect(() =>
      checkArchiveLink(NAME, link(`https://example.com/${NAME}`, LOCAL), LOCAL, false),
    ).not.toThrow();
    expect(
      refusal(() => checkArchiveLink(NAME, link('file://server/x', LOCAL), LOCAL, true)).message,
    ).toMatch(/: it links to file:\/\/server\/x, a file on another host$/);
    for (const outside of ['../../home/me/.ssh/id_ed25519', 'file:///etc/shadow', '/srv/mirror2/x'])
      expect(refusal(() => checkArchiveLink(NAME, link(outside, LOCAL), LOCAL, true)).message).toMatch(
        /, outside the index's directory$/,
      );
    expect(
      refusal(() => checkArchiveLink(NAME, link('ftp://example.com/x', LOCAL), LOCAL, true)).message,
    ).toBe(
      `refusing ${NAME} from the envtest release index ${LOCAL.href}: it links to ftp://example.com/x; an ` +
        'archive link is an https: URL or a file beside the index',
    );
  });
});

describe('checkLocalArchive', () => {
  let tmp: string;
  beforeEach(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-trust-test-'));
  });
  afterEach(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('refuses a file in the index’s directory that is a symbolic link to one outside', async () => {
    await mkdir(path.join(tmp, 'mirror'));
    await writeFile(path.join(tmp, 'secret'), 'not an archive');
    await writeFile(path.join(tmp, 'mirror', 'real.tar.gz'), 'archive');
    await symlink(path.join(tmp, 'secret'), path.join(tmp, 'mirror', NAME));
    const index = pathToFileURL(path.join(tmp, 'mirror', 'envtest-releases.yaml'));
    await expect(checkLocalArchive(NAME, new URL(NAME, index), index)).rejects.toThrow(
      `refusing ${NAME} from the envtest release index ${index.href}: ${path.join(tmp, 'mirror', NAME)} leads ` +
        `to ${path.join(tmp, 'secret')}, outside the index's directory`,
    );
    await expect(checkLocalArchive(NAME, new URL('real.tar.gz', index), index)).resolves.toBeUndefined();
  });
});

describe('archiveAddressRule: no internal address unless the index came from one of that kind', () => {
  it('tells the kinds of address apart, IPv4-mapped IPv6 as IPv4', () => {
    expect(addressZone('140.82.112.3')).toBe('public');
    expect(addressZone('2606:4700::1')).toBe('public');
    for (const ip of ['127.0.0.1', '127.1.2.3', '::1', '0.0.0.0', '::', '::ffff:127.0.0.1'])
      expect(addressZone(ip), ip).toBe('loopback');
    for (const ip of ['169.254.169.254', 'fe80::1', '::ffff:a9fe:a9fe'])
      expect(addressZone(ip), ip).toBe('link-local');
    for (const ip of ['10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.1.1', '100.64.0.1', 'fd00::1'])
      expect(addressZone(ip), ip).toBe('private-network');
    expect(addressZone('172.32.0.1')).toBe('public');
  });

  it('refuses internal addresses for the archives of a public index or of one on disk', () => {
    const rule = archiveAddressRule('140.82.112.3');
    expect(rule('185.199.108.133')).toBeUndefined();
    expect(rule('169.254.169.254')).toBe('a link-local address, and the index came from a public address');
    expect(rule('127.0.0.1')).toBe('a loopback address, and the index came from a public address');
    expect(rule('10.1.2.3')).toBe('a private-network address, and the index came from a public address');
    expect(archiveAddressRule(undefined)('127.0.0.1')).toBe('a loopback address, and the index is on disk');
  });

  it('lets a mirror on a private network (or this machine) keep its archives beside it', () => {
    expect(archiveAddressRule('10.0.0.5')('10.0.0.6')).toBeUndefined();
    expect(archiveAddressRule('10.0.0.5')('140.82.112.3')).toBeUndefined();
    expect(archiveAddressRule('10.0.0.5')('169.254.169.254')).toBe(
      'a link-local address, and the index came from a private-network address',
    );
    expect(archiveAddressRule('127.0.0.1')('::1')).toBeUndefined();
  });
});
