import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { HttpClient, requestUrl, resourcePath } from '../src/client.js';
import { ApiError, isAlreadyExists, isConflict, isNotFound } from '../src/errors.js';
import { groupVersion, resourceKind } from '../src/kinds.js';
import { localKubeConfig } from './local-server.js';

const Guestbook = groupVersion('webapp.example.com', 'v1').kind('Guestbook', { plural: 'guestbooks' });
const Pod = resourceKind({ group: '', version: 'v1', kind: 'Pod', plural: 'pods', namespaced: true });
const ClusterRole = resourceKind({
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  kind: 'ClusterRole',
  plural: 'clusterroles',
  namespaced: false,
});

describe('resourcePath', () => {
  it('builds the REST paths of core, grouped and cluster-scoped kinds', () => {
    expect(resourcePath(Pod, 'default', 'web-1')).toBe('/api/v1/namespaces/default/pods/web-1');
    expect(resourcePath(Pod)).toBe('/api/v1/pods');
    expect(resourcePath(Guestbook, 'shop', 'g', 'status')).toBe(
      '/apis/webapp.example.com/v1/namespaces/shop/guestbooks/g/status',
    );
    expect(resourcePath(ClusterRole, 'ignored', 'admin')).toBe(
      '/apis/rbac.authorization.k8s.io/v1/clusterroles/admin',
    );
  });

  it('gives core kinds the apiVersion v1 and others group/version', () => {
    expect(Pod.apiVersion).toBe('v1');
    expect(Guestbook.apiVersion).toBe('webapp.example.com/v1');
    expect(Guestbook.namespaced).toBe(true);
  });
});

describe('ApiError.fromResponse', () => {
  it('takes the reason and message from a Status body', () => {
    const body = JSON.stringify({
      kind: 'Status',
      status: 'Failure',
      reason: 'AlreadyExists',
      message: 'guestbooks.webapp.example.com "g" already exists',
      code: 409,
    });
    const err = ApiError.fromResponse(409, body, 'create Guestbook');
    expect(err.message).toBe('guestbooks.webapp.example.com "g" already exists');
    expect(isAlreadyExists(err)).toBe(true);
    expect(isConflict(err)).toBe(false);
  });

  it('names the request when the body is not a Status', () => {
    const err = ApiError.fromResponse(404, '404 page not found', 'get Guestbook g');
    expect(isNotFound(err)).toBe(true);
    expect(err.message).toBe('get Guestbook g: HTTP 404: 404 page not found');
  });
});

describe('requestUrl', () => {
  it('keeps a path the server URL has, as behind a proxy', () => {
    expect(requestUrl('https://10.0.0.1:6443', '/api/v1/pods').href).toBe(
      'https://10.0.0.1:6443/api/v1/pods',
    );
    expect(
      requestUrl('https://rancher.example.com/k8s/clusters/c-1/', '/apis/apps/v1/deployments').href,
    ).toBe('https://rancher.example.com/k8s/clusters/c-1/apis/apps/v1/deployments');
  });
});

describe('HttpClient and names that are not path segments', () => {
  const ConfigMap = resourceKind({
    group: '',
    version: 'v1',
    kind: 'ConfigMap',
    plural: 'configmaps',
    namespaced: true,
  });

  it("refuses '.', '..', '/' and '%' in names and namespaces before sending anything, as client-go", async () => {
    const seen: string[] = [];
    const server = http.createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      res.writeHead(404, { 'Content-Type': 'application/json' }).end('{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = new HttpClient(localKubeConfig(server));
    try {
      // Sent, `DELETE /api/v1/namespaces/default/configmaps/..` would be `DELETE /api/v1/namespaces/default/`.
      await expect(client.delete(ConfigMap, '..', 'default')).rejects.toThrow(
        `ConfigMap: invalid resource name "..": may not be '..'`,
      );
      await expect(client.get(ConfigMap, '.', 'default')).rejects.toThrow(`may not be '.'`);
      await expect(client.get(ConfigMap, 'a/b', 'default')).rejects.toThrow(
        `invalid resource name "a/b": may not contain '/'`,
      );
      await expect(client.patch(ConfigMap, '%2e%2e', 'default', {})).rejects.toThrow(`may not contain '%'`);
      await expect(client.get(ConfigMap, '', 'default')).rejects.toThrow('resource name may not be empty');
      await expect(client.get(ConfigMap, 'web', '..')).rejects.toThrow(
        `ConfigMap: invalid namespace "..": may not be '..'`,
      );
      await expect(client.list(ConfigMap, { namespace: '../..' })).rejects.toThrow('invalid namespace');
      await expect(client.create(ConfigMap, { metadata: { name: 'web', namespace: '..' } })).rejects.toThrow(
        'invalid namespace',
      );
      await expect(
        client.update(ConfigMap, { metadata: { name: '..', namespace: 'default' } }),
      ).rejects.toThrow('invalid resource name');
      const error = await client.delete(ConfigMap, '..', 'default').catch((err: Error) => err);
      expect((error as Error).message).toMatch(/\nhint: /);
      expect(seen).toEqual([]);
      // A valid name still goes out.
      await expect(client.get(ConfigMap, 'web', 'default')).rejects.toThrow();
      expect(seen).toEqual(['GET /api/v1/namespaces/default/configmaps/web']);
    } finally {
      client.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
