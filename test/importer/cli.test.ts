/**
 * `kubesmith import crd` at the command line: what it writes and where, the record that lets a re-import
 * replace its own files but not edited ones, and bad input: each one positioned line with a hint, a
 * non-zero exit, and nothing written.
 */
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { readInputs } from '../../src/importer/read.js';
import { expectRefused, removeTemp, run, snapshot, tempDir } from '../helpers/run.js';

const HAND = path.resolve(import.meta.dirname, '../fixtures/import/hand');
const temps: string[] = [];
const servers: http.Server[] = [];

afterEach(async () => {
  for (const dir of temps.splice(0)) await removeTemp(dir);
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function workDir(): Promise<string> {
  const dir = await tempDir('work');
  temps.push(dir);
  return dir;
}

const DATE_CRD = path.join(HAND, 'dates.hand.example.com.yaml');

function crd(
  overrides: { group?: string; kind?: string; plural?: string; apiVersion?: string; extra?: string } = {},
): string {
  const group = overrides.group ?? 'shop.example.com';
  const kind = overrides.kind ?? 'Order';
  const plural = overrides.plural ?? 'orders';
  return `apiVersion: ${overrides.apiVersion ?? 'apiextensions.k8s.io/v1'}
kind: CustomResourceDefinition
metadata:
  name: ${plural}.${group}
spec:
  group: ${group}
  names: {kind: ${kind}, plural: ${plural}}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              count: {type: integer, format: int32}${overrides.extra ?? ''}
`;
}

async function serve(handler: http.RequestListener): Promise<string> {
  const server = http.createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('kubesmith import crd', () => {
  it('writes one file per kind and version, the group-version files and the record; a re-import changes nothing', async () => {
    const dir = await workDir();
    const result = await run(dir, 'import', 'crd', DATE_CRD, '--out', 'ext');
    expect(result.code).toBe(0);
    expect(Object.keys(await snapshot(path.join(dir, 'ext'))).sort()).toEqual([
      '.kubesmith-files',
      'hand.example.com/v1/date.types.ts',
      'hand.example.com/v1/group-version.ts',
    ]);
    const types = await readFile(path.join(dir, 'ext/hand.example.com/v1/date.types.ts'), 'utf8');
    expect(types).toContain('export interface Date {');
    expect(types).toContain("export const DateKind = GroupVersion.kind<Date>('Date', {");
    expect(types).toContain('namespaced: false');
    const gv = await readFile(path.join(dir, 'ext/hand.example.com/v1/group-version.ts'), 'utf8');
    expect(gv).toContain('+groupName=hand.example.com');
    const before = await snapshot(dir);
    const again = await run(dir, 'import', 'crd', DATE_CRD, '--out', 'ext');
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('unchanged');
    expect(await snapshot(dir)).toEqual(before);
  });

  it('writes into src/external of the project by default, and refuses without a project or --out', async () => {
    const dir = await workDir();
    await expectRefused(
      dir,
      ['import', 'crd', DATE_CRD],
      2,
      /^error: not in a kubesmith project, and no --out$/,
    );
    await writeFile(path.join(dir, 'PROJECT'), 'domain: example.com\nprojectName: p\nversion: "3"\n');
    await mkdir(path.join(dir, 'src/api'), { recursive: true });
    const result = await run(path.join(dir, 'src/api'), 'import', 'crd', DATE_CRD);
    expect(result.code).toBe(0);
    expect(
      await readFile(path.join(dir, 'src/external/hand.example.com/v1/date.types.ts'), 'utf8'),
    ).toContain('export interface Date');
  });

  it('leaves the imported kinds of src/external to their owners: manifests writes no CRD for them, and no error', async () => {
    const dir = await workDir();
    const fixture = path.resolve(import.meta.dirname, '../fixtures/crd-basic');
    await cp(path.join(fixture, 'PROJECT'), path.join(dir, 'PROJECT'));
    await cp(path.join(fixture, 'src'), path.join(dir, 'src'), { recursive: true });
    expect((await run(dir, 'import', 'crd', path.join(HAND, 'objects.hand.example.com.yaml'))).code).toBe(0);
    const result = await run(dir, 'manifests', '--crd');
    expect(result.stderr).not.toMatch(/error/);
    expect(result.code).toBe(0);
    expect(Object.keys(await snapshot(path.join(dir, 'config/crd/bases')))).toEqual([
      'webapp.example.com_guestbooks.yaml',
    ]);
  });

  it('replaces its own files on a re-import, stops at one edited by hand, and --force replaces it', async () => {
    const dir = await workDir();
    const file = path.join(dir, 'ext/shop.example.com/v1/order.types.ts');
    await writeFile(path.join(dir, 'a.yaml'), crd());
    expect((await run(dir, 'import', 'crd', 'a.yaml', '--out', 'ext')).code).toBe(0);
    // The CRD changes: the import replaces the file it wrote.
    await writeFile(path.join(dir, 'a.yaml'), crd({ extra: '\n              note: {type: string}' }));
    const updated = await run(dir, 'import', 'crd', 'a.yaml', '--out', 'ext');
    expect(updated.code).toBe(0);
    expect(updated.stderr).toMatch(/updated +ext\/shop.example.com\/v1\/order.types.ts/);
    expect(await readFile(file, 'utf8')).toContain('note?: string;');
    // Edited by hand: the next import stops, and writes nothing.
    await writeFile(file, `${await readFile(file, 'utf8')}\n// mine\n`);
    await writeFile(path.join(dir, 'a.yaml'), crd());
    await expectRefused(
      dir,
      ['import', 'crd', 'a.yaml', '--out', 'ext'],
      1,
      /^error: shop\.example\.com\/v1\/order\.types\.ts was edited since kubesmith import crd wrote it, or not written by it$/,
    );
    const forced = await run(dir, 'import', 'crd', 'a.yaml', '--out', 'ext', '--force');
    expect(forced.code).toBe(0);
    expect(await readFile(file, 'utf8')).not.toContain('// mine');
  });

  it('--dry-run lists the files and writes nothing; --json says what it would write', async () => {
    const dir = await workDir();
    const result = await run(dir, 'import', 'crd', DATE_CRD, '--out', 'ext', '--dry-run', '--json');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      command: 'import crd',
      ok: true,
      dryRun: true,
      crds: [{ group: 'hand.example.com', kind: 'Date', versions: ['v1'] }],
    });
    expect(await snapshot(dir)).toEqual({});
  });

  it('reads - from standard input, and a URL', async () => {
    const dir = await workDir();
    const stdout = new Writable({ write: (_c, _e, done) => done() });
    const stderr = new Writable({ write: (_c, _e, done) => done() });
    const code = await main(['node', 'kubesmith', 'import', 'crd', '-', '--out', 'ext'], {
      cwd: dir,
      stdin: Readable.from([crd()]),
      stdout,
      stderr,
    });
    expect(code).toBe(0);
    expect(await readFile(path.join(dir, 'ext/shop.example.com/v1/order.types.ts'), 'utf8')).toContain(
      'count?: int32;',
    );
    const url = await serve((_req, res) => res.end(crd({ group: 'web.example.com' })));
    expect((await run(dir, 'import', 'crd', `${url}/crds.yaml`, '--out', 'ext')).code).toBe(0);
    expect(await readFile(path.join(dir, 'ext/web.example.com/v1/order.types.ts'), 'utf8')).toContain(
      'count?: int32;',
    );
  });

  it('takes --version: only those versions, and an unknown one is a usage error', async () => {
    const dir = await workDir();
    const objects = path.join(HAND, 'objects.hand.example.com.yaml');
    expect((await run(dir, 'import', 'crd', objects, '--out', 'ext', '--version', 'v1beta1')).code).toBe(0);
    expect(Object.keys(await snapshot(path.join(dir, 'ext'))).sort()).toEqual([
      '.kubesmith-files',
      'hand.example.com/v1beta1/group-version.ts',
      'hand.example.com/v1beta1/object.types.ts',
    ]);
    await expectRefused(
      dir,
      ['import', 'crd', objects, '--out', 'ext', '--version', 'v9'],
      2,
      /^error: --version v9 is in none of the CRDs \(their versions: v1, v1beta1, v1alpha1\)$/,
    );
  });
});

describe('kubesmith import crd: bad input', () => {
  const cases: [string, string, RegExp][] = [
    [
      'not a CRD',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n',
      /^error: in\.yaml: document 1: \.kind: not a CustomResourceDefinition but "ConfigMap"$/,
    ],
    [
      'a v1beta1 CRD',
      crd({ apiVersion: 'apiextensions.k8s.io/v1beta1' }),
      /^error: in\.yaml: document 1: \.apiVersion: "apiextensions\.k8s\.io\/v1beta1" CRDs are not supported, only apiextensions\.k8s\.io\/v1$/,
    ],
    [
      'malformed YAML',
      `${crd()}---\nkind: [unclosed\n`,
      /^error: in\.yaml:\d+:\d+: document 2: malformed YAML: /,
    ],
    [
      'two CRDs of one group and kind',
      `${crd()}---\n${crd({ plural: 'orderz' })}`,
      /^error: in\.yaml: document 2: \.spec: Order\.shop\.example\.com again \(first in in\.yaml: document 1\)$/,
    ],
    [
      'a group that would climb out',
      crd({ group: '../../x' }),
      /^error: in\.yaml: document 1: \.spec\.group: "\.\.\/\.\.\/x" is not a DNS-1123 subdomain/,
    ],
    [
      'a kind that is no name',
      crd({ kind: 'Or/der' }),
      /^error: in\.yaml: document 1: \.spec\.names\.kind: "Or\/der" is not a kind kubesmith can name a type after/,
    ],
    [
      'a plural that is a path',
      crd({ plural: '../orders' }),
      /^error: in\.yaml: document 1: \.spec\.names\.plural: "\.\.\/orders" is not a DNS-1035 label/,
    ],
    [
      'a schema the API server refuses',
      crd({ extra: '\n              bad: {type: array}' }),
      /^error: in\.yaml: document 1: \.spec\.versions\[0\]\.schema\.openAPIV3Schema: .*spec\.bad/,
    ],
    [
      'a keyword of the wrong type (a marker in a number)',
      crd({
        extra:
          '\n              bad: {type: string, maxLength: "3\\n+kubebuilder:validation:XPreserveUnknownFields"}',
      }),
      /^error: in\.yaml: document 1: \.spec\.versions\[0\]\.schema\.openAPIV3Schema\.properties\["spec"\]\.properties\["bad"\]\.maxLength: must be a number, found "3\\n\+kubebuilder/,
    ],
    [
      'a keyword the marker dialect cannot say',
      crd({ extra: '\n              bad: {type: string, id: x}' }),
      /^error: in\.yaml: document 1: version v1: \.spec\.bad: unsupported keyword id$/m,
    ],
  ];

  it.each(cases)('%s: one positioned line, a hint, exit 1, nothing written', async (_name, text, message) => {
    const dir = await workDir();
    await writeFile(path.join(dir, 'in.yaml'), text);
    await expectRefused(dir, ['import', 'crd', 'in.yaml', '--out', 'ext'], 1, message);
  });

  it('a URL whose answer is too big, and one that does not answer in time', async () => {
    const dir = await workDir();
    const big = await serve((_req, res) => {
      res.writeHead(200, { 'content-length': String(64 * 1024 * 1024) });
      res.write('apiVersion: ');
    });
    await expectRefused(
      dir,
      ['import', 'crd', `${big}/x.yaml`, '--out', 'ext'],
      1,
      /^error: http:\/\/127\.0\.0\.1:\d+\/x\.yaml: larger than 33554432 bytes$/,
    );
    const silent = await serve(() => undefined);
    await expect(
      readInputs([`${silent}/x.yaml`], dir, Readable.from([]), { maxBytes: 1024, timeoutMs: 300 }),
    ).rejects.toThrow(/^http:\/\/127\.0\.0\.1:\d+\/x\.yaml: no complete answer within 0\.3 s$/);
    const endless = await serve((_req, res) => {
      res.writeHead(200);
      const timer = setInterval(() => res.write('x'.repeat(512)), 10);
      res.on('close', () => clearInterval(timer));
    });
    await expect(
      readInputs([`${endless}/x.yaml`], dir, Readable.from([]), { maxBytes: 1024, timeoutMs: 5000 }),
    ).rejects.toThrow(/larger than 1024 bytes$/);
  });
});
