/**
 * The state of a self-managed webhook certificate, as its Secret records it, and what the leader does next.
 * The Secret is the only state: a leader that takes over mid-rotation reads where the last one stopped.
 *
 * - steady: `ca.crt`, `tls.crt`, `tls.key`; the caBundle is `ca.crt`.
 * - adding: besides, `next-ca.crt`, `next-tls.crt`, `next-tls.key`: the caBundle becomes `ca.crt` +
 *   `next-ca.crt`, and once the API servers have it the next pair becomes the current one.
 * - removing: `previous-ca.crt` and the time of the switch: the caBundle stays `previous-ca.crt` + `ca.crt`
 *   until every replica serves the new pair (the overlap), then becomes `ca.crt` alone.
 *
 * Each rotation makes a new CA with its serving certificate, so no CA key is ever stored.
 */
import { nodeCrypto } from '../../internal/node-modules.js';

export const KEYS = {
  ca: 'ca.crt',
  cert: 'tls.crt',
  key: 'tls.key',
  nextCa: 'next-ca.crt',
  nextCert: 'next-tls.crt',
  nextKey: 'next-tls.key',
  previousCa: 'previous-ca.crt',
} as const;

/** When the serving pair last switched (RFC 3339): the overlap is counted from it. */
export const SWITCHED_AT = 'webhook.kubesmith.dev/switched-at';

export interface Material {
  ca: string;
  cert: string;
  key: string;
}

export type Phase =
  | { phase: 'steady'; current: Material }
  | { phase: 'adding'; current: Material; next: Material }
  | { phase: 'removing'; current: Material; previousCa: string; switchedAt: number };

/** The Secret's data decoded (base64) into PEM text; keys that are not strings are left out. */
export function decodeData(data: Record<string, unknown> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(data ?? {})) {
    if (typeof value === 'string') out[key] = Buffer.from(value, 'base64').toString('utf8');
  }
  return out;
}

export function encodeData(data: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(data)) out[key] = Buffer.from(value, 'utf8').toString('base64');
  return out;
}

/**
 * The phase the Secret's data and annotations record, or a reason why they are not usable (missing keys,
 * a certificate that does not parse or that its CA did not sign): the leader then starts afresh.
 */
export function phaseOf(
  data: Record<string, string>,
  annotations: Record<string, string> = {},
): Phase | string {
  const current = material(data, KEYS.ca, KEYS.cert, KEYS.key);
  if (typeof current === 'string') return current;
  const hasNext = KEYS.nextCa in data || KEYS.nextCert in data || KEYS.nextKey in data;
  if (hasNext) {
    const next = material(data, KEYS.nextCa, KEYS.nextCert, KEYS.nextKey);
    // A half-written next pair: drop it, a rotation starts again from steady.
    if (typeof next === 'string') return { phase: 'steady', current };
    return { phase: 'adding', current, next };
  }
  const previousCa = data[KEYS.previousCa];
  if (previousCa !== undefined) {
    // NaN when no time is recorded: the leader records one, and the overlap counts from then.
    return { phase: 'removing', current, previousCa, switchedAt: Date.parse(annotations[SWITCHED_AT] ?? '') };
  }
  return { phase: 'steady', current };
}

function material(
  data: Record<string, string>,
  caKey: string,
  certKey: string,
  keyKey: string,
): Material | string {
  const ca = data[caKey];
  const cert = data[certKey];
  const key = data[keyKey];
  if (ca === undefined || cert === undefined || key === undefined) {
    return `the Secret lacks ${[caKey, certKey, keyKey].filter((k) => data[k] === undefined).join(', ')}`;
  }
  try {
    const caCert = new (nodeCrypto().X509Certificate)(ca);
    const leaf = new (nodeCrypto().X509Certificate)(cert);
    // Names alone do not tell: every CA of a Secret has the same name, so the signature must verify.
    if (!leaf.checkIssued(caCert) || !leaf.verify(caCert.publicKey))
      return `${certKey} was not issued by ${caKey}`;
  } catch (error) {
    return `${certKey} or ${caKey} does not parse: ${(error as Error).message}`;
  }
  return { ca, cert, key };
}

/**
 * Why the serving certificate must be replaced now, or undefined: it expires within `renewBeforeMs`, or it
 * does not name every host (the Service was renamed).
 */
export function renewalReason(
  cert: string,
  hosts: readonly string[],
  now: number,
  renewBeforeMs: number,
): string | undefined {
  const x509 = new (nodeCrypto().X509Certificate)(cert);
  const notAfter = Date.parse(x509.validTo);
  if (now >= notAfter - renewBeforeMs) return `it expires at ${new Date(notAfter).toISOString()}`;
  const names = new Set(
    (x509.subjectAltName ?? '').split(', ').map((entry) => entry.replace(/^(DNS|IP Address):/, '')),
  );
  const missing = hosts.filter((host) => !names.has(host));
  if (missing.length > 0) return `it does not name ${missing.join(', ')}`;
  return undefined;
}

/** When the serving certificate is due for renewal (ms since the epoch). */
export function renewalTime(cert: string, renewBeforeMs: number): number {
  return Date.parse(new (nodeCrypto().X509Certificate)(cert).validTo) - renewBeforeMs;
}

/** The caBundle the phase calls for: every CA a replica may be serving a certificate of. */
export function bundleOf(phase: Phase): string {
  switch (phase.phase) {
    case 'steady':
      return phase.current.ca;
    case 'adding':
      return joinPem(phase.current.ca, phase.next.ca);
    case 'removing':
      return joinPem(phase.previousCa, phase.current.ca);
  }
}

function joinPem(...pems: string[]): string {
  return pems.map((pem) => (pem.endsWith('\n') ? pem : `${pem}\n`)).join('');
}
