/**
 * The GitHub workflows of a generated project: actions pinned by commit (the same commits as this
 * repository's own workflows), read-only tokens, and a test job that provides the envtest binaries before
 * `npm test`, so that its integration tests run in CI instead of being skipped.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { removeTemp, run, tempDir } from '../helpers/run.js';

interface Step {
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
}
interface Workflow {
  permissions?: unknown;
  jobs: Record<string, { permissions?: unknown; steps: Step[] }>;
}

const repo = fileURLToPath(new URL('../..', import.meta.url));
let dir: string;
let texts: Map<string, string>;
beforeAll(async () => {
  dir = await tempDir('guestbook');
  expect((await run(dir, 'init', '--skip-install')).code).toBe(0);
  const workflows = path.join(dir, '.github/workflows');
  texts = new Map(
    readdirSync(workflows).map((file) => [file, readFileSync(path.join(workflows, file), 'utf8')]),
  );
});
afterAll(async () => {
  await removeTemp(dir);
});

/** `owner/action` -> the commit this repository's own workflows pin it to. */
function repositoryPins(): Map<string, string> {
  const pins = new Map<string, string>();
  const own = path.join(repo, '.github/workflows');
  for (const file of readdirSync(own)) {
    for (const [, action, sha] of readFileSync(path.join(own, file), 'utf8').matchAll(
      /uses: ([\w-]+\/[\w-]+)@([0-9a-f]{40})/g,
    ))
      pins.set(action!, sha!);
  }
  return pins;
}

describe('generated workflows', () => {
  it('are test.yml, lint.yml and chart.yml, each with a read-only token', () => {
    expect([...texts.keys()].sort()).toEqual(['chart.yml', 'lint.yml', 'test.yml']);
    for (const [file, text] of texts) {
      const workflow = parse(text) as Workflow;
      expect(workflow.permissions, file).toEqual({ contents: 'read' });
      for (const job of Object.values(workflow.jobs)) expect(job.permissions, file).toBeUndefined();
    }
  });

  it('pin every action by commit, with its release in a comment, as this repository does', () => {
    const pins = repositoryPins();
    for (const [file, text] of texts) {
      const lines = text.split('\n').filter((line) => /^\s+(?:- )?uses: /.test(line));
      expect(lines.length, file).toBeGreaterThan(1);
      for (const line of lines) {
        const match = /uses: ([\w-]+\/[\w-]+)@([0-9a-f]{40}) # v\d+\.\d+\.\d+$/.exec(line);
        expect(match, `${file}: ${line.trim()}`).not.toBeNull();
        expect(match![2], `${file}: ${match![1]} is pinned to another commit than in .github/workflows`).toBe(
          pins.get(match![1]!),
        );
      }
      // Checkout keeps no credentials for later steps.
      for (const job of Object.values((parse(text) as Workflow).jobs)) {
        const checkout = job.steps.find((step) => step.uses?.startsWith('actions/checkout@'));
        expect(checkout?.with?.['persist-credentials'], file).toBe(false);
      }
    }
  });

  it('test.yml caches and provides the envtest binaries before npm test', () => {
    const steps = (parse(texts.get('test.yml')!) as Workflow).jobs['test']!.steps;
    const index = (predicate: (step: Step) => boolean) => steps.findIndex(predicate);
    const cache = index((step) => step.uses?.startsWith('actions/cache@') === true);
    const provide = index((step) => step.run === 'npx kubesmith envtest');
    const test = index((step) => step.run === 'npm test');
    expect(steps[cache]?.with?.['path']).toBe('~/.cache/kubesmith/envtest');
    expect(steps[cache]?.with?.['key']).toBe(
      "envtest-${{ runner.os }}-${{ runner.arch }}-${{ hashFiles('package-lock.json') }}",
    );
    expect(cache).toBeGreaterThan(-1);
    expect(provide).toBeGreaterThan(cache);
    expect(test).toBeGreaterThan(provide);
  });

  it('chart.yml builds a pinned helm, renders the chart, then lints and templates it', () => {
    const steps = (parse(texts.get('chart.yml')!) as Workflow).jobs['chart']!.steps;
    const runs = steps.map((step) => step.run).filter(Boolean);
    expect(runs).toEqual([
      'go install helm.sh/helm/v3/cmd/helm@v3.19.0',
      'npm ci',
      'npx kubesmith envtest',
      'npm run helm-chart',
      'helm lint --strict dist/chart',
      'helm template guestbook dist/chart --namespace guestbook-system > /dev/null',
    ]);
  });
});
