/**
 * The API server's rules for the names in a CRD (apiextensions-apiserver's validation.go): its group, its
 * versions, its kind and the names of its resource. The generator checks them where they are written (a
 * marker, a type's name) because they do not only name objects: the group and the plural name the CRD's
 * file (`config/crd/bases/<group>_<plural>.yaml`), and a name such as `../../x` would send it out of the
 * project. Each rule is a sentence saying what is allowed, for the diagnostics.
 */

const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** A CRD's name is `<plural>.<group>`, a DNS-1123 subdomain: at most this long. */
export const MAX_CRD_NAME = 253;
/** A kind's list kind is the kind and `List`, itself a label of at most 63 characters. */
const MAX_KIND = 63 - 'List'.length;

/** Plural, singular, short names, categories and version names. */
export const LABEL_RULE =
  "a DNS-1035 label: at most 63 lower-case letters, digits and '-', starting with a letter and ending with a letter or digit";
export const GROUP_RULE =
  "a DNS-1123 subdomain with at least one dot: at most 253 characters of dot-separated lower-case letters, digits and '-', each part starting and ending with a letter or digit";
export const KIND_RULE = `letters and digits, starting with a letter, at most ${MAX_KIND} characters (the list kind adds List)`;

export function isLabel(name: string): boolean {
  return name.length <= 63 && DNS1035_LABEL.test(name);
}

export function isGroup(group: string): boolean {
  return group.length <= 253 && DNS1123_SUBDOMAIN.test(group) && group.includes('.');
}

/** The API server lower-cases a kind and asks for a DNS-1035 label; TypeScript's names allow `_` and `$`. */
export function isKindName(kind: string): boolean {
  return kind.length <= MAX_KIND && isLabel(kind.toLowerCase());
}
