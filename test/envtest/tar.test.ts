import { mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readTar, TarError, type TarEntry, type TarLimits } from '../../src/envtest/tar.js';
import { END, file, header, pax } from './tar-helpers.js';

const LIMITS: TarLimits = { maxEntryBytes: 1024, maxTotalBytes: 4096, maxEntries: 20 };

let tmp: string;
beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-tar-test-'));
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** The archive in chunks of `chunk` bytes, so entries and headers straddle chunk boundaries. */
async function* chunks(archive: Buffer, chunk = 100): AsyncGenerator<Buffer> {
  for (let i = 0; i < archive.length; i += chunk) yield archive.subarray(i, i + chunk);
}

/** Reads `archive`, writing every regular file under tmp by its base name; returns the entries seen. */
async function unpackAll(archive: Buffer, limits = LIMITS): Promise<TarEntry[]> {
  const seen: TarEntry[] = [];
  await readTar(
    chunks(archive),
    (entry) => {
      seen.push(entry);
      return entry.type === 'file' ? path.join(tmp, path.basename(entry.path)) : undefined;
    },
    limits,
  );
  return seen;
}

describe('readTar', () => {
  it('reads files and directories, with names from ustar prefixes, pax records and GNU long names', async () => {
    const longName = `controller-tools/envtest/${'x'.repeat(120)}`;
    const archive = Buffer.concat([
      header('controller-tools/', 0, { type: '5' }),
      file('./controller-tools/envtest/etcd', 'etcd binary'),
      file('kubectl', 'kubectl binary', { prefix: 'controller-tools/envtest' }),
      pax({ path: 'controller-tools/envtest/kube-apiserver' }),
      file('truncated-name', 'apiserver binary'),
      file('././@LongLink', `${longName}\0`, { type: 'L' }),
      file(longName.slice(0, 100), 'long'),
      END,
    ]);
    const seen = await unpackAll(archive);
    expect(seen.map((e) => [e.path, e.type, e.size])).toEqual([
      ['controller-tools', 'directory', 0],
      ['controller-tools/envtest/etcd', 'file', 11],
      ['controller-tools/envtest/kubectl', 'file', 14],
      ['controller-tools/envtest/kube-apiserver', 'file', 16],
      [longName, 'file', 4],
    ]);
    expect(await readFile(path.join(tmp, 'kube-apiserver'), 'utf8')).toBe('apiserver binary');
    expect(((await stat(path.join(tmp, 'etcd'))).mode & 0o777).toString(8)).toBe('755');
  });

  it('skips what the caller does not want without writing it', async () => {
    const archive = Buffer.concat([file('a', 'aaa'), file('b', 'bbb'), END]);
    await readTar(chunks(archive), (entry) => (entry.path === 'b' ? path.join(tmp, 'b') : undefined), LIMITS);
    expect(await readdir(tmp)).toEqual(['b']);
  });

  it.each([
    ['../evil', 'the entry ../evil points outside the archive; refusing the archive'],
    [
      'controller-tools/../../evil',
      'the entry controller-tools/../../evil points outside the archive; refusing the archive',
    ],
    ['/etc/passwd', 'the entry /etc/passwd has an absolute or Windows path; refusing the archive'],
  ])('refuses a path that leaves the archive: %s', async (name, message) => {
    const archive = Buffer.concat([file(name, 'x'), END]);
    const error = await unpackAll(archive).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TarError);
    expect((error as Error).message).toBe(message);
    expect(await readdir(tmp)).toEqual([]);
  });

  it('refuses a path that leaves the archive through a pax record too', async () => {
    const archive = Buffer.concat([pax({ path: '../../etc/cron.d/x' }), file('harmless', 'x'), END]);
    await expect(unpackAll(archive)).rejects.toThrow(
      'the entry ../../etc/cron.d/x points outside the archive',
    );
  });

  it('refuses an entry larger than the bound before reading its content', async () => {
    // The header claims 2 KiB; no content follows. The bound is checked on the header alone.
    const archive = Buffer.concat([header('big', 2048), END]);
    await expect(unpackAll(archive)).rejects.toThrow('big has 2048 bytes, more than the 1024 allowed');
    expect(await readdir(tmp)).toEqual([]);
  });

  it('refuses an archive whose entries together exceed the total bound', async () => {
    const archive = Buffer.concat([...[1, 2, 3, 4, 5].map((i) => file(`f${i}`, 'x'.repeat(1000))), END]);
    await expect(unpackAll(archive)).rejects.toThrow(
      'the archive unpacks to more than the 4096 bytes allowed',
    );
  });

  it('refuses more entries than allowed', async () => {
    const archive = Buffer.concat([
      ...Array.from({ length: 21 }, (_, i) => header(`d${i}/`, 0, { type: '5' })),
      END,
    ]);
    await expect(unpackAll(archive)).rejects.toThrow('the archive has more than 20 entries');
  });

  it('refuses a corrupt header (checksum)', async () => {
    const archive = Buffer.concat([file('a', 'x'), file('b', 'y', { badChecksum: true }), END]);
    await expect(unpackAll(archive)).rejects.toThrow(
      'header 2 of the archive is corrupt (checksum mismatch)',
    );
  });

  it('refuses a truncated archive: inside an entry, or without the end marker', async () => {
    const whole = Buffer.concat([file('a', 'x'.repeat(700)), END]);
    // A partial file may be left: readTar writes into a staging directory its caller removes on failure.
    await expect(unpackAll(whole.subarray(0, 900))).rejects.toThrow('the archive ends inside a (truncated?)');
    // The partial file may not exist yet when the error comes (its stream opens it asynchronously).
    await rm(path.join(tmp, 'a'), { force: true });
    await expect(unpackAll(whole.subarray(0, 512 + 1024))).rejects.toThrow(
      'the archive ends without an end-of-archive marker (truncated?)',
    );
    await rm(path.join(tmp, 'a'), { force: true });
    await expect(unpackAll(whole.subarray(0, 300))).rejects.toThrow(
      'the archive ends inside a header (truncated?)',
    );
  });

  it('refuses to write a link or to overwrite an existing file', async () => {
    const link = Buffer.concat([header('etcd', 0, { type: '2' }), END]);
    await expect(readTar(chunks(link), () => path.join(tmp, 'etcd'), LIMITS)).rejects.toThrow(
      'etcd is a link, not a regular file',
    );
    await writeFile(path.join(tmp, 'etcd'), 'before');
    const twice = Buffer.concat([file('etcd', 'after'), END]);
    await expect(unpackAll(twice)).rejects.toThrow(/EEXIST/);
    expect(await readFile(path.join(tmp, 'etcd'), 'utf8')).toBe('before');
  });
});
