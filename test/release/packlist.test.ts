/** The tarball checks of packlist.ts, each shown failing on a package made to break it. */
import { describe, expect, it } from 'vitest';
import {
  danglingSourceMaps,
  missingTargets,
  shippedTests,
  staleOutputs,
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
