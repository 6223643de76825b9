/**
 * A streaming reader of tar archives (POSIX ustar, pax and GNU headers), just enough to unpack the envtest
 * release archives without a dependency: regular files and directories, names from pax `path` records and
 * GNU long-name entries, sizes from pax `size` records. Every header's checksum is checked, every entry's
 * path must stay inside the archive (no absolute path, no `..`), and sizes are bounded before any byte is
 * read, so a hostile or corrupt archive fails with a clear error instead of filling the disk.
 */
import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';

const BLOCK = 512;

export interface TarLimits {
  /** The largest entry, in bytes. */
  maxEntryBytes: number;
  /** All entries together, in bytes. */
  maxTotalBytes: number;
  /** The number of entries (headers) read. */
  maxEntries: number;
}

export interface TarEntry {
  /** The path inside the archive, normalised: no leading `./`, no trailing `/`. */
  path: string;
  type: 'file' | 'directory' | 'link' | 'other';
  size: number;
  mode: number;
}

/** A problem with the archive itself (corrupt, truncated, hostile). The message names the entry. */
export class TarError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TarError';
  }
}

/**
 * Reads the tar stream `input` entry by entry. `onEntry` decides what to do with each: return a file path to
 * write the entry's content there (mode 0755, refused when the file exists), or undefined to skip it.
 * Resolves once the end-of-archive marker is read; rejects on anything malformed.
 */
export async function readTar(
  input: AsyncIterable<Uint8Array>,
  onEntry: (entry: TarEntry) => string | undefined,
  limits: TarLimits,
): Promise<void> {
  const reader = new BlockReader(input);
  let total = 0;
  let entries = 0;
  // Set by a pax `x` or GNU `L` entry; they apply to the entry that follows.
  let nextPath: string | undefined;
  let nextSize: number | undefined;

  for (;;) {
    const header = await reader.read(BLOCK);
    if (!header) throw new TarError('the archive ends without an end-of-archive marker (truncated?)');
    if (header.every((byte) => byte === 0)) return;
    if (++entries > limits.maxEntries)
      throw new TarError(`the archive has more than ${limits.maxEntries} entries`);
    checkChecksum(header, entries);

    const flag = String.fromCharCode(header[156] ?? 0);
    const headerSize = octal(header, 124, 12, 'size');
    const isMeta = flag === 'x' || flag === 'g' || flag === 'L' || flag === 'K';
    const size = isMeta ? headerSize : (nextSize ?? headerSize);
    const rawPath = isMeta ? '' : (nextPath ?? headerPath(header));
    if (!isMeta) {
      nextPath = undefined;
      nextSize = undefined;
    }

    if (isMeta) {
      // Metadata is held in memory: bound it far below the entry limit.
      if (size > 1024 * 1024) throw new TarError(`a ${flag} header of ${size} bytes is too large`);
      const data = await readExactly(reader, size);
      await reader.skip(padding(size));
      if (flag === 'x') {
        const records = paxRecords(data);
        if (records.has('path')) nextPath = records.get('path');
        if (records.has('size')) nextSize = Number(records.get('size'));
        if (nextSize !== undefined && !Number.isSafeInteger(nextSize))
          throw new TarError(`a pax header has an invalid size "${records.get('size')}"`);
      } else if (flag === 'L') {
        nextPath = cString(data, 0, data.length);
      }
      continue;
    }

    const entry: TarEntry = {
      path: safePath(rawPath),
      type: entryType(flag),
      size: flag === '5' || flag === '1' || flag === '2' ? 0 : size,
      mode: octal(header, 100, 8, 'mode'),
    };
    if (entry.size > limits.maxEntryBytes)
      throw new TarError(
        `${entry.path} has ${entry.size} bytes, more than the ${limits.maxEntryBytes} allowed`,
      );
    total += entry.size;
    if (total > limits.maxTotalBytes)
      throw new TarError(`the archive unpacks to more than the ${limits.maxTotalBytes} bytes allowed`);

    const target = onEntry(entry);
    if (target !== undefined) {
      if (entry.type !== 'file') throw new TarError(`${entry.path} is a ${entry.type}, not a regular file`);
      await pipeline(
        reader.stream(entry.size, entry.path),
        createWriteStream(target, { flags: 'wx', mode: 0o755 }),
      );
    } else {
      await reader.skip(entry.size);
    }
    await reader.skip(padding(entry.size));
  }
}

function entryType(flag: string): TarEntry['type'] {
  if (flag === '0' || flag === '\0' || flag === '7') return 'file';
  if (flag === '5') return 'directory';
  if (flag === '1' || flag === '2') return 'link';
  return 'other';
}

