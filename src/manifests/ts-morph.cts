/**
 * ts-morph, loaded with require. An ESM `import` of ts-morph makes Node scan its 0.9 MB CommonJS bundle
 * for export names first (~0.1 s of every `kubesmith manifests` run); a CommonJS module that re-exports
 * it by name skips that scan. On Node 20 its bundles load through a V8 code cache (code-cache.cts).
 */
import { installCodeCache } from './code-cache.cjs';

const loaded = installCodeCache();
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the point of this module
import tsMorph = require('ts-morph');
loaded();

export import ts = tsMorph.ts;
export import Project = tsMorph.Project;
