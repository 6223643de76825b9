/**
 * The copy of an imported CRD a project keeps in config/crd/external (layout.ts): the CRD envtest installs
 * for the project's tests of the imported kinds, and where `create api` reads their plural and scope. It
 * is written from what readCrd checked, not from the input as given: every version (the API server needs
 * the storage version whatever `--version` imported), the names, the scope, the annotations the API server
 * acts on; no status, no cluster fields (a CRD read from a cluster has them), and no `conversion`: a
 * conversion webhook of the CRD's owner runs in no test cluster, and without one the API server converts
 * between versions by their apiVersion alone.
 */
import type { Crd, CrdVersion } from './crd.js';
import { writeYamlDocuments } from '../manifests/yaml.js';

const HEADER =
  '# Copied by kubesmith import crd: the CRD envtest installs for the imported kinds. Import again rather than edit.';

/** The file of `crd`'s copy in config/crd/external: `<group>_<plural>.yaml`. */
export const crdCopyName = (crd: Pick<Crd, 'group' | 'plural'>): string => `${crd.group}_${crd.plural}.yaml`;

export function crdCopy(crd: Crd): string {
  const names = {
    kind: crd.kind,
    listKind: `${crd.kind}List`,
    plural: crd.plural,
    singular: crd.singular,
    ...(crd.shortNames.length > 0 ? { shortNames: crd.shortNames } : {}),
    ...(crd.categories.length > 0 ? { categories: crd.categories } : {}),
  };
  const metadata = {
    name: `${crd.plural}.${crd.group}`,
    ...(Object.keys(crd.annotations).length > 0 ? { annotations: crd.annotations } : {}),
  };
  const document = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata,
    spec: { group: crd.group, names, scope: crd.scope, versions: crd.versions.map(versionOf) },
  };
  return writeYamlDocuments([document], HEADER);
}

function versionOf(version: CrdVersion): Record<string, unknown> {
  return {
    name: version.name,
    served: version.served,
    storage: version.storage,
    ...(version.deprecated ? { deprecated: true } : {}),
    ...(version.deprecationWarning !== undefined ? { deprecationWarning: version.deprecationWarning } : {}),
    schema: { openAPIV3Schema: version.schema },
    ...(version.subresources ? { subresources: version.subresources } : {}),
    ...(version.additionalPrinterColumns
      ? { additionalPrinterColumns: version.additionalPrinterColumns }
      : {}),
    ...(version.selectableFields ? { selectableFields: version.selectableFields } : {}),
  };
}
