/**
 * Where webhooks are served: the paths kubebuilder and controller-runtime derive from a kind, so that the
 * scaffolded registration and the `+kubebuilder:webhook` markers (and so the generated configurations)
 * agree. The core group is empty, which gives kubebuilder's double dash: `/validate--v1-pod`.
 */
import type { ResourceKind } from '../kinds.js';

/** The path of every conversion webhook: one handler converts all the operator's kinds. */
export const CONVERT_PATH = '/convert';

type Kind = Pick<ResourceKind<unknown>, 'group' | 'version' | 'kind'>;

function suffix(kind: Kind): string {
  return `${kind.group.replace(/\./g, '-')}-${kind.version}-${kind.kind.toLowerCase()}`;
}

/** `/mutate-webapp-example-com-v1-guestbook`: the defaulting webhook of `kind`. */
export function mutatePath(kind: Kind): string {
  return `/mutate-${suffix(kind)}`;
}

/** `/validate-webapp-example-com-v1-guestbook`: the validating webhook of `kind`. */
export function validatePath(kind: Kind): string {
  return `/validate-${suffix(kind)}`;
}
