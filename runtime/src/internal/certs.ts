/**
 * A certificate authority and a serving certificate it signed, made with node:crypto alone: for the local
 * webhook server that envtest's kube-apiserver calls, and for the metrics server when no certificate is
 * given. Node can sign but has no API to build an X.509 certificate, so this module writes the few DER structures RFC 5280 needs: ECDSA P-256 keys, SHA-256
 * signatures, and the extensions Go's TLS stack checks (CA basic constraints and key usage; serverAuth and
 * subject alternative names on the serving certificate).
 */
import { generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';

export interface ServingCertificates {
  /** The CA's certificate, PEM: the `caBundle` of webhook configurations, a client's `ca`. */
  caCert: string;
  /** The serving certificate, PEM, for `hosts`. */
  cert: string;
  /** Its private key, PEM (PKCS #8). */
  key: string;
}

/**
 * A CA valid for `validDays`, and a serving certificate it signed for `hosts` (DNS names or IPs). The CA's
 * common name is `<name>-ca`, the serving certificate's `name`.
 */
export function makeServingCertificates(
  hosts: readonly string[],
  {
    validDays = 365,
    now = new Date(),
    name: commonName = 'kubesmith-envtest',
    leafKey = 'ec',
  }: {
    validDays?: number;
    now?: Date;
    name?: string;
    /** The serving certificate's key: P-256, or RSA 2048 as cert-manager issues by default. */
    leafKey?: 'ec' | 'rsa';
  } = {},
): ServingCertificates {
  // An hour back: a clock a little behind ours still accepts the certificates.
  const notBefore = new Date(now.getTime() - 3_600_000);
  const notAfter = new Date(now.getTime() + validDays * 86_400_000);
  const { ca, caName, caCert } = selfSignedCa(`${commonName}-ca`, notBefore, notAfter);
  const leaf = leafKey === 'rsa' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : ecKeyPair();
  const cert = certificate({
    subject: name(commonName),
    issuer: caName,
    publicKey: leaf.publicKey,
    signer: ca.privateKey,
    notBefore,
    notAfter,
    extensions: [
      extension(OID.basicConstraints, true, sequence()),
      // An RSA key may also encipher: what RSA key exchange needs, so that a test can see it refused.
      extension(
        OID.keyUsage,
        true,
        keyUsage(leafKey === 'rsa' ? DIGITAL_SIGNATURE | KEY_ENCIPHERMENT : DIGITAL_SIGNATURE),
      ),
      extension(OID.extKeyUsage, false, sequence(objectId(OID.serverAuth))),
      extension(OID.subjectAltName, false, subjectAltNames(hosts)),
    ],
  });
  return {
    caCert: pem('CERTIFICATE', caCert),
    cert: pem('CERTIFICATE', cert),
    key: leaf.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

/** A CA's key pair, name and self-signed certificate, valid from `notBefore` to `notAfter`. */
function selfSignedCa(commonName: string, notBefore: Date, notAfter: Date) {
  const ca = ecKeyPair();
  const caName = name(commonName);
  const caCert = certificate({
    subject: caName,
    issuer: caName,
    publicKey: ca.publicKey,
    signer: ca.privateKey,
    notBefore,
    notAfter,
    extensions: [
      extension(OID.basicConstraints, true, sequence(boolean(true))),
      extension(OID.keyUsage, true, keyUsage(KEY_CERT_SIGN | DIGITAL_SIGNATURE)),
    ],
  });
  return { ca, caName, caCert };
}

/**
 * A CA and a client certificate it signed for `user` in `groups` (the subject's common name and
 * organizations), as kube-apiserver's `--client-ca-file` authenticates a user: for tests of client
 * certificate authentication.
 */
export function makeClientCertificates(
  user: string,
  groups: readonly string[] = [],
  { validDays = 1, now = new Date() }: { validDays?: number; now?: Date } = {},
): ServingCertificates {
  const notBefore = new Date(now.getTime() - 3_600_000);
  const notAfter = new Date(now.getTime() + validDays * 86_400_000);
  const { ca, caName, caCert } = selfSignedCa(`${user}-client-ca`, notBefore, notAfter);
  const leaf = ecKeyPair();
  const cert = certificate({
    subject: name(user, groups),
    issuer: caName,
    publicKey: leaf.publicKey,
    signer: ca.privateKey,
    notBefore,
    notAfter,
    extensions: [
      extension(OID.basicConstraints, true, sequence()),
      extension(OID.keyUsage, true, keyUsage(DIGITAL_SIGNATURE)),
      extension(OID.extKeyUsage, false, sequence(objectId(OID.clientAuth))),
    ],
  });
  return {
    caCert: pem('CERTIFICATE', caCert),
    cert: pem('CERTIFICATE', cert),
    key: leaf.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

const OID = {
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  subjectAltName: '2.5.29.17',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
};

// KeyUsage bits, numbered from the most significant bit of the first byte (RFC 5280 4.2.1.3).
const DIGITAL_SIGNATURE = 1 << 0;
const KEY_ENCIPHERMENT = 1 << 2;
const KEY_CERT_SIGN = 1 << 5;

interface CertificateFields {
  subject: Buffer;
  issuer: Buffer;
  publicKey: KeyObject;
  signer: KeyObject;
  notBefore: Date;
  notAfter: Date;
  extensions: Buffer[];
}

function certificate(fields: CertificateFields): Buffer {
  const algorithm = sequence(objectId(OID.ecdsaWithSha256));
  const serial = randomBytes(16);
  serial[0] = serial[0]! & 0x7f; // positive, as RFC 5280 requires
  const tbs = sequence(
    explicit(0, integer(Buffer.from([2]))), // v3
    integer(serial),
    algorithm,
    fields.issuer,
    sequence(time(fields.notBefore), time(fields.notAfter)),
    fields.subject,
    fields.publicKey.export({ type: 'spki', format: 'der' }),
    explicit(3, sequence(...fields.extensions)),
  );
  // node:crypto signs ECDSA as a DER Ecdsa-Sig-Value, the form X.509 wants.
  return sequence(tbs, algorithm, bitString(sign('sha256', tbs, fields.signer)));
}

function ecKeyPair(): { publicKey: KeyObject; privateKey: KeyObject } {
  return generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
}

/** A distinguished name: its organizations (a client certificate's groups), then its common name. */
function name(commonName: string, organizations: readonly string[] = []): Buffer {
  const attribute = (oid: string, value: string) =>
    set(sequence(objectId(oid), tlv(0x0c, Buffer.from(value, 'utf8'))));
  return sequence(
    ...organizations.map((organization) => attribute(OID.organization, organization)),
    attribute(OID.commonName, commonName),
  );
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return sequence(objectId(id), ...(critical ? [boolean(true)] : []), tlv(0x04, value));
}

function keyUsage(bits: number): Buffer {
  // Bit n of the usage is bit (7 - n) of the first byte; DER drops trailing zero bits.
  let byte = 0;
  for (let bit = 0; bit < 8; bit++) if (bits & (1 << bit)) byte |= 0x80 >> bit;
  let unused = 0;
  while (unused < 7 && (byte & (1 << unused)) === 0) unused++;
  return tlv(0x03, Buffer.from([unused, byte]));
}

function subjectAltNames(hosts: readonly string[]): Buffer {
  return sequence(
    ...hosts.map((host) => {
      const version = isIP(host);
      if (version === 0) return tlv(0x82, Buffer.from(host, 'ascii')); // [2] dNSName
      return tlv(0x87, ipBytes(host, version)); // [7] iPAddress
    }),
  );
}

function ipBytes(ip: string, version: number): Buffer {
  if (version === 4) return Buffer.from(ip.split('.').map(Number));
  // Expand `::` into the missing zero groups, then write eight 16-bit groups.
  const [head = '', tail] = ip.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups =
    tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  const bytes = Buffer.alloc(16);
  groups.forEach((group, i) => bytes.writeUInt16BE(parseInt(group, 16), i * 2));
  return bytes;
}

/** UTCTime until 2049, GeneralizedTime after, as RFC 5280 4.1.2.5 requires. */
function time(date: Date): Buffer {
  const digits = date.toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z'; // YYYYMMDDHHMMSSZ
  return date.getUTCFullYear() < 2050
    ? tlv(0x17, Buffer.from(digits.slice(2), 'ascii'))
    : tlv(0x18, Buffer.from(digits, 'ascii'));
}

function objectId(dotted: string): Buffer {
  const [first = 0, second = 0, ...rest] = dotted.split('.').map(Number);
  const bytes = [40 * first + second];
  for (const arc of rest) {
    const base128 = [arc & 0x7f];
    for (let value = Math.floor(arc / 128); value > 0; value = Math.floor(value / 128)) {
      base128.unshift((value & 0x7f) | 0x80);
    }
    bytes.push(...base128);
  }
  return tlv(0x06, Buffer.from(bytes));
}

function integer(value: Buffer): Buffer {
  let bytes = value;
  while (bytes.length > 1 && bytes[0] === 0 && (bytes[1]! & 0x80) === 0) bytes = bytes.subarray(1);
  if ((bytes[0]! & 0x80) !== 0) bytes = Buffer.concat([Buffer.from([0]), bytes]);
  return tlv(0x02, bytes);
}

const boolean = (value: boolean) => tlv(0x01, Buffer.from([value ? 0xff : 0]));
const bitString = (bytes: Buffer) => tlv(0x03, Buffer.concat([Buffer.from([0]), bytes]));
const sequence = (...content: Buffer[]) => tlv(0x30, ...content);
const set = (...content: Buffer[]) => tlv(0x31, ...content);
const explicit = (tag: number, ...content: Buffer[]) => tlv(0xa0 + tag, ...content);

/** A DER type-length-value: the length in short form below 128 bytes, long form above. */
function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  const length: number[] = [];
  if (body.length < 0x80) {
    length.push(body.length);
  } else {
    for (let n = body.length; n > 0; n = Math.floor(n / 256)) length.unshift(n & 0xff);
    length.unshift(0x80 | length.length);
  }
  return Buffer.concat([Buffer.from([tag, ...length]), body]);
}

function pem(label: string, der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}
