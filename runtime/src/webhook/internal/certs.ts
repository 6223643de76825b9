/**
 * The serving certificate, read from a directory and read again when its files change: cert-manager
 * rotates the Secret, the kubelet swaps the mounted files (a `..data` symlink flip), and the server takes
 * the new pair without a restart. As controller-runtime's certwatcher: a file watch for speed, plus a poll
 * because watches miss events on some volumes (and lose their file when it is replaced by a rename).
 */
import fs from 'node:fs';
import path from 'node:path';
import tls from 'node:tls';
import type { Logger } from '../../logger.js';
import { messages } from './messages.js';

export interface CertificatePair {
  cert: Buffer;
  key: Buffer;
}

export interface CertWatcherOptions {
  certDir: string;
  certName: string;
  keyName: string;
  pollIntervalMs: number;
  logger: Logger;
  /** Called with each new pair that differs from the previous one and is usable. */
  onChange: (pair: CertificatePair) => void;
}

/** Reads the pair and checks that it is usable; throws a message naming the file and the fix. */
function readCertificatePair(certDir: string, certName: string, keyName: string): CertificatePair {
  const read = (name: string) => {
    const file = path.join(certDir, name);
    try {
      return fs.readFileSync(file);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const reason = code === 'ENOENT' ? 'no such file' : (error as Error).message;
      throw new Error(messages.certificateMissing(file, reason, certDir), { cause: error });
    }
  };
  const pair = { cert: read(certName), key: read(keyName) };
  try {
    tls.createSecureContext(pair);
  } catch (error) {
    throw new Error(messages.certificateInvalid(certDir, (error as Error).message), { cause: error });
  }
  return pair;
}

export class CertWatcher {
  private current: CertificatePair | undefined;
  private watcher: fs.FSWatcher | undefined;
  private poll: NodeJS.Timeout | undefined;
  private debounce: NodeJS.Timeout | undefined;

  constructor(private readonly options: CertWatcherOptions) {}

  /** Reads the pair (throws when it is missing or unusable) and starts watching. */
  start(): CertificatePair {
    const { certDir, certName, keyName } = this.options;
    this.current = readCertificatePair(certDir, certName, keyName);
    try {
      // The directory, not the files: a rotation replaces the files, and a watch on a file follows its
      // old inode.
      this.watcher = fs.watch(certDir, { persistent: false }, () => this.changed());
      this.watcher.on('error', (error) => this.options.logger.warn('certificate watch failed', { error }));
    } catch (error) {
      this.options.logger.warn('cannot watch the certificate directory; polling only', { certDir, error });
    }
    this.poll = setInterval(() => this.reload(false), this.options.pollIntervalMs);
    this.poll.unref();
    this.options.logger.info('Starting certificate poll+watcher', {
      certDir,
      intervalMs: this.options.pollIntervalMs,
    });
    return this.current;
  }

  stop(): void {
    this.watcher?.close();
    clearInterval(this.poll);
    clearTimeout(this.debounce);
  }

  /** Events come in bursts while files are written: reload once they settle. */
  private changed(): void {
    clearTimeout(this.debounce);
    this.debounce = setTimeout(() => this.reload(true), 50);
    this.debounce.unref();
  }

  /** Takes a changed, usable pair; keeps the current one otherwise (a half-written rotation). */
  reload(fromWatch: boolean): boolean {
    const { certDir, certName, keyName, logger } = this.options;
    let pair: CertificatePair;
    try {
      pair = readCertificatePair(certDir, certName, keyName);
    } catch (error) {
      // The watch fires mid-rotation; the poll will see the finished pair. Say it once per poll.
      if (!fromWatch) logger.error('failed to read the certificate; keeping the previous one', { error });
      return false;
    }
    if (this.current && pair.cert.equals(this.current.cert) && pair.key.equals(this.current.key))
      return false;
    this.current = pair;
    this.options.onChange(pair);
    logger.info('Updated current TLS certificate', { certDir });
    return true;
  }
}
