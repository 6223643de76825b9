/**
 * The floors of docs/architecture.md, checked on the code: a module of src/ or runtime/src/ imports from
 * its own folder, or from a folder on a lower floor, never from one above it nor from another folder of
 * its own floor; the modules import one another in no cycle. Type-only imports are left out of both
 * rules: they are erased when compiled and load nothing. And every folder is in the document's tree, with
 * its floor.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('..', import.meta.url));

/** src/: each folder's floor (`.` is the files at the top of src/). Lower floors know nothing of higher ones. */
const SRC_FLOORS: Record<string, number> = {
  '.': 0, // errors, printable, version, lazy-yaml, within, deep-freeze
  typescript: 1, // the compiler: loading it, its code cache, building the program
  project: 1, // PROJECT, the project's layout, the atomic writer
  envtest: 1, // the envtest binaries
  markers: 2,
  schema: 3,
  manifests: 4, // the composition root of the generator
  scaffold: 5,
  shipping: 6,
  importer: 6, // kubesmith import crd: CRDs to TypeScript
  run: 6, // kubesmith run: the manager against a cluster, webhooks served locally
  cli: 7,
};

/**
 * runtime/src/: the modules every other one uses (errors, kinds, types, logger, metrics, clock, tracing) at the
 * bottom, then internal/ and validation/ (the API server's checks of an object, which the CLI runs too), the
 * webhook server (its internal/ below it), the other modules (client, cache, controller, manager...), and
 * envtest (its internal/ below it) and the test helpers on top.
 */
const RUNTIME_FOUNDATIONS = new Set(['errors', 'kinds', 'types', 'logger', 'metrics', 'clock', 'tracing']);
const RUNTIME_FLOORS: Record<string, number> = {
  '(foundations)': 0,
  internal: 1,
  validation: 1, // objects checked against a CRD as the API server does (CEL, RE2): the CLI's too
  'webhook/internal': 2,
  webhook: 3,
  '.': 4,
  'envtest/internal': 5,
  envtest: 6,
  testing: 6,
};

/**
 * Imports that break the floors and are known, each to be fixed where it is (`module -> target`): an
 * internal module that reaches up into its package.
 */
/** Upward imports allowed by name, `<dir>/<module> -> <target>` (none today: fix one rather than add it). */
const KNOWN_UPWARD = new Set<string>([]);

interface Tree {
  dir: string;
  floors: Record<string, number>;
  /** The floor key of a module (relative to dir, without extension). */
  keyOf(module: string): string;
}

const folderOf = (module: string) => path.posix.dirname(module);
const TREES: Tree[] = [
  { dir: 'src', floors: SRC_FLOORS, keyOf: folderOf },
  {
    dir: 'runtime/src',
    floors: RUNTIME_FLOORS,
    keyOf: (module) => (RUNTIME_FOUNDATIONS.has(module) ? '(foundations)' : folderOf(module)),
  },
];

/** The modules under `dir` (relative, with `/`, without extension), tests and declarations left out. */
function modulesOf(dir: string, prefix = ''): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(path.join(repo, dir, prefix), { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...modulesOf(dir, rel));
    else if (/\.c?ts$/.test(entry.name) && !/\.(test|d)\.c?ts$/.test(entry.name))
      out.push(rel.replace(/\.c?ts$/, ''));
  }
  return out;
}

function foldersOf(dir: string, prefix = ''): string[] {
  return readdirSync(path.join(repo, dir, prefix), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => {
      const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
      return [rel, ...foldersOf(dir, rel)];
    });
}

interface Import {
  /** Relative to the tree's dir, without extension. */
  target: string;
  typeOnly: boolean;
  line: number;
}

