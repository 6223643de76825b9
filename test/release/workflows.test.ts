/**
 * The repository's GitHub workflows (.github/workflows): actions pinned by commit, least-privilege tokens,
 * and a release that publishes both packages with provenance, the runtime first.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const dir = path.join(repo, '.github/workflows');

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
  env?: Record<string, string>;
}
interface Job {
  permissions?: unknown;
  needs?: string | string[];
  steps?: Step[];
  uses?: string;
}
interface Workflow {
  on?: unknown;
  permissions?: unknown;
  concurrency?: { group?: string; 'cancel-in-progress'?: unknown } | string;
  jobs: Record<string, Job>;
}

const files = readdirSync(dir).filter((f) => /\.ya?ml$/.test(f));
const texts = new Map(files.map((f) => [f, readFileSync(path.join(dir, f), 'utf8')]));
const workflows = new Map(files.map((f) => [f, parse(texts.get(f)!) as Workflow]));

function workflow(file: string): Workflow {
  const found = workflows.get(file);
  if (!found) throw new Error(`.github/workflows/${file} is missing`);
  return found;
}

/** Every `uses:` of every job and step, with where it is. */
function uses(): { file: string; where: string; uses: string }[] {
  const found: { file: string; where: string; uses: string }[] = [];
  for (const [file, wf] of workflows) {
    for (const [id, job] of Object.entries(wf.jobs)) {
      if (job.uses) found.push({ file, where: `jobs.${id}`, uses: job.uses });
      (job.steps ?? []).forEach((step, i) => {
        if (step.uses) found.push({ file, where: `jobs.${id}.steps[${i}]`, uses: step.uses });
      });
    }
  }
  return found;
}

/** `contents: read` -> { contents: 'read' }; a string (`read-all`, `write-all`) is kept as it is. */
function scopes(permissions: unknown): Record<string, string> | string | undefined {
  if (permissions === undefined || permissions === null) return undefined;
  if (typeof permissions === 'string') return permissions;
  return permissions as Record<string, string>;
}

function runs(job: Job): string {
  return (job.steps ?? []).map((s) => s.run ?? '').join('\n');
}

function stepUsing(job: Job, action: string): Step | undefined {
  return (job.steps ?? []).find((s) => s.uses?.startsWith(`${action}@`));
}

it('there are the CI and release workflows', () => {
  expect(files.sort()).toEqual(['ci.yml', 'release.yml']);
});

