/**
 * Reading PROJECT within bounds, for find.ts (which reads only its domain, without the full parser) and
 * config.ts (which parses it): any pull request can change the file.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { KubesmithError } from '../errors.js';

/** Aliases (`*name`) a PROJECT may use: kubesmith writes none; many are an expansion bomb. */
export const MAX_ALIAS_COUNT = 10;

/**
 * The largest PROJECT kubesmith reads. A real one is a few KiB; parsing takes tens of times its size in
 * memory (a 60 MB file took 2.3 GB), and any pull request can change it.
 */
const MAX_PROJECT_BYTES = 1024 * 1024;

/** Refuses a PROJECT larger than MAX_PROJECT_BYTES, before it is parsed. */
export function checkProjectSize(bytes: number, file: string): void {
  if (bytes > MAX_PROJECT_BYTES) {
    throw new KubesmithError(
      `${file}: PROJECT is larger than the ${MAX_PROJECT_BYTES} bytes a PROJECT may have`,
      { hint: 'a PROJECT records a few settings and resources; restore it from git (`git diff PROJECT`)' },
    );
  }
}

/**
 * PROJECT's text, read only when it is a regular file, and never more than MAX_PROJECT_BYTES of it (a
 * PROJECT that links to /dev/zero or a pipe would otherwise be read forever).
 */
export function readProjectText(file: string): string {
  const fd = openSync(file, 'r');
  try {
    if (!fstatSync(fd).isFile()) {
      throw new KubesmithError(`${file}: PROJECT is not a regular file`, {
        hint: 'PROJECT is a YAML file at the project root; restore it from git (`git diff PROJECT`)',
      });
    }
    const buffer = Buffer.alloc(MAX_PROJECT_BYTES + 1);
    let length = 0;
    for (let read = -1; read !== 0 && length < buffer.length; length += read) {
      read = readSync(fd, buffer, length, buffer.length - length, null);
    }
    checkProjectSize(length, file);
    return buffer.toString('utf8', 0, length);
  } finally {
    closeSync(fd);
  }
}
