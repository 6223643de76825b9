/**
 * The Ship kind of the envtest webhook tests, in two versions (v2 nests v1's fields under `people`), each
 * test file with a group of its own.
 */
import { groupVersion } from '../../src/kinds.js';

export interface ShipV1 {
  apiVersion: string;
  kind: string;
  metadata: { name?: string; namespace?: string };
  spec: { crew?: number; captain?: string };
}
export interface ShipV2 {
  apiVersion: string;
  kind: string;
  metadata: { name?: string; namespace?: string };
  spec: { people?: { crew?: number; captain?: string } };
}

/** The Ship kinds of `group`, its CRD's name, and the CRD (v1 stored, v2 served). */
export function ships(group: string) {
  const schema = (spec: object) => ({
    openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: spec } } },
  });
  const crew = { crew: { type: 'integer' }, captain: { type: 'string' } };
  const crdName = `ships.${group}`;
  return {
    V1: groupVersion(group, 'v1').kind<ShipV1>('Ship', { plural: 'ships' }),
    V2: groupVersion(group, 'v2').kind<ShipV2>('Ship', { plural: 'ships' }),
    crdName,
    crd: {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: crdName },
      spec: {
        group,
        names: { kind: 'Ship', listKind: 'ShipList', plural: 'ships', singular: 'ship' },
        scope: 'Namespaced',
        versions: [
          { name: 'v1', served: true, storage: true, schema: schema(crew) },
          {
            name: 'v2',
            served: true,
            storage: false,
            schema: schema({ people: { type: 'object', properties: crew } }),
          },
        ],
      },
    },
  };
}
