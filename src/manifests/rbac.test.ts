import { describe, expect, it } from 'vitest';
import { generateRoles } from './rbac.js';

describe('generateRoles (controller-gen v0.23 merge rules)', () => {
  it('merges verbs of the same resources and resources of the same verbs, sorted', () => {
    const roles = generateRoles([
      { groups: ['apps'], resources: ['deployments'], verbs: ['get', 'list'] },
      { groups: ['apps'], resources: ['deployments'], verbs: ['watch', 'get'] },
      { groups: ['apps'], resources: ['statefulsets'], verbs: ['get', 'list', 'watch'] },
      { groups: ['core'], resources: ['pods'], verbs: ['get'] },
      { groups: [''], resources: ['pods'], verbs: ['list'] },
    ]);
    expect(roles).toEqual([
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'manager-role' },
        rules: [
          { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
          {
            apiGroups: ['apps'],
            resources: ['deployments', 'statefulsets'],
            verbs: ['get', 'list', 'watch'],
          },
        ],
      },
    ]);
  });

  it('collapses verbs with * and merges groups of identical rules', () => {
    const [role] = generateRoles([
      { groups: ['a'], resources: ['x'], verbs: ['get', '*'] },
      { groups: ['b'], resources: ['y'], verbs: ['get'] },
      { groups: ['c'], resources: ['y'], verbs: ['get'] },
    ]);
    expect(role?.rules).toEqual([
      { apiGroups: ['a'], resources: ['x'], verbs: ['*'] },
      { apiGroups: ['b', 'c'], resources: ['y'], verbs: ['get'] },
    ]);
  });

  it('makes a Role per namespace and role name, sorted, after the ClusterRole', () => {
    const roles = generateRoles([
      { groups: [''], resources: ['secrets'], verbs: ['get'], namespace: 'b' },
      { groups: [''], resources: ['secrets'], verbs: ['get'], namespace: 'a', roleName: 'reader' },
      { urls: ['/metrics'], verbs: ['get'] },
    ]);
    expect(roles.map((r) => `${r.kind}/${r.metadata.namespace ?? ''}/${r.metadata.name}`)).toEqual([
      'ClusterRole//manager-role',
      'Role/a/reader',
      'Role/b/manager-role',
    ]);
    expect(roles[0]?.rules).toEqual([{ nonResourceURLs: ['/metrics'], verbs: ['get'] }]);
  });
});
