/**
 * A stand-in CRD for a kind the operator's manifests use but do not define (cert-manager's Certificate and
 * Issuer, the Prometheus operator's ServiceMonitor): any spec is accepted, so an apply or a dry run checks
 * everything else of such an object (names, namespaces, labels) but not its spec.
 */
export function standInCrd(group: string, kind: string, plural: string): object {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  };
}
