/** Certificates and an HTTPS client for the webhook server's tests. */
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { makeServingCertificates } from '../../src/internal/certs.js';
import { createLogger, type Logger } from '../../src/logger.js';

export interface TestCertificates {
  /** The CA that signed the serving certificate, PEM: a client's `ca`, a configuration's caBundle. */
  ca: string;
  /** Holds tls.crt and tls.key. */
  certDir: string;
}

/**
 * A fresh CA and a serving certificate it signed for localhost and 127.0.0.1 (envtest's own maker), written
 * as tls.crt/tls.key into `certDir` (created when missing). The CA is named `<name>-ca`. `leafKey` 'rsa' gives
 * the serving certificate an RSA key, as cert-manager issues by default (RSA key exchange then exists).
 */
export function makeCertificates(
  certDir: string,
  name = 'webhook-test',
  leafKey: 'ec' | 'rsa' = 'ec',
): TestCertificates {
  fs.mkdirSync(certDir, { recursive: true });
  const certs = makeServingCertificates(['localhost', '127.0.0.1'], { name, validDays: 3650, leafKey });
  // Written key first, then certificate, each by rename: as a rotation lands, never half a file.
  for (const [file, content] of [
    ['tls.key', certs.key],
    ['tls.crt', certs.cert],
  ] as const) {
    fs.writeFileSync(path.join(certDir, `.${file}.tmp`), content);
    fs.renameSync(path.join(certDir, `.${file}.tmp`), path.join(certDir, file));
  }
  return { ca: certs.caCert, certDir };
}

export interface Reply {
  status: number;
  text: string;
  json: unknown;
  headers: Record<string, string | string[] | undefined>;
}

/** POSTs `body` (a string as it is, anything else as JSON) over HTTPS, trusting only `ca`. */
export function post(
  port: number,
  urlPath: string,
  body: unknown,
  options: { ca: string; headers?: Record<string, string>; method?: string },
): Promise<Reply> {
  const payload = typeof body === 'string' ? body : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        path: urlPath,
        method: options.method ?? 'POST',
        ca: options.ca,
        servername: 'localhost',
        agent: false,
        // A header given as '' is left out (Content-Length, to send the body chunked).
        headers: Object.fromEntries(
          Object.entries({
            'Content-Type': 'application/json',
            'Content-Length': String(Buffer.byteLength(payload)),
            ...options.headers,
          }).filter(([, value]) => value !== ''),
        ),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, text, json, headers: res.headers });
        });
      },
    );
    req.on('error', reject);
    if (options.headers?.['Content-Length'] === '') {
      req.write(payload); // headers go out before the length is known: chunked
      req.end();
    } else req.end(payload);
  });
}

/** A logger that keeps its lines, parsed. */
export function memoryLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({
    level: 'info',
    write: (line) => void lines.push(JSON.parse(line) as Record<string, unknown>),
  });
  return { logger, lines };
}

/** An AdmissionReview for a Guestbook: the shape kube-apiserver sends. */
export function admissionReview(request: Record<string, unknown>): Record<string, unknown> {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'a2b4c6d8-0000-4000-8000-000000000001',
      kind: { group: 'webapp.example.com', version: 'v1', kind: 'Guestbook' },
      resource: { group: 'webapp.example.com', version: 'v1', resource: 'guestbooks' },
      namespace: 'default',
      name: 'g',
      operation: 'CREATE',
      userInfo: { username: 'admin' },
      ...request,
    },
  };
}

export async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'kubesmith-webhook-'));
}
