/**
 * Kinds Kubernetes allows but a TypeScript project cannot take: not an identifier (`My-Kind`), or a name the
 * generated code already uses (`Manager`, `Client`, `Promise` ...). They are refused before anything is
 * written; the kinds that pass make a project that typechecks.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { symlink } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RESERVED_KINDS, validateKind } from '../../src/project/validation.js';
import { expectRefused as refused, removeTemp, run, tempDir } from '../helpers/run.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));

let dir: string;
beforeEach(async () => {
  dir = await tempDir('demo');
  expect((await run(dir, 'init', '--domain', 'example.com', '--skip-install')).code).toBe(0);
});
afterEach(async () => {
  await removeTemp(dir);
});

const api = (kind: string, ...flags: string[]) => [
  'create',
  'api',
  '--group',
  'demo',
  '--version',
  'v1',
  '--kind',
  kind,
  ...flags,
];

/** Expects `args` refused as a usage error: exit 2, one line and a hint, nothing written. */
const expectRefused = (args: string[], message: RegExp) => refused(dir, args, 2, message);

describe('kinds that would not compile', () => {
  it.each(['My-Kind', 'Guest-Book1'])('refuses %s: a kind is a PascalCase identifier', async (kind) => {
    await expectRefused(api(kind), /^error: invalid Kind: .*: must be PascalCase, letters and digits only$/);
  });

  it.each([
    // Imported by the generated controller or tests from @kubesmith/runtime.
    ...['Manager', 'Client', 'Result', 'Request', 'Reconciler', 'Condition', 'ObjectMeta'],
    // Globals of the language.
    ...['Promise', 'Object', 'Array', 'Date', 'Error', 'Map', 'Set', 'Symbol', 'String', 'Number'],
    ...['Boolean', 'Function', 'JSON', 'Math', 'Record', 'URL'],
  ])('refuses %s, saying the name is reserved', async (kind) => {
    await expectRefused(
      api(kind),
      new RegExp(`^error: invalid Kind: ${kind}: the generated TypeScript already uses the name ${kind}$`),
    );
  });

  it.each(['Deployment', 'Service', 'Resource'])(
    'refuses %s with --image, whose controller names %sKind already',
    async (kind) => {
      await expectRefused(
        api(kind, '--image', 'nginx:1.27'),
        new RegExp(
          `^error: --image cannot scaffold a kind named ${kind}: its controller already names ${kind}Kind`,
        ),
      );
    },
  );

  /**
   * The guard of RESERVED_KINDS: every name a template imports or declares at its top level beside the
   * kind's own type (a file that uses `{{kind}}`) is one a kind cannot take.
   */
  it('reserves every name the templates import or declare beside the kind', () => {
    const templates = path.join(repo, 'templates');
    const files = readdirSync(templates, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && /\.ts\.hbs$|\{\{\w+File\}\}\.hbs$/.test(entry.name))
      .map((entry) => path.join(entry.parentPath, entry.name));
    const names = new Set<string>();
    for (const file of files) {
      const text = readFileSync(file, 'utf8').replaceAll('{{boilerplate}}', '');
      if (!text.includes('{{kind}}')) continue;
      for (const [, list] of text.matchAll(/^import\s+(?:type\s+)?\{([^}]*)\}\s+from/gm))
        for (const item of list!.split(','))
          names.add(
            item
              .trim()
              .replace(/^type\s+/, '')
              .split(/\s+as\s+/)
              .pop()!,
          );
      for (const [, name] of text.matchAll(
        /^(?:export\s+)?(?:const|let|class|function|async function|interface|type|enum)\s+([\w$]+)/gm,
      ))
        names.add(name!);
    }
    const kindLike = [...names].filter((name) => /^[A-Z][A-Za-z0-9]*$/.test(name));
    expect(kindLike.length).toBeGreaterThan(10);
    expect(kindLike.filter((name) => !RESERVED_KINDS.has(name))).toEqual([]);
    for (const name of kindLike) expect(validateKind(name)?.message).toMatch(/already uses the name/);
  });
});

describe('kinds near the reserved names', () => {
  it('make a project that typechecks, with webhooks and a deploy-image controller', async () => {
    for (const kind of ['Event', 'Kind', 'Status', 'Spec', 'Managers']) {
      const result = await run(dir, ...api(kind));
      expect(result.stderr).not.toMatch(/^error/m);
      expect(result.code).toBe(0);
    }
    const webhook = await run(
      dir,
      ...['create', 'webhook', '--group', 'demo', '--version', 'v1', '--kind', 'Event'],
      ...['--defaulting', '--programmatic-validation'],
    );
    expect(webhook.code).toBe(0);
    expect((await run(dir, ...api('Cache', '--image', 'memcached:1.6'))).code).toBe(0);
    // The project resolves its dependencies from this repository's node_modules (no npm install).
    await symlink(path.join(repo, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    const tsc = await execa(
      'node',
      [path.join(repo, 'node_modules/typescript/bin/tsc'), '--noEmit', '-p', '.'],
      {
        cwd: dir,
        reject: false,
      },
    );
    expect(`${tsc.stdout}${tsc.stderr}`).toBe('');
    expect(tsc.exitCode).toBe(0);
  }, 120_000);
});
