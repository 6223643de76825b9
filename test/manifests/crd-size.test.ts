/**
 * The size limits of a generated CRD: over etcd's 1.5 MiB per object the API server refuses it (an error
 * on the kind, nothing written by the CLI); over the 256 KiB of client-side apply's annotation, a warning.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { generateManifests } from '../../src/manifests/index.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/**
 * A project whose Widget kind has `fields` properties, each with a description of `descBytes` bytes, made
 * of `word` and spaces.
 */
async function project(fields: number, descBytes: number, word = 'word'): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-crd-size-'));
  dirs.push(dir);
  await symlink(path.join(repo, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  const description = `${word} `.repeat(Math.ceil(descBytes / (word.length + 1))).trim();
  const properties = Array.from(
    { length: fields },
    (_, i) => `  /** ${description} */\n  field${i}?: string;`,
  );
  const files: Record<string, string> = {
    PROJECT: 'domain: example.com\nlayout:\n- typescript.kubesmith.dev/v1\nprojectName: shop\nversion: "3"\n',
    'package.json': '{ "name": "shop", "private": true, "type": "module" }\n',
    'tsconfig.json': JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true },
      include: ['src'],
    }),
    'src/api/shop/v1/group-version.ts': `/**
 * +groupName=shop.example.com
 */
import { groupVersion } from '@kubesmith/runtime';

export const GroupVersion = groupVersion('shop.example.com', 'v1');
`,
    'src/api/shop/v1/widget-types.ts': `import type { ObjectMeta } from '@kubesmith/runtime';
import { GroupVersion } from './group-version.js';

export interface WidgetSpec {
${properties.join('\n')}
}

/** +kubebuilder:object:root=true */
export interface Widget {
  apiVersion: 'shop.example.com/v1';
  kind: 'Widget';
  metadata?: ObjectMeta;
  spec: WidgetSpec;
}

export const WidgetKind = GroupVersion.kind<Widget>('Widget', { plural: 'widgets', namespaced: true });
`,
  };
  for (const [file, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), content);
  }
  return dir;
}

describe('a CRD too large', () => {
  it('for etcd is an error on the kind, with a hint; without descriptions it fits', async () => {
    const dir = await project(40, 41_000);
    const { diagnostics } = await generateManifests({ root: dir, version: 'test' });
    expect(diagnostics).toMatchObject([
      {
        file: 'src/api/shop/v1/widget-types.ts',
        // The line of `export interface Widget {`: after 4 lines, 2 a field and 2 more.
        line: 4 + 2 * 40 + 4,
        code: 'crd-too-large-for-etcd',
        severity: 'error',
        message: expect.stringMatching(
          /^config\/crd\/bases\/shop\.example\.com_widgets\.yaml is \d+ bytes as JSON, more than the 1572864 bytes etcd stores/,
        ),
        hint: expect.stringContaining('--max-desc-len 0'),
      },
    ]);
    const cut = await generateManifests({ root: dir, version: 'test', maxDescLen: 0 });
    expect(cut.diagnostics).toEqual([]);
  }, 60_000);

  it('for etcd is measured as JSON, where `\\` and `"` take two bytes: a CRD under the limit as YAML can be over it', async () => {
    // About 1 MB of YAML (1.2 with the folded lines' indentation), 1.9 MB of JSON.
    const dir = await project(25, 40_000, '\\"\\"\\"\\"');
    const { files, diagnostics } = await generateManifests({ root: dir, version: 'test' });
    const crd = files.find((f) => f.path.endsWith('_widgets.yaml'));
    expect(Buffer.byteLength(crd?.content ?? '')).toBeLessThan(1572864);
    expect(diagnostics).toMatchObject([{ code: 'crd-too-large-for-etcd', severity: 'error' }]);
  }, 60_000);

  it('for the annotation of client-side apply is a warning', async () => {
    const dir = await project(10, 30_000);
    const { diagnostics } = await generateManifests({ root: dir, version: 'test' });
    expect(diagnostics).toMatchObject([{ code: 'crd-too-large', severity: 'warning' }]);
  }, 60_000);
});
