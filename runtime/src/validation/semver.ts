/**
 * Semantic versions as Kubernetes' CEL semver library reads them (k8s.io/apiserver/pkg/cel/library/
 * semverlib.go, on blang/semver v4): strict `MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]` without leading
 * zeros; with `normalize`, a leading `v`, a missing minor or patch and leading zeros are forgiven first.
 */
export class Semver {
  constructor(
    readonly major: bigint,
    readonly minor: bigint,
    readonly patch: bigint,
    readonly pre: readonly string[],
  ) {}
}

const NUMBER = /^(0|[1-9][0-9]*)$/;
const IDENTIFIER = /^[0-9A-Za-z-]+$/;
const LOOSE = /^(\d+)(?:\.(\d+))?(?:\.(\d+))?((?:[-+].*)?)$/;

/** The version `text` names, or undefined when it is not one. */
export function parseSemver(text: string, normalize = false): Semver | undefined {
  let s = text;
  if (normalize) {
    s = s.startsWith('v') ? s.slice(1) : s;
    const m = LOOSE.exec(s);
    if (!m) return undefined;
    const num = (d: string | undefined) => (d === undefined ? '0' : String(BigInt(d)));
    s = `${num(m[1])}.${num(m[2])}.${num(m[3])}${m[4] ?? ''}`;
  }
  const plus = s.indexOf('+');
  if (plus >= 0) {
    const build = s.slice(plus + 1).split('.');
    if (!build.every((b) => IDENTIFIER.test(b))) return undefined;
    s = s.slice(0, plus);
  }
  const dash = s.indexOf('-');
  const pre = dash >= 0 ? s.slice(dash + 1).split('.') : [];
  if (dash >= 0) s = s.slice(0, dash);
  if (!pre.every((p) => IDENTIFIER.test(p) && (!/^[0-9]+$/.test(p) || NUMBER.test(p)))) return undefined;
  const parts = s.split('.');
  if (parts.length !== 3 || !parts.every((p) => NUMBER.test(p))) return undefined;
  return new Semver(BigInt(parts[0]!), BigInt(parts[1]!), BigInt(parts[2]!), pre);
}

/** -1, 0 or 1, by semver precedence (build metadata ignored). */
export function compareSemver(a: Semver, b: Semver): bigint {
  const sign = (x: bigint | number) => (x < 0 ? -1n : x > 0 ? 1n : 0n);
  for (const k of ['major', 'minor', 'patch'] as const) if (a[k] !== b[k]) return sign(a[k] - b[k]);
  if (!a.pre.length || !b.pre.length) return sign(b.pre.length - a.pre.length);
  for (let i = 0; i < Math.min(a.pre.length, b.pre.length); i++) {
    const [x, y] = [a.pre[i]!, b.pre[i]!];
    if (x === y) continue;
    const [xn, yn] = [/^[0-9]+$/.test(x), /^[0-9]+$/.test(y)];
    if (xn && yn) return sign(BigInt(x) - BigInt(y));
    if (xn !== yn) return xn ? -1n : 1n;
    return x < y ? -1n : 1n;
  }
  return sign(a.pre.length - b.pre.length);
}
