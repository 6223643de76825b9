import { describe, expect, it } from 'vitest';
import {
  DEFAULT_INDEX_URL,
  envtestPlatform,
  IndexError,
  indexLocation,
  nearbyVersions,
  parseIndex,
  pickArchive,
} from '../../src/envtest/index-file.js';

const HASH = 'a1'.repeat(64);
const LINUX = { os: 'linux', arch: 'amd64' };
const url = new URL('https://mirror.example.com/envtest/envtest-releases.yaml');

/** As controller-tools publishes it (hack/envtest/update-envtest-releases.sh). */
const SAMPLE = `releases:
  v1.30.0:
    envtest-v1.30.0-linux-amd64.tar.gz:
      hash: ${HASH}
      selfLink: https://github.com/kubernetes-sigs/controller-tools/releases/download/envtest-v1.30.0/envtest-v1.30.0-linux-amd64.tar.gz
    envtest-v1.30.0-darwin-arm64.tar.gz:
      hash: ${HASH}
      selfLink: https://github.com/kubernetes-sigs/controller-tools/releases/download/envtest-v1.30.0/envtest-v1.30.0-darwin-arm64.tar.gz
  v1.29.4:
    envtest-v1.29.4-linux-amd64.tar.gz:
      hash: ${HASH.toUpperCase()}
      selfLink: archives/envtest-v1.29.4-linux-amd64.tar.gz
  v1.31.0-beta.0:
    envtest-v1.31.0-beta.0-linux-amd64.tar.gz:
      hash: ${HASH}
      selfLink: x.tar.gz
  v1.28.0:
    envtest-v1.28.0-linux-amd64.tar.gz:
      hash: not-a-digest
      selfLink: x.tar.gz
`;

describe('indexLocation', () => {
  it('takes --index-url, else KUBESMITH_ENVTEST_INDEX_URL, else controller-tools’ index', () => {
    const env = { KUBESMITH_ENVTEST_INDEX_URL: 'https://env.example.com/i.yaml' };
    expect(indexLocation('https://flag.example.com/i.yaml', env).href).toBe(
      'https://flag.example.com/i.yaml',
    );
    expect(indexLocation(undefined, env).href).toBe('https://env.example.com/i.yaml');
    expect(indexLocation(undefined, {}).href).toBe(DEFAULT_INDEX_URL);
    expect(DEFAULT_INDEX_URL).toBe(
      'https://raw.githubusercontent.com/kubernetes-sigs/controller-tools/HEAD/envtest-releases.yaml',
    );
  });

  it('reads a plain path as a file on disk, relative to the working directory', () => {
    expect(indexLocation('mirror/index.yaml', {}, '/work/p').href).toBe('file:///work/p/mirror/index.yaml');
    expect(indexLocation('/srv/index.yaml', {}, '/work/p').href).toBe('file:///srv/index.yaml');
    expect(indexLocation('file:///srv/index.yaml', {}).href).toBe('file:///srv/index.yaml');
  });

  it('refuses a URL that does not parse', () => {
    expect(() => indexLocation('https://[bad', {})).toThrow(
      new IndexError('the envtest index location "https://[bad" is not a valid URL', 'invalid'),
    );
  });
});

describe('parseIndex and pickArchive', () => {
  const index = parseIndex(SAMPLE, url);

  it('picks the archive by version, OS and architecture, with an absolute selfLink as it is', () => {
    expect(pickArchive(index, '1.30.0', LINUX)).toEqual({
      name: 'envtest-v1.30.0-linux-amd64.tar.gz',
      sha512: HASH,
      url: new URL(
        'https://github.com/kubernetes-sigs/controller-tools/releases/download/envtest-v1.30.0/envtest-v1.30.0-linux-amd64.tar.gz',
      ),
    });
    expect(pickArchive(index, '1.30.0', { os: 'darwin', arch: 'arm64' })?.name).toBe(
      'envtest-v1.30.0-darwin-arm64.tar.gz',
    );
    expect(pickArchive(index, '1.30.0', { os: 'linux', arch: 's390x' })).toBeUndefined();
    expect(pickArchive(index, '1.30.1', LINUX)).toBeUndefined();
  });

  it('resolves a relative selfLink against the index URL and lower-cases the digest', () => {
    expect(pickArchive(index, '1.29.4', LINUX)).toMatchObject({
      sha512: HASH,
      url: new URL('https://mirror.example.com/envtest/archives/envtest-v1.29.4-linux-amd64.tar.gz'),
    });
  });

  it('refuses an archive entry whose hash is not a SHA-512 hex digest', () => {
    expect(() => pickArchive(index, '1.28.0', LINUX)).toThrow(
      `the envtest release index ${url.href} does not parse: envtest-v1.28.0-linux-amd64.tar.gz has no "hash" that is a SHA-512 hex digest`,
    );
  });

  it.each([
    ['<html>Too Many Requests</html>', 'it has no "releases" mapping'],
    ['releases:\n  - v1.30.0\n', 'it has no "releases" mapping'],
    ['releases:\n  v1.30.0: [a, b]\n', 'releases.v1.30.0 is not a mapping of archives'],
    [
      'releases:\n  v1.30.0:\n    x.tar.gz: 3\n',
      'releases.v1.30.0.x.tar.gz is not a mapping with hash and selfLink',
    ],
  ])('refuses text that is not an envtest release index: %j', (text, detail) => {
    expect(() => parseIndex(text, url)).toThrow(
      `the envtest release index ${url.href} does not parse: ${detail}`,
    );
  });

  it('refuses YAML aliases (a few lines must not expand into gigabytes)', () => {
    const bomb = 'a: &a [x, x]\nb: &b [*a, *a]\nreleases: {}\n';
    expect(() => parseIndex(bomb, url)).toThrow(/does not parse: .*alias/i);
  });

  it('lists the versions nearest to a missing one, for this platform only, releases only', () => {
    expect(nearbyVersions(index, '1.29.9', LINUX)).toEqual(['1.29.4', '1.30.0', '1.28.0']);
    expect(nearbyVersions(index, '1.29.9', { os: 'darwin', arch: 'arm64' })).toEqual(['1.30.0']);
    expect(nearbyVersions(index, '1.29.9', LINUX, 1)).toEqual(['1.29.4']);
  });
});

describe('envtestPlatform', () => {
  it('names this machine as Go and setup-envtest do', () => {
    expect(envtestPlatform('linux', 'x64')).toEqual({ os: 'linux', arch: 'amd64' });
    expect(envtestPlatform('darwin', 'arm64')).toEqual({ os: 'darwin', arch: 'arm64' });
    expect(envtestPlatform('linux', 'ppc64')).toEqual({ os: 'linux', arch: 'ppc64le' });
    expect(envtestPlatform('win32', 'x64')).toEqual({ os: 'windows', arch: 'amd64' });
  });
});
