// `tsc` as ts-morph runs it: the compiler @ts-morph/common bundles (dist/typescript.js) with the lib files
// it bundles (served from memory, as ts-morph serves them), so that the floor is the very TypeScript that
// `kubesmith manifests` runs. Usage: `node test/bench/tsc.cjs --noEmit -p tsconfig.json`. The rest is what
// TypeScript's own `tsc` bin does (src/tsc/tsc.ts).
/* eslint-disable @typescript-eslint/no-require-imports, no-undef -- a CommonJS script */
const path = require('node:path');

const tsMorph = path.dirname(require.resolve('ts-morph/package.json'));
const common = require(require.resolve('@ts-morph/common', { paths: [tsMorph] }));
const { ts } = common;

const libDir = path.join(tsMorph, 'in-memory-lib');
const libs = new Map(common.getLibFiles().map((file) => [path.join(libDir, file.fileName), file.text]));
const { readFile, fileExists } = ts.sys;
ts.sys.getExecutingFilePath = () => path.join(libDir, 'tsc.js');
ts.sys.readFile = (file, encoding) => libs.get(path.resolve(file)) ?? readFile(file, encoding);
ts.sys.fileExists = (file) => libs.has(path.resolve(file)) || fileExists(file);

ts.sys.setBlocking?.();
ts.executeCommandLine(ts.sys, ts.noop, ts.sys.args);
