/**
 * Container image references, with the grammar of the distribution project's reference package (what
 * docker, containerd and kubelet parse): `[registry[:port]/]path[:tag][@algorithm:digest]`.
 */

export interface ImageReference {
  /** Registry and repository path: `registry.example.com/team/guestbook`. */
  name: string;
  tag?: string;
  digest?: string;
}

const component = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const domainComponent = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const domain = `(?:${domainComponent}(?:\\.${domainComponent})*|\\[[0-9a-fA-F:]+\\])(?::[0-9]+)?`;
const reference = new RegExp(
  `^((?:${domain}/)?${component}(?:/${component})*)(?::([\\w][\\w.-]{0,127}))?(?:@([A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}))?$`,
);

/** The parts of `text`, or undefined when it is not an image reference. */
export function parseImageReference(text: string): ImageReference | undefined {
  if (text.length > 255 + 128 + 72) return undefined;
  const match = reference.exec(text);
  if (!match) return undefined;
  const [, name, tag, digest] = match;
  // The reference package's bound on the name (registry and path together).
  if (name!.length > 255) return undefined;
  return { name: name!, ...(tag ? { tag } : {}), ...(digest ? { digest } : {}) };
}
