/**
 * Editing the package.json inside an npm tarball (a gzipped ustar archive whose files sit under
 * `package/`). Every other entry is copied byte for byte; only package.json's header (size, checksum)
 * and data change.
 */
import { gunzipSync, gzipSync } from 'node:zlib';

const BLOCK = 512;
/** A package tarball is a few hundred kilobytes; refuse anything absurd before unpacking it in memory. */
const MAX_UNPACKED_BYTES = 256 * 1024 * 1024;

export function editPackageJson(
  tgz: Uint8Array,
  edit: (manifest: Record<string, unknown>) => Record<string, unknown>,
): Buffer {
  const tar = gunzipSync(tgz, { maxOutputLength: MAX_UNPACKED_BYTES });
  const out: Buffer[] = [];
  let offset = 0;
  let found = false;
  while (offset + BLOCK <= tar.length) {
    const header = tar.subarray(offset, offset + BLOCK);
    if (header.every((byte) => byte === 0)) break;
    const size = parseInt(header.toString('latin1', 124, 136).replace(/\0.*$/, '').trim() || '0', 8);
    const dataEnd = offset + BLOCK + Math.ceil(size / BLOCK) * BLOCK;
    if (Number.isNaN(size) || dataEnd > tar.length) throw new Error('not a valid tar archive');
    const name = header.toString('latin1', 0, 100).replace(/\0.*$/, '');
    if (name === 'package/package.json' && !found) {
      found = true;
      const manifest = JSON.parse(tar.toString('utf8', offset + BLOCK, offset + BLOCK + size)) as Record<
        string,
        unknown
      >;
      const data = Buffer.from(`${JSON.stringify(edit(manifest), null, 2)}\n`);
      out.push(headerWithSize(header, data.length), data, Buffer.alloc(padding(data.length)));
    } else {
      out.push(tar.subarray(offset, dataEnd));
    }
    offset = dataEnd;
  }
  if (!found) throw new Error('the tarball has no package/package.json');
  out.push(Buffer.alloc(2 * BLOCK));
  return gzipSync(Buffer.concat(out), { level: 9 });
}

function padding(size: number): number {
  return (BLOCK - (size % BLOCK)) % BLOCK;
}

/** The same header with another size, and its checksum recomputed (the sum of its bytes, the field as spaces). */
function headerWithSize(original: Buffer, size: number): Buffer {
  const header = Buffer.from(original);
  header.write(`${size.toString(8).padStart(11, '0')}\0`, 124, 12, 'latin1');
  header.fill(0x20, 148, 156);
  const sum = header.reduce((total, byte) => total + byte, 0);
  header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'latin1');
  return header;
}
