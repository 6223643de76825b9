/** The tarball checks of packlist.ts, each shown failing on a package made to break it. */
import { describe, expect, it } from 'vitest';
import {
  danglingSourceMaps,
  missingTargets,
  shippedTests,
  relativeImports,
  staleOutputs,
  unreachableOutputs,
  type PackedPackage,
} from './packlist.js';

function pkg(manifest: Record<string, unknown>, files: Record<string, string>): PackedPackage {
  return { manifest, files: Object.keys(files), read: (file) => files[file] ?? '' };
}

describe('missingTargets', () => {
  it('names bin, main, types and nested exports targets that are not packed', () => {
    const manifest = {
      bin: { tool: 'bin/tool.js' },
      main: './dist/index.js',
      types: './dist/index.d.ts',
      exports: {
        '.': { types: './dist/index.d.ts', default: './dist/index.js' },
        './testing': { types: './dist/testing.d.ts', default: './dist/testing.js' },
      },
    };
    const files = { 'bin/tool.js': '', 'dist/index.js': '', 'dist/index.d.ts': '', 'dist/testing.js': '' };
    expect(missingTargets(pkg(manifest, files))).toEqual([
      'exports["./testing"]["types"] -> ./dist/testing.d.ts',
    ]);
  });
});

describe('shippedTests', () => {
  it('finds test files and test or fixture directories, but not the templates of tests', () => {
    expect(
      shippedTests([
        'dist/index.js',
        'dist/queue.test.js',
        'dist/queue.test.d.ts',
        'dist/a.spec.mjs',
        'dist/test/helper.js',
        'dist/fixtures/crd.yaml',
        'templates/init/test/settings.test.ts.hbs',
        'dist/testing/index.js',
      ]),
    ).toEqual([
      'dist/queue.test.js',
      'dist/queue.test.d.ts',
      'dist/a.spec.mjs',
      'dist/test/helper.js',
      'dist/fixtures/crd.yaml',
    ]);
  });
});

describe('danglingSourceMaps', () => {
  const map = (sources: string[], extra: Record<string, unknown> = {}) =>
    JSON.stringify({ version: 3, sources, mappings: '', ...extra });

  it('names a source that is neither packed nor inlined', () => {
    const files = {
      'dist/a.js.map': map(['../src/a.ts']),
      'dist/b.js.map': map(['../src/b.ts']),
      'dist/c.js.map': map(['../src/c.ts'], { sourcesContent: ['export {}'] }),
      'dist/d.js.map': map(['d.ts'], { sourceRoot: '../src/' }),
      'dist/e.js.map': 'not json',
      'src/a.ts': '',
    };
    expect(danglingSourceMaps(pkg({}, files))).toEqual([
      'dist/b.js.map -> src/b.ts',
      'dist/d.js.map -> src/d.ts',
      'dist/e.js.map: not JSON',
    ]);
  });
});

describe('staleOutputs', () => {
  it('names compiled modules without a source, and knows .cts compiles to .cjs', () => {
    const dist = ['dist/a.js', 'dist/a.d.ts', 'dist/old.js', 'dist/m/ts-morph.cjs', 'dist/vendor/x.tgz'];
    expect(staleOutputs(dist, ['a.ts', 'm/ts-morph.cts', 'types.d.ts'])).toEqual(['dist/old.js']);
  });
});

describe('unreachableOutputs', () => {
  it('follows static and dynamic imports from every entry point, and names the JavaScript left over', () => {
    const manifest = {
      main: './dist/index.js',
      exports: {
        '.': { types: './dist/index.d.ts', default: './dist/index.js' },
        './testing': { types: './dist/testing/index.d.ts', default: './dist/testing/index.js' },
      },
    };
    const files = {
      'dist/index.js': 'export { a } from "./chunks/shared-1.js";',
      'dist/testing/index.js': 'import "../chunks/helpers-1.js";\nimport { a } from "../chunks/shared-1.js";',
      'dist/chunks/shared-1.js': 'import { x } from "node:fs"; const later = () => import("./certs-1.js");',
      'dist/chunks/helpers-1.js': '',
      'dist/chunks/certs-1.js': '',
      'dist/chunks/shared-0.js': '',
      'dist/index.d.ts': '',
    };
    expect(unreachableOutputs(pkg(manifest, files))).toEqual(['dist/chunks/shared-0.js']);
  });

  it('reads the specifiers of from, bare import and import() clauses, relative ones only', () => {
    const code = `import { a as b, c } from "./x.js";\nimport './y.js';\nexport * from '../z.js';\nawait import("./w.js");\nimport os from "node:os";`;
    expect(relativeImports(code)).toEqual(['./x.js', './y.js', '../z.js', './w.js']);
  });
});