/** The entry's path, refused when it is absolute or climbs out with `..`: written anywhere, it would escape. */
function safePath(raw: string): string {
  if (raw === '') throw new TarError('an entry has an empty name');
  if (raw.includes('\0')) throw new TarError(`the entry name ${JSON.stringify(raw)} holds a NUL byte`);
  if (raw.startsWith('/') || /^[A-Za-z]:/.test(raw) || raw.includes('\\'))
    throw new TarError(`the entry ${raw} has an absolute or Windows path; refusing the archive`);
  const parts = raw.split('/').filter((part) => part !== '' && part !== '.');
  if (parts.includes('..'))
    throw new TarError(`the entry ${raw} points outside the archive; refusing the archive`);
  return parts.join('/');
}

function headerPath(header: Uint8Array): string {
  const name = cString(header, 0, 100);
  // POSIX ustar ("ustar\0") splits long names into prefix + name; GNU ("ustar  ") uses that area otherwise.
  const magic = cString(header, 257, 6);
  const prefix = magic === 'ustar' && header[262] === 0 ? cString(header, 345, 155) : '';
  return prefix ? `${prefix}/${name}` : name;
}

function checkChecksum(header: Uint8Array, index: number): void {
  const stored = octal(header, 148, 8, 'checksum');
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : (header[i] ?? 0);
  if (sum !== stored) throw new TarError(`header ${index} of the archive is corrupt (checksum mismatch)`);
}

/** A NUL- or space-terminated octal field. Base-256 sizes (over 8 GiB) are refused: no entry may be that big. */
function octal(header: Uint8Array, offset: number, length: number, field: string): number {
  if ((header[offset] ?? 0) & 0x80) throw new TarError(`a tar header's ${field} is too large`);
  const text = cString(header, offset, length).trim();
  if (text === '') return 0;
  if (!/^[0-7]+$/.test(text)) throw new TarError(`a tar header's ${field} "${text}" is not an octal number`);
  return parseInt(text, 8);
}

function cString(bytes: Uint8Array, offset: number, length: number): string {
  const slice = bytes.subarray(offset, offset + length);
  const end = slice.indexOf(0);
  return Buffer.from(end === -1 ? slice : slice.subarray(0, end)).toString('utf8');
}

/** pax records: `<length> <key>=<value>\n`, the length counting the whole record. */
function paxRecords(data: Buffer): Map<string, string> {
  const records = new Map<string, string>();
  let offset = 0;
  while (offset < data.length) {
    const space = data.indexOf(0x20, offset);
    const length = Number(data.subarray(offset, space).toString('ascii'));
    if (space === -1 || !Number.isSafeInteger(length) || length <= 0 || offset + length > data.length)
      throw new TarError('a pax header is malformed');
    const record = data.subarray(space + 1, offset + length - 1).toString('utf8');
    const equals = record.indexOf('=');
    if (equals > 0) records.set(record.slice(0, equals), record.slice(equals + 1));
    offset += length;
  }
  return records;
}

function padding(size: number): number {
  return (BLOCK - (size % BLOCK)) % BLOCK;
}

async function readExactly(reader: BlockReader, size: number): Promise<Buffer> {
  const data = await reader.read(size);
  if (!data) throw new TarError('the archive ends inside a header (truncated?)');
  return data;
}

/** Reads exact byte counts from a stream of chunks of any size. */
class BlockReader {
  private readonly iterator: AsyncIterator<Uint8Array>;
  private pending: Buffer = Buffer.alloc(0);
  private done = false;

  constructor(input: AsyncIterable<Uint8Array>) {
    this.iterator = input[Symbol.asyncIterator]();
  }

  /** Exactly `size` bytes, or undefined at the end of the stream (a partial read is an error). */
  async read(size: number): Promise<Buffer | undefined> {
    const parts: Buffer[] = [];
    let have = 0;
    for await (const chunk of this.stream(size, undefined)) {
      parts.push(chunk);
      have += chunk.length;
    }
    if (have === 0 && size > 0) return undefined;
    return Buffer.concat(parts, have);
  }

  async skip(size: number): Promise<void> {
    for await (const _ of this.stream(size, 'padding')) void _;
  }

  /**
   * The next `size` bytes as chunks. With `name`, the stream ending early is a TarError naming it;
   * without, it simply stops (read() decides).
   */
  async *stream(size: number, name: string | undefined): AsyncGenerator<Buffer> {
    let left = size;
    while (left > 0) {
      if (this.pending.length === 0) {
        const next = this.done ? undefined : await this.iterator.next();
        if (!next || next.done) {
          this.done = true;
          if (name !== undefined) throw new TarError(`the archive ends inside ${name} (truncated?)`);
          if (left !== size) throw new TarError('the archive ends inside a header (truncated?)');
          return;
        }
        this.pending = Buffer.from(next.value.buffer, next.value.byteOffset, next.value.byteLength);
      }
      const take = Math.min(left, this.pending.length);
      yield this.pending.subarray(0, take);
      this.pending = this.pending.subarray(take);
      left -= take;
    }
  }
}
