/**
 * The self-provided certificate's state as its Secret records it (webhook/internal/rotation.ts): which
 * step a leader taking over is at, which caBundle each step calls for, when a certificate is due, and
 * what makes a Secret unusable (the leader then starts afresh rather than serve a broken pair).
 */
import { describe, expect, it } from 'vitest';
import { makeServingCertificates } from '../../src/internal/certs.js';
import {
  KEYS,
  SWITCHED_AT,
  bundleOf,
  decodeData,
  encodeData,
  phaseOf,
  renewalReason,
} from '../../src/webhook/internal/rotation.js';

const HOSTS = ['svc.ns.svc', 'svc.ns.svc.cluster.local'];
const issue = (validDays = 90) => {
  const made = makeServingCertificates(HOSTS, { validDays });
  return { ca: made.caCert, cert: made.cert, key: made.key };
};
const current = issue();
const next = issue();
const steady = { [KEYS.ca]: current.ca, [KEYS.cert]: current.cert, [KEYS.key]: current.key };

describe('the rotation state of the Secret', () => {
  it('reads each step, and the caBundle it calls for: current, current + next, previous + current', () => {
    expect(phaseOf(steady)).toEqual({ phase: 'steady', current });
    expect(bundleOf(phaseOf(steady) as never)).toBe(current.ca);

    const adding = phaseOf({
      ...steady,
      [KEYS.nextCa]: next.ca,
      [KEYS.nextCert]: next.cert,
      [KEYS.nextKey]: next.key,
    });
    expect(adding).toMatchObject({ phase: 'adding', next });
    expect(bundleOf(adding as never)).toBe(current.ca + next.ca);

    const switchedAt = '2026-11-26T21:00:00.000Z';
    const removing = phaseOf(
      { [KEYS.ca]: next.ca, [KEYS.cert]: next.cert, [KEYS.key]: next.key, [KEYS.previousCa]: current.ca },
      { [SWITCHED_AT]: switchedAt },
    );
    expect(removing).toMatchObject({ phase: 'removing', switchedAt: Date.parse(switchedAt) });
    expect(bundleOf(removing as never)).toBe(current.ca + next.ca);
    // No time recorded: NaN, which the leader replaces by now before it counts the overlap.
    expect(phaseOf({ ...steady, [KEYS.previousCa]: current.ca })).toMatchObject({ switchedAt: NaN });
  });

  it('drops a half-written next pair, and refuses a Secret with a missing key or a foreign certificate', () => {
    expect(phaseOf({ ...steady, [KEYS.nextCa]: next.ca })).toEqual({ phase: 'steady', current });
    expect(phaseOf({ [KEYS.ca]: current.ca, [KEYS.cert]: current.cert })).toBe('the Secret lacks tls.key');
    expect(phaseOf({ ...steady, [KEYS.ca]: next.ca })).toBe('tls.crt was not issued by ca.crt');
    expect(phaseOf({ ...steady, [KEYS.cert]: 'not a certificate' })).toMatch(
      /^tls\.crt or ca\.crt does not parse/,
    );
  });

  it('renews a certificate within renewBefore of its expiry, or one that does not name the Service', () => {
    const now = Date.now();
    const day = 86_400_000;
    expect(renewalReason(current.cert, HOSTS, now, 30 * day)).toBeUndefined();
    expect(renewalReason(current.cert, HOSTS, now + 61 * day, 30 * day)).toMatch(/^it expires at /);
    expect(renewalReason(current.cert, [...HOSTS, 'renamed.ns.svc'], now, 30 * day)).toBe(
      'it does not name renamed.ns.svc',
    );
  });

  it('keeps PEM text intact through the Secret encoding', () => {
    expect(decodeData(encodeData(steady))).toEqual(steady);
    expect(decodeData({ [KEYS.ca]: 42 as never })).toEqual({});
  });
});
