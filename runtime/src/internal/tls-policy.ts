/**
 * The one TLS policy of the runtime's servers (the webhook server and the secure metrics server): TLS 1.2 at
 * least, forward-secret suites only, and a bounded handshake. Both servers take their TLS options from here,
 * so that they cannot drift apart.
 */
import type tls from 'node:tls';

export type TlsMinVersion = 'TLSv1.2' | 'TLSv1.3';

/** The lowest TLS version accepted by default: 1.2, as Go's crypto/tls for a server. */
export const DEFAULT_TLS_MIN_VERSION: TlsMinVersion = 'TLSv1.2';

/**
 * The suites offered, OpenSSL names. TLS 1.3's three are all forward-secret AEADs. For TLS 1.2: the ECDHE
 * suites with AES-GCM or ChaCha20-Poly1305, which is Go's default server list (crypto/tls `defaultCipherSuites`:
 * RSA key exchange and 3DES left out since Go 1.22 and 1.23) without its four ECDHE AES-CBC-SHA suites, kept
 * there for old clients only; the callers of these servers (the API server, Prometheus) all speak AES-GCM.
 * Node's own default list would also take AES128-GCM-SHA256 and the like: RSA key exchange, no forward secrecy.
 */
export const FORWARD_SECRET_CIPHERS = [
  'TLS_AES_128_GCM_SHA256',
  'TLS_AES_256_GCM_SHA384',
  'TLS_CHACHA20_POLY1305_SHA256',
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
].join(':');

/**
 * How long a client may take to complete its TLS handshake before its connection is closed: 10 s, as the
 * header timeout. Node's default is 120 s, long enough for silent sockets to hold every connection slot;
 * Go's server (so controller-runtime's, whose ReadHeaderTimeout is 32 s) bounds the handshake by its
 * shortest read timeout. A real client (the API server) completes it in a few milliseconds.
 */
export const DEFAULT_HANDSHAKE_TIMEOUT_MS = 10_000;

/** A server's TLS settings, resolved (withDefaults gives the defaults above). */
export interface TlsPolicyOptions {
  tlsMinVersion: TlsMinVersion;
  /** TLS 1.2 and 1.3 suites, OpenSSL names joined by `:`. */
  tlsCiphers: string;
  handshakeTimeoutMs: number;
}

/** The TLS options of a server under the policy. */
export function tlsServerOptions(options: TlsPolicyOptions): tls.TlsOptions {
  return {
    minVersion: options.tlsMinVersion,
    ciphers: options.tlsCiphers,
    handshakeTimeout: options.handshakeTimeoutMs,
    // The server's order of preference wins: forward-secret AEADs first, whatever the client lists.
    honorCipherOrder: true,
  };
}
