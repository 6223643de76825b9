import { describe, expect, it } from 'vitest';
import { insertAtMarker, insertBlockAtMarker, markerComment } from './insert.js';

const main = `import { Manager } from '@kubesmith/runtime';
// +kubesmith:scaffold:imports

async function main() {
  const mgr = Manager.create();
  // +kubesmith:scaffold:builder
  await mgr.start();
}
`;

describe('insertAtMarker', () => {
  it('inserts above the marker with its indentation', () => {
    const result = insertAtMarker(
      'src/main.ts',
      main,
      'builder',
      'new FooReconciler(mgr.client).setupWithManager(mgr);',
    );
    expect(result).toEqual({
      ok: true,
      content: main.replace(
        '  // +kubesmith:scaffold:builder',
        '  new FooReconciler(mgr.client).setupWithManager(mgr);\n  // +kubesmith:scaffold:builder',
      ),
    });
  });

  it('is idempotent: the same fragment twice changes nothing', () => {
    const once = insertAtMarker('src/main.ts', main, 'imports', "import { A } from './a.js';");
    if (!once.ok) throw new Error('marker not found');
    const twice = insertAtMarker('src/main.ts', once.content, 'imports', "import { A } from './a.js';");
    expect(twice).toEqual(once);
  });

  it('adds only the missing lines of a multi-line fragment', () => {
    const yaml = 'resources:\n- a_admin_role.yaml\n# +kubesmith:scaffold:rbacresources\n';
    const result = insertAtMarker(
      'config/rbac/kustomization.yaml',
      yaml,
      'rbacresources',
      '- a_admin_role.yaml\n- a_editor_role.yaml',
    );
    expect(result).toEqual({
      ok: true,
      content: 'resources:\n- a_admin_role.yaml\n- a_editor_role.yaml\n# +kubesmith:scaffold:rbacresources\n',
    });
  });

  it('reports a missing marker instead of guessing a place', () => {
    expect(insertAtMarker('src/main.ts', 'no markers here\n', 'builder', 'x();')).toEqual({
      ok: false,
      reason: 'no-marker',
    });
  });

  it('uses the comment syntax of the file type', () => {
    expect(markerComment('a/b.yaml', 'crd')).toBe('# +kubesmith:scaffold:crd');
    expect(markerComment('src/main.ts', 'imports')).toBe('// +kubesmith:scaffold:imports');
    expect(() => markerComment('README.md', 'x')).toThrow(/no scaffold marker syntax/);
  });
});

describe('insertBlockAtMarker', () => {
  const file = 'src/hooks.ts';
  const base = 'export function setup(): void {\n  // +kubesmith:scaffold:register\n}\n';
  const block = 'server.register(\n  a,\n  b,\n);';

  it('adds a block above the marker, keeping its indentation under the marker', () => {
    const result = insertBlockAtMarker(file, base, 'register', block);
    expect(result).toEqual({
      ok: true,
      content:
        'export function setup(): void {\n  server.register(\n    a,\n    b,\n  );\n\n  // +kubesmith:scaffold:register\n}\n',
    });
  });

  it('adds a block once, but adds a different block that starts the same way', () => {
    const once = insertBlockAtMarker(file, base, 'register', block);
    const twice = insertBlockAtMarker(file, once.ok ? once.content : '', 'register', block);
    expect(twice).toEqual(once);
    const other = insertBlockAtMarker(
      file,
      once.ok ? once.content : '',
      'register',
      'server.register(\n  c,\n);',
    );
    expect(other.ok && other.content.split('server.register(').length - 1).toBe(2);
  });

  it('says when the marker is missing', () => {
    expect(insertBlockAtMarker(file, 'nothing\n', 'register', block)).toEqual({
      ok: false,
      reason: 'no-marker',
    });
  });
});
