/**
 * Text a stranger's pull request may put into a project (property names, descriptions, enum values...):
 * what means something to Go templates, to YAML, to go-yaml (kubectl, helm and the API server read YAML
 * with it) or to kubesmith's chart writer itself.
 */
import fc from 'fast-check';

export const HOSTILE = [
  ...['{{ .Release.Name }}', '{{- fail "x" -}}', '{{/* c */}}', '}}', '{{{', '{{}}', '{{ "{{" }}', '{', '@'],
  ...[
    '@@ks:FN@@',
    '@@ks:NS@@',
    '@@ks:R0@@',
    '@@ks:L0@@',
    '@@@ks:R0@@@',
    '@@ks:LB@@',
    '@@ks:XX@@',
    '@@ks:AT@@',
  ],
  ...['a\n{{ .Values }}\n  b', '|\n- x', '---\n', 'yes', 'on', '<<', '~', '-0x1F', '1_', '- x', '? y'],
  ...['# z', 'a: b', '"q"', "'s'", '\\', 'tab\tin', 'line\u2028sep', 'nel\u0085', 'c1\u0080', 'bom\ufeff'],
  ...['__proto__', 'demo-system', 'demo-controller-manager', 'x demo-system y', '日本語 😀'],
  ...['{demo-system', '{{{demo-controller-manager}', 'x{demo-controller-manager{demo-system}'],
];

/** Strings made of HOSTILE's pieces and of any code points. */
export const hostileText = fc
  .array(fc.oneof(fc.constantFrom(...HOSTILE), fc.string({ unit: 'binary', maxLength: 6 })), { maxLength: 4 })
  .map((parts) => parts.join(''));

/** A CRD whose property names, descriptions, defaults and enum values are `texts`. */
export function hostileCrd(texts: readonly string[], plural = 'widgets'): Record<string, unknown> {
  const properties = Object.fromEntries(
    texts.map((text) => [text, { description: text, type: 'string', default: text, enum: [text, 'ok'] }]),
  );
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { annotations: { 'kubesmith.dev/version': '0.1.0' }, name: `${plural}.demo.example.com` },
    spec: {
      group: 'demo.example.com',
      names: { kind: 'Widget', plural },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1',
          schema: { openAPIV3Schema: { description: texts.join('\n'), properties, type: 'object' } },
          served: true,
          storage: true,
        },
      ],
    },
  };
}
