/**
 * Container image references, with the grammar of github.com/distribution/reference (what docker,
 * containerd and kubelet parse): `[registry[:port]/]path[:tag][@algorithm:digest]`. `create api --image`
 * checks the operand's image with it, `build-installer` and `helm-chart` the manager's.
 */
import { UsageError } from '../errors.js';

export interface ImageReference {
  /** Registry and repository path: `registry.example.com/team/guestbook`. */
  name: string;
  tag?: string;
  digest?: string;
}

/** An image reference longer than this is refused (distribution/reference allows 255 for the name). */
const MAX_IMAGE_LENGTH = 512;

const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const DOMAIN = `(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*|\\[[a-fA-F0-9:]+\\])(?::[0-9]+)?`;
const PATH_COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const TAG = '[\\w][\\w.-]{0,127}';
const DIGEST = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}';
const REFERENCE = new RegExp(
  `^(?:(${DOMAIN})/)?(${PATH_COMPONENT}(?:/${PATH_COMPONENT})*)(?::(${TAG}))?(?:@(${DIGEST}))?$`,
);

/** The parts of `text`, or undefined when it is not an image reference. */
function parseImageReference(text: string): ImageReference | undefined {
  if (text.length > MAX_IMAGE_LENGTH) return undefined;
  const match = REFERENCE.exec(text);
  if (!match) return undefined;
  const [, domain, path, tag, digest] = match;
  const name = domain ? `${domain}/${path!}` : path!;
  // The reference package's bound on the name (registry and path together).
  if (name.length > 255) return undefined;
  return { name, ...(tag ? { tag } : {}), ...(digest ? { digest } : {}) };
}

/**
 * The image of a `--img` flag (or `$IMG`) of `build-installer` and `helm-chart`: its parts, or a usage
 * error (exit 2) that says what a reference looks like.
 */
export function imageFlag(text: string): ImageReference {
  const image = parseImageReference(text);
  if (!image) {
    throw new UsageError(
      `invalid image reference "${text}"`,
      'give [registry[:port]/]name[:tag][@sha256:digest] with a lower-case name, e.g. registry.example.com/guestbook-operator:v0.1.0',
    );
  }
  return image;
}

/** Why `image` is not a reference a container runtime pulls, or undefined when it is one. */
export function imageProblem(image: string): string | undefined {
  if (image === '') return 'it is empty';
  if (image.length > MAX_IMAGE_LENGTH) return `it is longer than ${MAX_IMAGE_LENGTH} characters`;
  if (/\s/.test(image)) return 'it contains white space';
  if (!REFERENCE.test(image)) {
    if (/[A-Z]/.test(image.split(/[:@]/)[0]?.split('/').slice(-1)[0] ?? ''))
      return 'the repository name must be lower case';
    return 'it is not [registry/]name[:tag][@digest]';
  }
  if (!parseImageReference(image)) return 'the name is longer than 255 characters';
  return undefined;
}
