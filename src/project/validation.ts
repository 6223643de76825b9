/**
 * Naming rules for domains, groups, versions, kinds, plurals and project names: kubebuilder's rules,
 * which are Kubernetes' DNS rules (k8s.io/apimachinery/pkg/util/validation), with messages that say
 * what was wrong and how to fix it.
 */

const dns1123Label = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const dns1123Subdomain = `${dns1123Label}(\\.${dns1123Label})*`;
const dns1035Label = '[a-z]([-a-z0-9]*[a-z0-9])?';

interface DnsRule {
  readonly pattern: RegExp;
  readonly source: string;
  readonly maxLength: number;
  readonly description: string;
  readonly example: string;
}

const rules = {
  // 56 = 63 - len("-system"): the project name becomes the namespace `<name>-system`.
  projectLabel: {
    pattern: new RegExp(`^${dns1123Label}$`),
    source: dns1123Label,
    maxLength: 56,
    description:
      "a DNS-1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
    example: 'my-operator',
  },
  subdomain: {
    pattern: new RegExp(`^${dns1123Subdomain}$`),
    source: dns1123Subdomain,
    maxLength: 253,
    description:
      "a DNS-1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
    example: 'example.com',
  },
  dns1035: {
    pattern: new RegExp(`^${dns1035Label}$`),
    source: dns1035Label,
    maxLength: 63,
    description:
      "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
    example: 'my-name',
  },
} satisfies Record<string, DnsRule>;

function check(rule: DnsRule, value: string): string[] {
  const problems: string[] = [];
  if (value.length > rule.maxLength) problems.push(`must be no more than ${rule.maxLength} characters`);
  if (!rule.pattern.test(value)) {
    problems.push(
      `${rule.description} (e.g. '${rule.example}', regex used for validation is '${rule.source}')`,
    );
  }
  return problems;
}

/** A failed naming rule: the message names the value; the hint says what would be accepted. */
export interface NameProblem {
  message: string;
  hint: string;
}

export function validateDomain(domain: string): NameProblem | undefined {
  const problems = check(rules.subdomain, domain);
  if (problems.length === 0) return undefined;
  return {
    message: `domain (${domain}) is invalid: ${problems.join('; ')}`,
    hint: 'use a lower-case DNS name you control, e.g. --domain example.com',
  };
}

export function validateProjectName(name: string): NameProblem | undefined {
  const problems = check(rules.projectLabel, name);
  if (problems.length === 0) return undefined;
  return {
    message: `project name (${name}) is invalid: ${problems.join('; ')}`,
    hint: 'pass --project-name with a lower-case name such as my-operator (it defaults to the directory name)',
  };
}

/** The group qualified with the domain (`webapp.example.com`) must be a DNS-1123 subdomain. */
export function validateGroup(group: string, domain: string): NameProblem | undefined {
  const qualified = [group, domain].filter((part) => part !== '').join('.');
  if (qualified === '') {
    return {
      message: 'group cannot be empty if the domain is empty',
      hint: 'pass --group, e.g. --group webapp',
    };
  }
  const problems = check(rules.subdomain, qualified);
  if (problems.length === 0) return undefined;
  return {
    message: `either Group or Domain is invalid: ${qualified}: ${problems.join('; ')}`,
    hint: 'groups are lower-case DNS labels, e.g. --group webapp',
  };
}

export function validateVersion(version: string): NameProblem | undefined {
  if (version === '') {
    return { message: 'version cannot be empty', hint: 'pass --version, e.g. --version v1 or v1alpha1' };
  }
  if (check(rules.subdomain, version).length === 0) return undefined;
  return {
    message: `Version must respect DNS-1123 (was ${version})`,
    hint: 'versions are lower-case, e.g. v1, v1beta1, v2alpha1',
  };
}

/**
 * Names a kind cannot take: the generated files import these names or use these globals, so a kind of that
 * name (its type is imported beside them, or shadows the global) makes a project that does not compile, or
 * a trap for the code the user writes next to it. Kubernetes allows them; TypeScript does not.
 */
export const RESERVED_KINDS: ReadonlySet<string> = new Set([
  // Imported or declared beside the kind's own type by the generated types, controllers, webhooks and
  // tests (test/cli/kinds.test.ts checks the templates for more).
  ...['Manager', 'Client', 'Reconciler', 'ReconcileContext', 'Request', 'Result', 'Reader', 'ApiError'],
  ...['Condition', 'ObjectMeta', 'KubernetesObject', 'ResourceKind', 'GroupVersion', 'InstalledWebhooks'],
  ...['FakeClient', 'FakeRecorder', 'DeploymentKind', 'ServiceKind', 'PodKind', 'ReplicaSetKind'],
  ...['V1Container', 'V1Deployment', 'V1DeploymentCondition', 'V1Service', 'V1EnvVar'],
  ...['V1ResourceRequirements', 'V1Pod', 'V1ReplicaSet'],
  ...['AVAILABLE', 'PROGRESSING', 'DEGRADED', 'FINALIZER', 'PORT'],
  // ECMAScript's global objects.
  ...['Object', 'Function', 'Array', 'Number', 'Boolean', 'String', 'Symbol', 'BigInt', 'Date', 'RegExp'],
  ...['Error', 'AggregateError', 'EvalError', 'RangeError', 'ReferenceError', 'SyntaxError', 'TypeError'],
  ...['URIError', 'JSON', 'Math', 'Reflect', 'Proxy', 'Promise', 'Map', 'Set', 'WeakMap', 'WeakSet'],
  ...['WeakRef', 'FinalizationRegistry', 'ArrayBuffer', 'SharedArrayBuffer', 'DataView', 'Atomics', 'Intl'],
  ...['Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array'],
  ...['Uint32Array', 'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array', 'Infinity', 'NaN'],
  // Node's globals that generated code uses.
  ...['Buffer', 'URL', 'URLSearchParams', 'NodeJS', 'AbortController', 'AbortSignal'],
  // TypeScript's global types.
  ...['Partial', 'Required', 'Readonly', 'Record', 'Pick', 'Omit', 'Exclude', 'Extract', 'NonNullable'],
  ...['Parameters', 'ReturnType', 'InstanceType', 'ConstructorParameters', 'Awaited', 'NoInfer'],
  ...['ThisType', 'Uppercase', 'Lowercase', 'Capitalize', 'Uncapitalize', 'PropertyKey', 'PromiseLike'],
  ...['ArrayLike', 'Iterable', 'Iterator', 'IterableIterator', 'AsyncIterable', 'AsyncIterator'],
  ...['Generator', 'AsyncGenerator', 'ReadonlyArray', 'ReadonlyMap', 'ReadonlySet'],
]);

