/**
 * A CA and a serving certificate it signed: what `kubesmith run --webhooks` serves a project's webhooks
 * with. The certificate code (and node:crypto's key generation) loads at the first call, not with the
 * runtime: most processes that import the runtime never make a certificate.
 */
import type { makeServingCertificates as make, ServingCertificates } from './internal/certs.js';

export type { ServingCertificates };

export async function makeServingCertificates(
  hosts: readonly string[],
  options?: Parameters<typeof make>[1],
): Promise<ServingCertificates> {
  const certs = await import('./internal/certs.js');
  return certs.makeServingCertificates(hosts, options);
}