describe('every workflow', () => {
  it('pins each action by a full commit SHA, with the release named in a comment', () => {
    const all = uses();
    expect(all.length).toBeGreaterThan(5);
    for (const { file, where, uses: ref } of all) {
      expect(ref, `${file} ${where}`).toMatch(/^[\w.-]+\/[\w.-]+(\/[\w./-]+)?@[0-9a-f]{40}$/);
    }
    for (const [file, text] of texts) {
      for (const line of text.split('\n').filter((l) => /^\s*(-\s+)?uses:/.test(l))) {
        expect(line, file).toMatch(/@[0-9a-f]{40} # v\d+\.\d+\.\d+$/);
      }
    }
  });

  it('pins one action to one commit everywhere, named as one release', () => {
    const pins = new Map<string, Set<string>>();
    for (const text of texts.values()) {
      for (const [, action, pin] of text.matchAll(/uses:\s*([\w./-]+)@([0-9a-f]{40} # \S+)/g)) {
        pins.set(action!, (pins.get(action!) ?? new Set()).add(pin!));
      }
    }
    for (const [action, set] of pins) expect([...set], action).toHaveLength(1);
  });

  it('declares read-only permissions, at the top and on every job', () => {
    for (const [file, wf] of workflows) {
      expect(scopes(wf.permissions), file).toEqual({ contents: 'read' });
      for (const [id, job] of Object.entries(wf.jobs)) {
        const granted = scopes(job.permissions);
        expect(granted, `${file} jobs.${id} declares no permissions`).toBeTypeOf('object');
        expect((granted as Record<string, string>)['contents'], `${file} jobs.${id}`).toBe('read');
      }
    }
  });

  it('grants id-token: write to the publish job only, and no other write access', () => {
    const writes: string[] = [];
    for (const [file, wf] of workflows) {
      for (const [id, job] of Object.entries(wf.jobs)) {
        for (const [scope, level] of Object.entries(
          (scopes(job.permissions) ?? {}) as Record<string, string>,
        )) {
          if (level !== 'read') writes.push(`${file} ${id} ${scope}: ${level}`);
        }
      }
    }
    expect(writes).toEqual(['release.yml publish id-token: write']);
  });

  it('declares a concurrency group', () => {
    for (const [file, wf] of workflows) expect(wf.concurrency, file).toBeDefined();
  });

  it('caches the envtest binaries under a key made of files that exist, with Go set up to build them', () => {
    const jobs = [workflow('ci.yml').jobs['test']!, workflow('release.yml').jobs['test']!];
    for (const job of jobs) {
      const cache = stepUsing(job, 'actions/cache');
      expect(cache?.with?.['path']).toBe('~/.cache/kubesmith/envtest');
      const key = String(cache?.with?.['key']);
      const hashed = [...key.matchAll(/hashFiles\(([^)]*)\)/g)].flatMap(([, args]) =>
        [...args!.matchAll(/'([^']+)'/g)].map(([, file]) => file!),
      );
      // hashFiles() of a missing file is '': the key would stop changing with the envtest versions.
      expect(hashed.length).toBeGreaterThan(0);
      for (const file of hashed) expect(existsSync(path.join(repo, file)), file).toBe(true);
      expect(stepUsing(job, 'actions/setup-go')?.with?.['go-version']).toBeTruthy();
    }
  });
});

describe('ci.yml', () => {
  it('runs .ci/run on pushes and pull requests', () => {
    const ci = workflow('ci.yml');
    expect(Object.keys(ci.on as object).sort()).toEqual(['pull_request', 'push']);
    expect(runs(ci.jobs['test']!)).toContain('bash .ci/run');
    expect(existsSync(path.join(repo, '.ci/run'))).toBe(true);
  });
});

describe('release.yml', () => {
  const release = workflow('release.yml');
  const publish = release.jobs['publish']!;

  it('runs on version tags', () => {
    expect(release.on).toEqual({ push: { tags: ['v*.*.*'] } });
  });

  it('is never cancelled half-way', () => {
    expect(release.concurrency).toMatchObject({ 'cancel-in-progress': false });
  });

  it('checks the tag against both versions before anything else', () => {
    const verify = release.jobs['verify']!;
    expect(verify.needs).toBeUndefined();
    expect(runs(verify)).toMatch(/node scripts\/versions\.mjs check\s+--tag "\$GITHUB_REF_NAME"/);
    expect(existsSync(path.join(repo, 'scripts/versions.mjs'))).toBe(true);
  });

  it('tests with npm ci and npm test, after the check', () => {
    const test = release.jobs['test']!;
    expect(test.needs).toBe('verify');
    const script = runs(test);
    expect(script.indexOf('npm ci')).toBeGreaterThanOrEqual(0);
    expect(script.indexOf('npm test')).toBeGreaterThan(script.indexOf('npm ci'));
  });

  it('publishes only after the tests passed, the tarballs they tested', () => {
    expect(publish.needs).toBe('test');
    expect(stepUsing(publish, 'actions/checkout')).toBeUndefined();
    expect(stepUsing(publish, 'actions/download-artifact')?.with?.['name']).toBe(
      stepUsing(release.jobs['test']!, 'actions/upload-artifact')?.with?.['name'],
    );
  });

  it('publishes both packages with provenance and public access, the runtime first', () => {
    const script = runs(publish);
    expect(script).toMatch(/npm publish "\$tarball" --provenance --access public/);
    // The tarball paths start with ./ : npm takes `packages/x.tgz` for a GitHub repository (owner/repo).
    const runtime = script.indexOf('publish @kubesmith/runtime "./packages/kubesmith-runtime-$version.tgz"');
    const cli = script.indexOf('publish kubesmith "./packages/kubesmith-$version.tgz"');
    expect(runtime).toBeGreaterThan(0);
    expect(cli).toBeGreaterThan(runtime);
  });

  it('authenticates with NODE_AUTH_TOKEN from a secret, against the npm registry', () => {
    const step = (publish.steps ?? []).find((s) => s.run?.includes('npm publish'));
    expect(step?.env?.['NODE_AUTH_TOKEN']).toMatch(/^\$\{\{ secrets\.\w+ \}\}$/);
    expect(stepUsing(publish, 'actions/setup-node')?.with?.['registry-url']).toBe(
      'https://registry.npmjs.org',
    );
  });
});