/**
 * kubebuilder's rules (a DNS-1035 label once lower-cased, an upper-case first letter), and a TypeScript
 * identifier: the kind names a type, a class (`<Kind>Reconciler`), variables and files of the generated code.
 * A kind read from PROJECT is held to these; a new kind (validateKind) also to RESERVED_KINDS.
 */
export function validateKindName(kind: string): NameProblem | undefined {
  const hint = 'kinds are PascalCase names of letters and digits, e.g. --kind Guestbook';
  if (kind === '') return { message: 'kind cannot be empty', hint };
  const problems = check(rules.dns1035, kind.toLowerCase());
  if (problems.length > 0) return { message: `invalid Kind: ${kind}: ${problems.join('; ')}`, hint };
  const first = kind.charAt(0);
  if (first === first.toLowerCase()) {
    return { message: `invalid Kind: ${kind}: must start with an uppercase character`, hint };
  }
  if (!/^[A-Z][A-Za-z0-9]*$/.test(kind)) {
    return { message: `invalid Kind: ${kind}: must be PascalCase, letters and digits only`, hint };
  }
  return undefined;
}

/** The kind of `create api` and `create webhook`: validateKindName's rules, and none of RESERVED_KINDS. */
export function validateKind(kind: string): NameProblem | undefined {
  const problem = validateKindName(kind);
  if (problem) return problem;
  if (RESERVED_KINDS.has(kind)) {
    return {
      message: `invalid Kind: ${kind}: the generated TypeScript already uses the name ${kind}`,
      hint:
        `name the kind differently, e.g. --kind My${kind}: the names the generated code imports and the ` +
        'globals of JavaScript, Node and TypeScript are reserved (README.md, kubesmith create api)',
    };
  }
  return undefined;
}

export function validatePlural(plural: string): NameProblem | undefined {
  const problems = check(rules.dns1035, plural);
  if (problems.length === 0) return undefined;
  return {
    message: `invalid plural: ${plural}: ${problems.join('; ')}`,
    hint: 'plurals are lower-case, e.g. --plural guestbooks',
  };
}

// eslint-disable-next-line no-control-regex -- the control characters are what it looks for
const LINE_BREAKS_AND_CONTROLS = /[\u0000-\u001f\u007f\u0085\u2028\u2029]/;

/** The longest --owner: a copyright line, not a document. */
const MAX_OWNER_LENGTH = 200;

/**
 * The copyright holder of `init --owner`: one line of text (it goes into every file's license comment and
 * the README), so no line breaks or other control characters.
 */
export function validateOwner(owner: string): NameProblem | undefined {
  const hint = 'give the holder on one line, e.g. --owner "The Guestbook Authors"';
  if (LINE_BREAKS_AND_CONTROLS.test(owner)) {
    // The CLI prints the message with its line separators escaped (printable.ts), as any error.
    return { message: `--owner ${JSON.stringify(owner)} contains a line break or control character`, hint };
  }
  if (owner.length > MAX_OWNER_LENGTH) {
    return { message: `--owner is longer than ${MAX_OWNER_LENGTH} characters`, hint };
  }
  return undefined;
}

/**
 * The module of a resource's type as PROJECT records it: `@kubernetes/client-node`, or a file of the
 * project given relative to its root, which no `..`, absolute path or odd character leads out of.
 */
export function validateResourcePath(modulePath: string): NameProblem | undefined {
  if (modulePath === '@kubernetes/client-node') return undefined;
  const segments = modulePath.split('/');
  const inside =
    /^[A-Za-z0-9._/-]{1,512}$/.test(modulePath) &&
    segments.every((segment) => segment !== '' && segment !== '.' && segment !== '..');
  if (inside) return undefined;
  return {
    message: `path ${JSON.stringify(modulePath)} is not a file of the project (a relative path without '..') nor @kubernetes/client-node`,
    hint: 'give the types file relative to the project root, e.g. src/api/webapp/v1/guestbook.types.ts',
  };
}

/**
 * PROJECT's cliVersion: a semver version, with build metadata for a build from a checkout
 * (`0.1.0+1a2b3c4d5e6f`). `alpha update` makes it an npm spec (`kubesmith@<cliVersion>`), so nothing but
 * semver's characters.
 */
export function validateCliVersion(version: string): NameProblem | undefined {
  if (/^[0-9]{1,9}\.[0-9]{1,9}\.[0-9]{1,9}(?:-[0-9A-Za-z.-]{1,64})?(?:\+[0-9A-Za-z.-]{1,64})?$/.test(version))
    return undefined;
  return {
    message: `${JSON.stringify(version.slice(0, 80))} is not a semver version`,
    hint: 'PROJECT records the version of the kubesmith that made the project, e.g. cliVersion: 0.1.0; restore it from git (`git diff PROJECT`)',
  };
}
