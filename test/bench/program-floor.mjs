/**
 * The program floor of `kubesmith manifests` (`npm run bench`): what TypeScript alone costs for the types
 * the generator reads, with nothing of kubesmith's own work. Run in a project: it loads TypeScript as the
 * generator does (src/typescript/compiler.cts: the same V8 flags and code cache, in a directory of its own so
 * that it never writes kubesmith's), builds the generator's program over `src/api/**.ts` (the same
 * options, cut declarations and library), binds it, and asks the checker for the type of every property of
 * every interface and class, as the schema mapper does at the least. No markers, schemas, YAML or writes.
 *
 * `--threads 2`: the same work split as a two-thread run splits it, each thread with its own TypeScript
 * and program over the shared files and half of the others (a worker thread: Node's own start, TypeScript
 * loaded and the declarations parsed again). Prints `{"files":N,"properties":M}`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

const dist = new URL('../../dist/', import.meta.url);

/** The API files of the project in `root`, sorted. */
function apiFiles(root) {
  const files = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (file.endsWith('.ts')) files.push(file);
    }
  };
  walk(path.join(root, 'src/api'));
  return files.sort();
}

/** Builds the program over `files` and types every property; returns how many it typed. */
async function typeProperties(root, files) {
  const { ts } = await import(new URL('typescript/compiler.cjs', dist).href);
  const { apiProgram } = await import(new URL('typescript/api-program.js', dist).href);
  // Which intersections are brands decides whether the smaller library serves, as in the generator.
  const { brandSchema } = await import(new URL('schema/resolve.js', dist).href);
  const isBrand = (checker, type) => brandSchema(checker, type) !== undefined;
  const read = (file) => readFileSync(file, 'utf8');
  const { program } = apiProgram(root, files, new Map(), read, 'subset', isBrand);
  const checker = program.getTypeChecker();
  let properties = 0;
  for (const file of files) {
    const visit = (node) => {
      if (ts.isInterfaceDeclaration(node) || ts.isClassDeclaration(node)) {
        for (const property of checker.getTypeAtLocation(node).getProperties()) {
          checker.getTypeOfSymbolAtLocation(property, node);
          properties++;
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(program.getSourceFile(file));
  }
  return properties;
}

if (isMainThread) {
  const { values } = parseArgs({ options: { threads: { type: 'string', default: '1' } } });
  if (values.threads !== '1' && values.threads !== '2')
    throw new Error('usage: node test/bench/program-floor.mjs [--threads 1|2]');
  // A code cache of its own, kept between runs as kubesmith's is: one written by this smaller run must
  // never serve kubesmith.
  process.env['KUBESMITH_CODE_CACHE_DIR'] ??= fileURLToPath(
    new URL('../../node_modules/.cache/kubesmith/program-floor-v8/', import.meta.url),
  );
  const root = process.cwd();
  const files = apiFiles(root);
  let properties;
  if (values.threads === '1') properties = await typeProperties(root, files);
  else {
    // Started first, as a two-thread run starts its worker: it loads TypeScript meanwhile.
    const worker = new Worker(new URL(import.meta.url), { workerData: { root }, execArgv: [] });
    const typed = new Promise((resolve, reject) => worker.once('message', resolve).once('error', reject));
    // The kind files shared out in turn; the files of a directory that declare no kind go to both.
    const kinds = files.filter((f) => /\.types\.ts$/.test(f));
    const shared = files.filter((f) => !kinds.includes(f));
    const shares = [0, 1].map((i) => [...shared, ...kinds.filter((_, k) => k % 2 === i)]);
    worker.postMessage(shares[1]);
    properties = (await typeProperties(root, shares[0])) + (await typed);
    await worker.terminate();
  }
  process.stdout.write(`${JSON.stringify({ files: files.length, properties })}\n`);
} else {
  parentPort.once('message', async (files) => {
    parentPort.postMessage(await typeProperties(workerData.root, files));
  });
}
