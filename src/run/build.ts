/**
 * Building the project with its own TypeScript, as its `build` script does (tsconfig.build.json), through
 * the compiler's watch API: the first build, and with --watch each rebuild after a source change, are
 * reported as one result each (the errors, or none). A watch program keeps the previous program and
 * rebuilds only what a change touched, the fastest way TypeScript has to build again.
 */
import fs from 'node:fs';
import path from 'node:path';
import type TS from 'typescript';
import { KubesmithError } from '../errors.js';
import { MAIN_FILE, SOURCE_DIR, TSCONFIG_FILE } from '../project/layout.js';
import { containedPath } from '../project/contained.js';
import { RUN_DIR } from './state.js';

/** The configuration the project's build script compiles with. */
export const BUILD_TSCONFIG = 'tsconfig.build.json';

export interface BuildResult {
  /** The errors, formatted `file(line,col): error TSxxxx: message`; none when the build succeeded. */
  errors: string[];
  /** The compiled entry point, dist/main.js. */
  entry: string;
  /** How long the build took. */
  ms: number;
}

/** TypeScript's record of the last build, in run's own directory. */
const BUILD_INFO_FILE = `${RUN_DIR}/tsbuildinfo.json`;

/** TypeScript's watch status codes: a compilation starts, and ends with its error count. */
const STARTING = new Set([6031, 6032]);
const FINISHED = new Set([6193, 6194]);

export interface ProjectBuild {
  close(): void;
}

/**
 * Builds the project, then (with `watch`) again after every change to its sources, calling `onResult`
 * after each build. Throws when the project has no build configuration.
 */
export function buildProject(
  ts: typeof TS,
  root: string,
  watch: boolean,
  onResult: (result: BuildResult) => void,
): ProjectBuild {
  const configPath = [BUILD_TSCONFIG, TSCONFIG_FILE]
    .map((file) => containedPath(root, file))
    .find((file) => fs.existsSync(file));
  if (!configPath)
    throw new KubesmithError(`the project has no ${BUILD_TSCONFIG} to build with`, {
      hint: 'run kubesmith run in a project made by kubesmith init',
    });
  const formatHost: TS.FormatDiagnosticsHost = {
    getCanonicalFileName: (file) => file,
    getCurrentDirectory: () => root,
    getNewLine: () => '\n',
  };
  let errors: string[] = [];
  let started = performance.now();
  let options: TS.CompilerOptions = {};
  const system: TS.System = { ...ts.sys, getCurrentDirectory: () => root };
  // Incremental across runs too: the next run's first build re-checks only what changed since. TypeScript
  // does not emit again what its record says is emitted, so without the entry point the record goes.
  const incremental = { incremental: true, tsBuildInfoFile: containedPath(root, BUILD_INFO_FILE) };
  const parsed = ts.getParsedCommandLineOfConfigFile(
    configPath,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: () => {},
    },
  );
  if (parsed && !fs.existsSync(entryOf(root, parsed.options)))
    fs.rmSync(incremental.tsBuildInfoFile, { force: true });
  const host = ts.createWatchCompilerHost(
    configPath,
    incremental,
    system,
    ts.createEmitAndSemanticDiagnosticsBuilderProgram,
    (diagnostic) => {
      if (diagnostic.category === ts.DiagnosticCategory.Error)
        errors.push(ts.formatDiagnostic(diagnostic, formatHost).trimEnd());
    },
    (diagnostic) => {
      if (STARTING.has(diagnostic.code)) {
        errors = [];
        started = performance.now();
      } else if (FINISHED.has(diagnostic.code)) {
        onResult({ errors, entry: entryOf(root, options), ms: Math.round(performance.now() - started) });
      }
    },
  );
  const emit = host.afterProgramCreate;
  host.afterProgramCreate = (builder) => {
    options = builder.getCompilerOptions();
    emit?.(builder);
  };
  // The first build runs (and is reported) inside createWatchProgram.
  const program = ts.createWatchProgram(host);
  if (!watch) program.close();
  return { close: () => program.close() };
}

/** Where the compiled src/main.ts is: outDir, and its path below rootDir. */
function entryOf(root: string, options: TS.CompilerOptions): string {
  const rootDir = options.rootDir ?? path.join(root, SOURCE_DIR);
  const outDir = options.outDir ?? rootDir;
  return path.join(outDir, path.relative(rootDir, path.join(root, MAIN_FILE))).replace(/\.ts$/, '.js');
}
