/**
 * The GitHub workflows of a generated project: actions pinned by commit (the same commits as this
 * repository's own workflows), read-only tokens, and a test job that provides the envtest binaries before
 * `npm test`, so that its integration tests run in CI instead of being skipped. The autoupdate plugin's
 * workflow writes, so each of its jobs holds only the one write permission it uses, and the job that runs
 * the project's code (npm ci, build, test) holds none.
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
  on?: unknown;
  permissions?: unknown;
  jobs: Record<string, { permissions?: unknown; needs?: unknown; if?: string; steps: Step[] }>;
}

const repo = fileURLToPath(new URL('../..', import.meta.url));
let dir: string;
let texts: Map<string, string>;
let autoupdate: string;
beforeAll(async () => {
  dir = await tempDir('guestbook');
  expect((await run(dir, 'init', '--skip-install')).code).toBe(0);
  const workflows = path.join(dir, '.github/workflows');
  texts = new Map(
    readdirSync(workflows).map((file) => [file, readFileSync(path.join(workflows, file), 'utf8')]),
  );
  expect((await run(dir, 'edit', '--plugins', 'autoupdate')).code).toBe(0);
  autoupdate = readFileSync(path.join(workflows, 'auto-update.yml'), 'utf8');
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

/** Every action pinned to the commit this repository uses, and no checkout keeping its credentials. */
function expectPinned(file: string, text: string): void {
  const pins = repositoryPins();
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
    if (checkout) expect(checkout.with?.['persist-credentials'], file).toBe(false);
  }
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
    for (const [file, text] of [...texts, ['auto-update.yml', autoupdate] as const]) expectPinned(file, text);
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

describe('the autoupdate workflow (edit --plugins autoupdate)', () => {
  const workflow = () => parse(autoupdate) as Workflow;
  const runs = (job: string) =>
    workflow()
      .jobs[job]!.steps.map((step) => step.run)
      .filter((line): line is string => line !== undefined);

  it('runs weekly and by hand', () => {
    const on = workflow().on as { schedule: { cron: string }[]; workflow_dispatch: unknown };
    expect(on.schedule).toHaveLength(1);
    expect(on.schedule[0]!.cron).toMatch(/^\d+ \d+ \* \* \d$/);
    expect(on).toHaveProperty('workflow_dispatch');
  });

  it('grants nothing by default and each job only the one permission it uses', () => {
    expect(workflow().permissions).toEqual({});
    const permissions = Object.fromEntries(
      Object.entries(workflow().jobs).map(([name, job]) => [name, job.permissions]),
    );
    expect(permissions).toEqual({
      update: { contents: 'write' },
      verify: { contents: 'read' },
      'pull-request': { 'pull-requests': 'write' },
      'conflicts-issue': { issues: 'write' },
    });
  });

  it('merges with alpha update --force, then builds, lints and tests the result with a read-only token', () => {
    expect(runs('update').join('\n')).toMatch(/^\s*npx kubesmith alpha update .*--force( |$)/m);
    expect(runs('verify')).toEqual([
      'npm ci',
      'npx kubesmith envtest',
      'npm run build',
      'npm run lint',
      'npm test',
    ]);
    // The project's own code (its dependencies' install scripts, its tests) never runs where the token writes.
    for (const job of ['update', 'pull-request', 'conflicts-issue'])
      expect(runs(job).join('\n'), job).not.toMatch(/npm (run|test)/);
  });

  it('opens a pull request when the merge is clean, an issue when it conflicts, with gh and the job token', () => {
    const { jobs } = workflow();
    expect(jobs['pull-request']!.needs).toEqual(['update', 'verify']);
    expect(jobs['pull-request']!.if).toContain("needs.update.outputs.conflicts == '0'");
    expect(runs('pull-request').join('\n')).toContain('gh pr create');
    expect(jobs['conflicts-issue']!.if).toContain("needs.update.outputs.conflicts != '0'");
    expect(runs('conflicts-issue').join('\n')).toContain('gh issue create');
    // The conflicted files are read from the key `alpha update --json` reports them in (`conflicted`, as
    // test/cli/alpha-update.test.ts checks): a wrong key would count no conflict and propose the markers.
    expect(runs('update').join('\n')).toContain(`jq -r '.conflicted[]' "$RUNNER_TEMP/update.json"`);
    // The token reaches only the steps that push or call gh, through the environment.
    for (const [name, job] of Object.entries(jobs))
      for (const step of job.steps) {
        const env = (step as { env?: Record<string, string> }).env ?? {};
        if (env['GH_TOKEN'] !== undefined) expect(step.run, name).toMatch(/git [\s\S]*push|gh (pr|issue)/);
        expect(step.run ?? '', name).not.toContain('github.token');
      }
  });
});
