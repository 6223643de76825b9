/** `kubesmith create api --image`: the deploy-image scaffold, and the inputs it refuses. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { read, removeTemp, run, snapshot, tempDir } from '../helpers/run.js';

let dir: string;
beforeEach(async () => {
  dir = await tempDir('demo');
  const init = await run(dir, 'init', '--domain', 'example.com', '--skip-install');
  expect(init.code).toBe(0);
});
afterEach(async () => {
  await removeTemp(dir);
});

const api = ['create', 'api', '--group', 'demo', '--version', 'v1', '--kind', 'DemoApplication'];
const image = [...api, '--image', 'nginx:1.27', '--image-container-port', '80'];

interface Manifest {
  scripts: Record<string, string>;
}

describe('kubesmith create api --image', () => {
  it('scaffolds the types, a sample, the controller and its tests, and runs npm test in cluster mode', async () => {
    const result = await run(
      dir,
      ...image,
      '--service-type',
      'NodePort',
      '--node-port',
      '30002',
      '--run-as-user',
      '1001',
      '--image-container-command',
      'nginx,-g,daemon off;',
    );
    expect(result.stderr).not.toMatch(/^(error|warning)/m);
    expect(result.code).toBe(0);

    const types = await read(dir, 'src/api/demo/v1/demoapplication.types.ts');
    expect(types).toMatch(/replicas\?: int32;/);
    expect(types).toMatch(
      /\+kubebuilder:validation:Minimum=1\n.*\+kubebuilder:validation:Maximum=50\n.*\+kubebuilder:default=1/,
    );
    expect(types).toMatch(/\+listMapKey=port/);
    expect(types).toMatch(/env\?: V1EnvVar\[\];/);
    expect(types).toMatch(/resources\?: V1ResourceRequirements;/);
    expect(types).toMatch(/readyReplicas\?: int32;/);

    const sample = parse(await read(dir, 'config/samples/demo_v1_demoapplication.yaml')) as {
      spec: unknown;
    };
    expect(sample.spec).toEqual({
      replicas: 2,
      serviceType: 'NodePort',
      ports: [{ port: 80, nodePort: 30002 }],
    });

    const controller = await read(dir, 'src/controllers/demoapplication.controller.ts');
    expect(controller).toMatch(/export const DEFAULT_IMAGE = 'nginx:1\.27';/);
    expect(controller).toMatch(/export const IMAGE_ENV = 'DEMOAPPLICATION_IMAGE';/);
    expect(controller).toMatch(/export const RUN_AS_USER = 1001;/);
    expect(controller).toMatch(/DEFAULT_COMMAND: readonly string\[\] = \['nginx', '-g', 'daemon off;'\];/);
    expect(controller).toMatch(/\.owns\(DeploymentKind\)\s*\.owns\(ServiceKind\)/);

    // Exactly the rules the controller needs.
    const role = parse((await read(dir, 'config/rbac/role.yaml')).replace(/^#.*\n---\n/, '')) as {
      rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[];
    };
    expect(
      role.rules.map((r) => `${r.apiGroups.join()}/${r.resources.join()}: ${r.verbs.join(',')}`),
    ).toEqual([
      '/services: create,delete,get,list,patch,watch',
      'apps/deployments: create,get,list,patch,watch',
      'demo.example.com/demoapplications: get,list,update,watch',
      'demo.example.com/demoapplications/finalizers: update',
      'demo.example.com/demoapplications/status: get,update',
      'events.k8s.io/events: create,patch',
    ]);

    const crd = await read(dir, 'config/crd/bases/demo.example.com_demoapplications.yaml');
    expect(crd).toMatch(/x-kubernetes-list-map-keys:\n\s+- port/);
    expect(crd).toMatch(/maximum: 32767/);

    const manager = await read(dir, 'config/manager/manager.yaml');
    expect(manager).toMatch(
      /\n {8}- name: DEMOAPPLICATION_IMAGE\n {10}value: "nginx:1\.27"\n {8}# \+kubesmith:scaffold:env\n/,
    );
    const manifest = JSON.parse(await read(dir, 'package.json')) as Manifest;
    expect(manifest.scripts['test']).toBe(
      'kubesmith envtest --with-controllers && kubesmith validate config/samples && vitest run',
    );
    expect(manifest.scripts['setup-envtest']).toBe('kubesmith envtest --with-controllers');
    expect(await read(dir, '.github/workflows/test.yml')).toMatch(
      /run: npx kubesmith envtest --with-controllers\n/,
    );
    // The run's one envtest (vitest's global setup) starts in cluster mode.
    expect(await read(dir, 'test/envtest.setup.ts')).toMatch(
      /\n {2}controllers: true,\n {2}\/\/ \+kubesmith:scaffold:envtestoptions\n/,
    );

    const project = parse(await read(dir, 'PROJECT')) as { plugins: Record<string, unknown> };
    expect(project.plugins['deploy-image.kubesmith.dev/v1-alpha']).toEqual({
      resources: [
        {
          domain: 'example.com',
          group: 'demo',
          kind: 'DemoApplication',
          version: 'v1',
          options: {
            image: 'nginx:1.27',
            containerPort: '80',
            containerCommand: 'nginx,-g,daemon off;',
            runAsUser: '1001',
            serviceType: 'NodePort',
            nodePort: '30002',
          },
        },
      ],
    });
  });

  it('leaves the sample without ports, and ClusterIP, when no port is given', async () => {
    expect((await run(dir, ...api, '--image', 'ghcr.io/acme/app:v1.2.3')).code).toBe(0);
    const sample = parse(await read(dir, 'config/samples/demo_v1_demoapplication.yaml')) as { spec: unknown };
    expect(sample.spec).toEqual({ replicas: 2 });
    expect(await read(dir, 'src/api/demo/v1/demoapplication.types.ts')).toMatch(
      /\+kubebuilder:default=ClusterIP/,
    );
  });

  it('a second run with --force adds nothing twice', async () => {
    expect((await run(dir, ...image)).code).toBe(0);
    const first = await snapshot(dir);
    expect((await run(dir, ...image, '--force')).code).toBe(0);
    expect(await snapshot(dir)).toEqual(first);
  });

  const bad: [string, string[], RegExp][] = [
    [
      'an image that does not parse',
      [...api, '--image', 'nginx:1.27:latest'],
      /--image "nginx:1\.27:latest" is not a valid image reference/,
    ],
    ['an upper-case image', [...api, '--image', 'Nginx:1.27'], /must be lower case/],
    [
      'a port over 65535',
      [...image.slice(0, -1), '65536'],
      /--image-container-port "65536" is not a port: .* 1 to 65535/,
    ],
    ['a port of 0', [...image.slice(0, -1), '0'], /--image-container-port "0" is not a port/],
    [
      'a node port outside 30000-32767',
      [...image, '--service-type', 'NodePort', '--node-port', '8080'],
      /--node-port "8080" is outside the service node port range 30000-32767/,
    ],
    [
      'a node port without NodePort',
      [...image, '--node-port', '30002'],
      /--node-port needs --service-type NodePort/,
    ],
    [
      'an unknown service type',
      [...image, '--service-type', 'LoadBalancer'],
      /--service-type "LoadBalancer" is not supported/,
    ],
    ['root as the user', [...image, '--run-as-user', '0'], /--run-as-user "0" is not a user ID/],
    [
      '--image with --resource=false',
      [...image, '--resource=false'],
      /--image .* cannot be used with --resource=false/,
    ],
    [
      'an image-only flag without --image',
      [...api, '--image-container-port', '80'],
      /--image-container-port needs --image/,
    ],
    ['--run-as-user without --image', [...api, '--run-as-user', '1001'], /--run-as-user needs --image/],
    ['--image with --namespaced=false', [...image, '--namespaced=false'], /--image needs a namespaced kind/],
  ];
  for (const [what, args, message] of bad) {
    it(`refuses ${what}: one line and a hint, exit 2, nothing written`, async () => {
      const before = await snapshot(dir);
      const result = await run(dir, ...args);
      expect(result.code).toBe(2);
      const lines = result.stderr.trim().split('\n');
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(/^error: /);
      expect(lines[0]).toMatch(message);
      expect(lines[1]).toMatch(/^hint: /);
      expect(await snapshot(dir)).toEqual(before);
    });
  }
});
