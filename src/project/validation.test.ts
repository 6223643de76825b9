import { describe, expect, it } from 'vitest';
import {
  validateDomain,
  validateGroup,
  validateKind,
  validateOwner,
  validatePlural,
  validateProjectName,
  validateVersion,
} from './validation.js';

const subdomainRule =
  "a DNS-1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const dns1035Rule =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

describe('kind', () => {
  it.each(['Guestbook', 'CronJob', 'A', 'Pod', 'X509Cert'])('accepts %s', (kind) => {
    expect(validateKind(kind)).toBeUndefined();
  });
  it.each([
    ['guestbook', 'invalid Kind: guestbook: must start with an uppercase character'],
    ['Guest_book', `invalid Kind: Guest_book: ${dns1035Rule}`],
    ['1Guestbook', `invalid Kind: 1Guestbook: ${dns1035Rule}`],
    ['', 'kind cannot be empty'],
  ])('rejects %j', (kind, message) => {
    expect(validateKind(kind)?.message).toBe(message);
  });
  it.each(['My-Kind', 'Guest-Book'])('rejects %s: not a TypeScript identifier', (kind) => {
    expect(validateKind(kind)?.message).toBe(
      `invalid Kind: ${kind}: must be PascalCase, letters and digits only`,
    );
  });
  it.each(['Manager', 'Client', 'Promise', 'Object', 'Record'])(
    'rejects %s: the generated code uses it',
    (kind) => {
      expect(validateKind(kind)).toEqual({
        message: `invalid Kind: ${kind}: the generated TypeScript already uses the name ${kind}`,
        hint: expect.stringMatching(
          new RegExp(`^name the kind differently, e.g. --kind My${kind}: .* reserved`),
        ),
      });
    },
  );
  it('rejects a kind longer than 63 characters', () => {
    expect(validateKind(`A${'b'.repeat(63)}`)?.message).toMatch(/must be no more than 63 characters/);
  });
});

describe('owner', () => {
  it('accepts one line of text, quotes and comment closers included', () => {
    expect(validateOwner('The "Guestbook" */ Authors')).toBeUndefined();
  });
  it.each(['a\nb', 'a\rb', 'a\tb', 'a\u2028b'])('rejects %j', (owner) => {
    expect(validateOwner(owner)?.message).toMatch(/contains a line break or control character$/);
  });
});

describe('group', () => {
  it.each([
    ['webapp', 'example.com'],
    ['batch', ''],
    ['my-group', 'my.domain'],
  ])('accepts %s with domain %j', (group, domain) => {
    expect(validateGroup(group, domain)).toBeUndefined();
  });
  it.each([
    ['Web_App', 'example.com', `either Group or Domain is invalid: Web_App.example.com: ${subdomainRule}`],
    ['web app', 'example.com', `either Group or Domain is invalid: web app.example.com: ${subdomainRule}`],
    ['', '', 'group cannot be empty if the domain is empty'],
  ])('rejects %j in %j', (group, domain, message) => {
    expect(validateGroup(group, domain)?.message).toBe(message);
  });
});

describe('version', () => {
  it.each(['v1', 'v1alpha1', 'v2beta3'])('accepts %s', (version) => {
    expect(validateVersion(version)).toBeUndefined();
  });
  it.each([
    ['V1', 'Version must respect DNS-1123 (was V1)'],
    ['v_1', 'Version must respect DNS-1123 (was v_1)'],
    ['', 'version cannot be empty'],
  ])('rejects %j', (version, message) => {
    expect(validateVersion(version)?.message).toBe(message);
  });
});

describe('domain', () => {
  it.each(['example.com', 'my.domain', 'a.b-c.io'])('accepts %s', (domain) => {
    expect(validateDomain(domain)).toBeUndefined();
  });
  it.each([
    ['-bad.com', `domain (-bad.com) is invalid: ${subdomainRule}`],
    ['Example.com', `domain (Example.com) is invalid: ${subdomainRule}`],
    ['bad.com.', `domain (bad.com.) is invalid: ${subdomainRule}`],
  ])('rejects %j', (domain, message) => {
    expect(validateDomain(domain)?.message).toBe(message);
  });
});

describe('project name', () => {
  it.each(['guestbook', 'my-operator', 'op2'])('accepts %s', (name) => {
    expect(validateProjectName(name)).toBeUndefined();
  });
  it('rejects upper case and underscores', () => {
    expect(validateProjectName('My_Operator')?.message).toMatch(
      /^project name \(My_Operator\) is invalid: a DNS-1123 label/,
    );
  });
  it('rejects names that would make a namespace longer than 63 characters', () => {
    expect(validateProjectName('a'.repeat(57))?.message).toMatch(/must be no more than 56 characters/);
  });
});

describe('plural', () => {
  it('accepts lower-case plurals and rejects others', () => {
    expect(validatePlural('guestbooks')).toBeUndefined();
    expect(validatePlural('Guestbooks')?.message).toBe(`invalid plural: Guestbooks: ${dns1035Rule}`);
  });
});
