import { X509Certificate } from 'node:crypto';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { makeServingCertificates } from '../../src/internal/certs.js';

describe('makeServingCertificates', () => {
  const certs = makeServingCertificates(['localhost', '127.0.0.1', '::1'], {
    now: new Date('2026-11-23T12:00:00Z'),
    validDays: 30,
  });
  const ca = new X509Certificate(certs.caCert);
  const leaf = new X509Certificate(certs.cert);

  it('makes a CA and a serving certificate it signed', () => {
    expect(ca.ca).toBe(true);
    expect(leaf.ca).toBe(false);
    expect(ca.verify(ca.publicKey)).toBe(true);
    expect(leaf.verify(ca.publicKey)).toBe(true);
    expect(leaf.checkIssued(ca)).toBe(true);
    expect(leaf.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
  });

  it('names every host in the subject alternative names', () => {
    expect(leaf.subjectAltName).toBe('DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1');
    expect(leaf.checkHost('localhost')).toBe('localhost');
    expect(leaf.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(leaf.checkHost('example.com')).toBeUndefined();
  });

  it('is valid from an hour before now for the given days', () => {
    expect(new Date(leaf.validFrom).toISOString()).toBe('2026-11-23T11:00:00.000Z');
    expect(new Date(leaf.validTo).toISOString()).toBe('2026-12-23T12:00:00.000Z');
  });

  it('writes GeneralizedTime after 2049', () => {
    const late = makeServingCertificates(['localhost'], { now: new Date('2060-06-01T00:00:00Z') });
    expect(new Date(new X509Certificate(late.cert).validTo).getUTCFullYear()).toBe(2061);
  });

  it('serves TLS that a client trusting only the CA accepts', async () => {
    const server = https.createServer({ cert: certs.cert, key: certs.key }, (_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const body = await new Promise<string>((resolve, reject) => {
        https
          .get({ host: '127.0.0.1', port, ca: certs.caCert, path: '/', agent: false }, (res) => {
            let text = '';
            res.on('data', (chunk: Buffer) => (text += chunk.toString()));
            res.on('end', () => resolve(text));
          })
          .on('error', reject);
      });
      expect(body).toBe('ok');
    } finally {
      server.close();
    }
  });
});
