/**
 * Flag text that would close the comment or the string it is written into (`*\/`, quotes, line breaks,
 * `]`, `${`): the generated files still parse, hold no code or markers of the flag's making, and give the
 * value back as it was given.
 */
import ts from 'typescript';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { read, removeTemp, run, runWithEnv, snapshot, tempDir } from '../helpers/run.js';

let dir: string;
beforeEach(async () => {
  dir = await tempDir('demo');
});
afterEach(async () => {
  await removeTemp(dir);
});

/** The file parsed by TypeScript; a syntax error fails the test. */
function parseTypeScript(file: string, text: string): ts.SourceFile {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const diagnostics = (source as unknown as { parseDiagnostics: ts.Diagnostic[] }).parseDiagnostics;
  expect(diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))).toEqual([]);
  return source;
}

/** The names a file declares at its top level. */
function topLevelNames(source: ts.SourceFile): string[] {
  return source.statements.flatMap((statement) => {
    if (ts.isVariableStatement(statement))
      return statement.declarationList.declarations.map((d) => d.name.getText(source));
    const name = (statement as { name?: ts.Node }).name;
    return name ? [name.getText(source)] : [];
  });
}

/** The string values of every array literal of strings in `source`. */
function stringArrays(source: ts.Node): string[][] {
  const arrays: string[][] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isArrayLiteralExpression(node) && node.elements.every(ts.isStringLiteral))
      arrays.push(node.elements.map((element) => (element as ts.StringLiteral).text));
    ts.forEachChild(node, visit);
  };
  visit(source);
  return arrays.filter((array) => array.length > 0);
}

describe('--owner', () => {
  const owner = 'Evil */ export const injected = 1; /* Corp';

  it('stays inside the license comment of every generated source file', async () => {
    expect((await run(dir, 'init', '--domain', 'example.com', '--owner', owner, '--skip-install')).code).toBe(
      0,
    );
    for (const file of ['src/main.ts', 'src/settings.ts', 'test/envtest.ts', 'vitest.config.ts']) {
      const text = await read(dir, file);
      const source = parseTypeScript(file, text);
      expect(topLevelNames(source)).not.toContain('injected');
      // The comment that heads the file holds the whole owner, its `*/` broken.
      const [header] = ts.getLeadingCommentRanges(text, 0) ?? [];
      expect(text.slice(header!.pos, header!.end)).toContain('Copyright');
      expect(text.slice(header!.pos, header!.end)).toContain('Evil *\\/ export const injected = 1; /* Corp');
    }
  });

  it.each([
    ['a line break', 'ACME\n+groupName=evil.io'],
    ['a carriage return', 'ACME\r*/'],
    ['a line separator', 'ACME\u2028x'],
  ])('is refused when it holds %s: one line and a hint, exit 2, nothing written', async (_what, value) => {
    const result = await run(dir, 'init', '--domain', 'example.com', '--owner', value, '--skip-install');
    expect(result.code).toBe(2);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^error: --owner ".*" contains a line break or control character$/s);
    expect(lines[1]).toMatch(/^hint: /);
    expect(await snapshot(dir)).toEqual({});
  });
});

describe('--image-container-command', () => {
  const words = [
    'sh',
    '-c',
    'echo \'quoted\' "double" */ ] ${HOME} \\n \\ end',
    'two\nlines +kubebuilder:validation:MaxLength=1',
    'tab\there\u2028sep',
  ];
  const api = ['create', 'api', '--group', 'demo', '--version', 'v1', '--kind', 'DemoApplication'];

  it('comes out of the controller, its test and PROJECT as the same words, with no code or markers of its own', async () => {
    expect((await run(dir, 'init', '--domain', 'example.com', '--skip-install')).code).toBe(0);
    const result = await run(
      dir,
      ...api,
      '--image',
      'nginx:1.27',
      '--image-container-command',
      words.join(','),
    );
    expect(result.stderr).not.toMatch(/^(error|warning)/m);
    expect(result.code).toBe(0);

    const controllerFile = 'src/controllers/demoapplication.controller.ts';
    const controller = parseTypeScript(controllerFile, await read(dir, controllerFile));
    const command = controller.statements
      .filter(ts.isVariableStatement)
      .flatMap((statement) => statement.declarationList.declarations)
      .find((declaration) => declaration.name.getText(controller) === 'DEFAULT_COMMAND');
    expect(command?.initializer && ts.isArrayLiteralExpression(command.initializer)).toBe(true);
    expect(stringArrays(command!.initializer!)).toEqual([words]);

    const testFile = 'test/controllers/demoapplication.controller.test.ts';
    expect(stringArrays(parseTypeScript(testFile, await read(dir, testFile)))).toContainEqual(words);

    // The types keep their fields; the command is in a comment, on one line, its `*/` broken.
    const typesFile = 'src/api/demo/v1/demoapplication.types.ts';
    const typesText = await read(dir, typesFile);
    const types = parseTypeScript(typesFile, typesText);
    const spec = types.statements.find(
      (statement): statement is ts.InterfaceDeclaration =>
        ts.isInterfaceDeclaration(statement) && statement.name.text === 'DemoApplicationSpec',
    );
    expect(spec?.members.map((member) => member.name?.getText(types))).toEqual([
      'replicas',
      'image',
      'command',
      'ports',
      'serviceType',
      'env',
      'resources',
    ]);
    expect(typesText).not.toMatch(/^\s*\*?\s*\+kubebuilder:validation:MaxLength=1$/m);
    expect(typesText).toContain('two\\u000alines +kubebuilder:validation:MaxLength=1');

    const project = parse(await read(dir, 'PROJECT')) as {
      plugins: Record<string, { resources: { options: { containerCommand: string } }[] }>;
    };
    const options = project.plugins['deploy-image.kubesmith.dev/v1-alpha']?.resources[0]?.options;
    expect(options?.containerCommand).toBe(words.join(','));
  });
});

describe('KUBESMITH_RUNTIME_SPEC', () => {
  it('is one JSON string in package.json, whatever its quotes and line breaks', async () => {
    const spec = 'file:x.tgz", "evil": "1\n';
    const env = { ...process.env, KUBESMITH_RUNTIME_SPEC: spec, KUBESMITH_CLI_SPEC: '^0.1.0' };
    const result = await runWithEnv(env, dir, 'init', '--domain', 'example.com', '--skip-install');
    expect(result.code).toBe(0);
    const manifest = JSON.parse(await read(dir, 'package.json')) as Record<string, Record<string, string>>;
    expect(manifest['dependencies']?.['@kubesmith/runtime']).toBe(spec);
    expect(manifest['dependencies']).not.toHaveProperty('evil');
  });
});
