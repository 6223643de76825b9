import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkKustomizeSources } from './kustomize-sources.js';
import { renderInstaller } from './installer.js';

const temps: string[] = [];
afterEach(async () => {
  for (const dir of temps.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** `<temp>/project` with these files, and `<temp>/outside/kustomization.yaml` beside it. */
async function project(files: Record<string, string>): Promise<string> {
  const temp = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-kustomize-'));
  temps.push(temp);
  const root = path.join(temp, 'project');
  const all = {
    'config/crd/kustomization.yaml': 'resources:\n- bases/x.yaml\n',
    'config/rbac/kustomization.yaml': 'resources:\n- role.yaml\n',
    '../outside/kustomization.yaml': 'resources:\n- secret.yaml\n',
    ...files,
  };
  for (const [file, content] of Object.entries(all)) {
    await mkdir(path.dirname(path.join(root, file)), { recursive: true });
    await writeFile(path.join(root, file), content);
  }
  return root;
}

describe('checkKustomizeSources', () => {
  it('follows resources, bases and components inside the project', async () => {
    const root = await project({
      'config/default/kustomization.yaml':
        'resources:\n- ../crd\n- ../rbac\n- metrics.yaml\ncomponents:\n- ../rbac\n',
    });
    expect(() => checkKustomizeSources(root, ['config/default'])).not.toThrow();
  });

  it.each([
    ['resources', '../../../outside', 'leads out of the project'],
    ['bases', '../../../outside', 'leads out of the project'],
    ['components', '/etc', 'is not a path inside the project'],
    ['resources', 'https://github.com/org/repo//config?ref=main', 'is fetched from elsewhere'],
    ['resources', 'github.com/org/repo/config', 'is fetched from elsewhere'],
    ['resources', 'git@github.com:org/repo.git', 'is fetched from elsewhere'],
  ])('refuses a %s entry %j', async (key, entry, why) => {
    const root = await project({
      'config/default/kustomization.yaml': 'resources:\n- ../crd\n',
      'config/crd/kustomization.yaml': `${key}:\n- ${JSON.stringify(entry)}\n`,
    });
    expect(() => checkKustomizeSources(root, ['config/default'])).toThrow(
      `config/crd/kustomization.yaml: the ${key} entry ${JSON.stringify(entry)} ${why}`,
    );
  });

  it('refuses a directory of config/ that is a link out of the project', async () => {
    const root = await project({ 'config/default/kustomization.yaml': 'resources:\n- ../rbac\n' });
    await rm(path.join(root, 'config/rbac'), { recursive: true });
    await symlink(path.join(root, '../outside'), path.join(root, 'config/rbac'));
    expect(() => checkKustomizeSources(root, ['config/default'])).toThrow(
      'the resources entry "../rbac" leads out of the project through a symbolic link',
    );
  });

  it('runs before kustomize: build-installer refuses config/ leading out without running kubectl', async () => {
    const root = await project({ 'config/default/kustomization.yaml': 'resources:\n- ../../../outside\n' });
    await expect(renderInstaller(root, '/no/such/kubectl', { name: 'x' })).rejects.toThrow(
      'config/default/kustomization.yaml: the resources entry "../../../outside" leads out of the project',
    );
  });
});
