/** Writing tar archives for tests: well-formed ones (as GNU tar makes them) and hostile ones. */
import { createReadStream, createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';

export interface HeaderOptions {
  type?: string;
  mode?: number;
  /** Write the checksum wrong on purpose. */
  badChecksum?: boolean;
  /** POSIX ustar prefix field (GNU archives leave it empty). */
  prefix?: string;
}

/** One 512-byte header. Names longer than 100 bytes need a pax or GNU `L` entry before it. */
export function header(name: string, size: number, options: HeaderOptions = {}): Buffer {
  const block = Buffer.alloc(512);
  block.write(name.slice(0, 100), 0, 'utf8');
  block.write(octal(options.mode ?? 0o755, 8), 100);
  block.write(octal(0, 8), 108);
  block.write(octal(0, 8), 116);
  block.write(octal(size, 12), 124);
  block.write(octal(0, 12), 136);
  block.write(options.type ?? '0', 156);
  block.write('ustar\0' + '00', 257, 'binary');
  if (options.prefix) block.write(options.prefix, 345);
  block.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(octal(options.badChecksum ? sum + 1 : sum, 7) + ' ', 148, 'binary');
  return block;
}

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, '0') + '\0';
}

export function padding(size: number): Buffer {
  return Buffer.alloc((512 - (size % 512)) % 512);
}

/** A regular file entry: header, content, padding. */
export function file(name: string, content: string | Buffer, options: HeaderOptions = {}): Buffer {
  const data = Buffer.isBuffer(content) ? content : Buffer.from(content);
  return Buffer.concat([header(name, data.length, options), data, padding(data.length)]);
}

/** A pax extended header (`x`) carrying `records` for the next entry. */
export function pax(records: Record<string, string>): Buffer {
  const body = Object.entries(records)
    .map(([key, value]) => {
      const text = ` ${key}=${value}\n`;
      let length = text.length + 1;
      while (`${length}${text}`.length !== length) length++;
      return `${length}${text}`;
    })
    .join('');
  return file('PaxHeader', body, { type: 'x' });
}

export const END = Buffer.alloc(1024);

/**
 * A tar.gz of `files` (name in the archive -> file on disk) as controller-tools packs its envtest archives:
 * directory entries first, then the files; streamed, gzip level 1 to keep tests quick.
 */
export async function writeTarGz(out: string, dirs: string[], files: Record<string, string>): Promise<void> {
  async function* entries(): AsyncGenerator<Buffer> {
    for (const dir of dirs) yield header(`${dir}/`, 0, { type: '5' });
    for (const [name, source] of Object.entries(files)) {
      const { size } = await stat(source);
      yield header(name, size);
      for await (const chunk of createReadStream(source)) yield chunk as Buffer;
      yield padding(size);
    }
    yield END;
  }
  await pipeline(entries(), createGzip({ level: 1 }), createWriteStream(out));
}

export const ENVTEST_DIRS = ['controller-tools', 'controller-tools/envtest'];

export function envtestFiles(binDir: string): Record<string, string> {
  return Object.fromEntries(
    ['etcd', 'kube-apiserver', 'kubectl'].map((name) => [
      `controller-tools/envtest/${name}`,
      path.join(binDir, name),
    ]),
  );
}
