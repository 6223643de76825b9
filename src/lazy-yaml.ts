/**
 * The yaml package, required the first time it is needed. Loading it costs a cold `kubesmith manifests`
 * about 25 ms, and a run needs it only for data the direct YAML writer leaves to it, or for the PROJECT
 * domain in the hint of a missing +groupName.
 */
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';

let loaded: typeof Yaml | undefined;

export function yaml(): typeof Yaml {
  return (loaded ??= createRequire(import.meta.url)('yaml') as typeof Yaml);
}