/** The project-relative imports of a module: static, `export ... from`, `import x = require()`, `import()`. */
function importsOf(dir: string, module: string): Import[] {
  const file = ['.ts', '.cts'].map((ext) => path.join(repo, dir, module + ext)).find((f) => existsSync(f))!;
  const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const out: Import[] = [];
  const add = (specifier: ts.Expression, typeOnly: boolean) => {
    if (!ts.isStringLiteral(specifier) || !specifier.text.startsWith('.')) return;
    const target = path.posix.join(path.posix.dirname(module), specifier.text).replace(/\.(c?js|c?ts)$/, '');
    const line = sf.getLineAndCharacterOfPosition(specifier.getStart(sf)).line + 1;
    out.push({ target, typeOnly, line });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const named = clause?.namedBindings;
      const allTypes =
        !!clause &&
        !clause.name &&
        !!named &&
        ts.isNamedImports(named) &&
        named.elements.length > 0 &&
        named.elements.every((e) => e.isTypeOnly);
      add(node.moduleSpecifier, !!clause && (clause.isTypeOnly || allTypes));
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier) {
      add(node.moduleSpecifier, node.isTypeOnly);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node.moduleReference.expression, node.isTypeOnly);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [first] = node.arguments;
      if (first) add(first, false);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

describe.each(TREES)('the modules of $dir', (tree) => {
  const modules = modulesOf(tree.dir);
  const graph = new Map(modules.map((m) => [m, importsOf(tree.dir, m).filter((i) => !i.typeOnly)]));

  it('each have a floor', () => {
    expect(modules.filter((m) => tree.floors[tree.keyOf(m)] === undefined)).toEqual([]);
  });

  it('import only from their own folder or a lower floor', () => {
    const upward: string[] = [];
    for (const [module, imports] of graph) {
      const from = tree.keyOf(module);
      for (const { target, line } of imports) {
        const to = tree.keyOf(target);
        if (to === from || KNOWN_UPWARD.has(`${tree.dir}/${module} -> ${target}`)) continue;
        const [a, b] = [tree.floors[from], tree.floors[to]];
        if (a === undefined || b === undefined || b >= a)
          upward.push(
            `${tree.dir}/${module}:${line} (${from}, floor ${a}) imports ${target} (${to}, floor ${b})`,
          );
      }
    }
    expect(upward).toEqual([]);
  });

  it('import one another in no cycle (but through type-only imports)', () => {
    // Tarjan's strongly connected components over the modules' value imports.
    const index = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const onStack = new Set<string>();
    const cycles: string[][] = [];
    const connect = (m: string) => {
      index.set(m, index.size);
      low.set(m, index.get(m)!);
      stack.push(m);
      onStack.add(m);
      for (const { target } of graph.get(m) ?? []) {
        if (!graph.has(target)) continue;
        if (!index.has(target)) {
          connect(target);
          low.set(m, Math.min(low.get(m)!, low.get(target)!));
        } else if (onStack.has(target)) low.set(m, Math.min(low.get(m)!, index.get(target)!));
      }
      if (low.get(m) === index.get(m)) {
        const component: string[] = [];
        let top: string | undefined;
        do {
          top = stack.pop()!;
          onStack.delete(top);
          component.push(top);
        } while (top !== m);
        if (component.length > 1) cycles.push(component.sort());
      }
    };
    for (const m of graph.keys()) if (!index.has(m)) connect(m);
    expect(cycles).toEqual([]);
  });
});

describe('an internal/ module', () => {
  // Type-only imports count here: an internal module serves its package and knows nothing of its face.
  it.each(TREES)("of $dir never imports its package's public face (index)", ({ dir }) => {
    const found: string[] = [];
    for (const module of modulesOf(dir).filter((m) => /(^|\/)internal\//.test(m))) {
      const pkg = module.slice(0, module.lastIndexOf('internal/'));
      for (const { target, line } of importsOf(dir, module)) {
        if (target !== `${pkg}index`) continue;
        found.push(`${dir}/${module}:${line} imports ${target}`);
      }
    }
    expect(found).toEqual([]);
  });
});

describe('the webhook server (runtime/src/webhook/server.ts)', () => {
  it('knows no kind of webhook: it imports neither admission nor conversion, even for a type', () => {
    const kinds = importsOf('runtime/src', 'webhook/server')
      .map((i) => i.target)
      .filter((target) => target === 'webhook/admission' || target === 'webhook/conversion');
    expect(kinds).toEqual([]);
  });
});

describe("docs/architecture.md's tree", () => {
  const doc = readFileSync(path.join(repo, 'docs/architecture.md'), 'utf8');
  const tree = /```\n([\s\S]*?)```/.exec(doc)?.[1] ?? '';

  it.each(TREES)('names every folder of $dir with its floor', ({ dir, floors }) => {
    const missing: string[] = [];
    for (const folder of ['.', ...foldersOf(dir)]) {
      const name = folder === '.' ? `${dir}/` : `${dir}/${folder}/`;
      const line = tree.split('\n').find((l) => l.startsWith(`${name} `));
      const floor = floors[folder];
      if (line === undefined) missing.push(`${name}: not in the tree`);
      else if (floor !== undefined && !line.includes(`floor ${floor}`))
        missing.push(`${name}: the tree does not say "floor ${floor}"`);
    }
    expect(missing).toEqual([]);
  });
});
