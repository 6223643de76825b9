/**
 * Parts of `alpha update` that need no git project: the CHANGELOG entries an update crosses, the command
 * lines an old kubesmith replays, and the line a failed post-step is reported by.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { changelogCrossed, lastLine, replayArgs, type Cli } from '../../src/cli/update-trees.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function cliWithChangelog(text: string | undefined): Promise<Cli> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'kubesmith-changelog-'));
  dirs.push(dir);
  await mkdir(dir, { recursive: true });
  if (text !== undefined) await writeFile(path.join(dir, 'CHANGELOG.md'), text);
  return { name: dir, bin: path.join(dir, 'bin', 'kubesmith.js'), packageDir: dir };
}

describe('changelogCrossed', () => {
  it('lists the entries the new kubesmith carries and the old one does not, each on one line', async () => {
    const old = await cliWithChangelog(
      '# Changelog\n\n## 0.1.0\n\n- First entry,\n  wrapped.\n- Second entry.\n',
    );
    const now = await cliWithChangelog(
      '# Changelog\n\n## 0.2.0\n\n- Third entry\n  over two lines.\n\n## 0.1.0\n\n- First entry,\n  wrapped.\n- Second entry.\n',
    );
    expect(changelogCrossed(old, now)).toEqual(['- Third entry over two lines.']);
  });

  it('lists nothing when the old kubesmith carries no CHANGELOG (packages before this change)', async () => {
    expect(
      changelogCrossed(await cliWithChangelog(undefined), await cliWithChangelog('- An entry.\n')),
    ).toEqual([]);
  });
});

const PROJECT_DIR = path.join(os.tmpdir(), 'replay-args-project');

describe('replayArgs', () => {
  it('passes a flag only when it is not the default, so an older kubesmith runs the command', () => {
    expect(
      replayArgs(
        {
          command: 'init',
          options: {
            projectName: 'guestbook',
            domain: 'example.com',
            owner: '',
            license: 'apache2',
            namespaced: false,
            multigroup: false,
          },
        },
        PROJECT_DIR,
      ),
    ).toEqual(['init', '--domain', 'example.com', '--project-name', 'guestbook', '--skip-install']);
    expect(
      replayArgs(
        {
          command: 'create api',
          options: {
            group: 'webapp',
            version: 'v1',
            kind: 'Memcached',
            namespaced: true,
            resource: true,
            controller: true,
            deployImage: {
              image: 'memcached:1.6',
              containerPort: 11211,
              containerCommand: ['memcached', '-m=64'],
              serviceType: 'ClusterIP',
            },
          },
        },
        PROJECT_DIR,
      ),
    ).toEqual([
      'create',
      'api',
      '--group',
      'webapp',
      '--version',
      'v1',
      '--kind',
      'Memcached',
      '--image',
      'memcached:1.6',
      '--image-container-port',
      '11211',
      '--image-container-command',
      'memcached,-m=64',
    ]);
    expect(
      replayArgs(
        {
          command: 'create webhook',
          options: {
            group: 'webapp',
            version: 'v1',
            kind: 'Guestbook',
            defaulting: false,
            validation: false,
            conversion: true,
            spoke: ['v2', 'v3'],
          },
        },
        PROJECT_DIR,
      ),
    ).toEqual([
      'create',
      'webhook',
      '--group',
      'webapp',
      '--version',
      'v1',
      '--kind',
      'Guestbook',
      '--conversion',
      '--spoke',
      'v2,v3',
    ]);
  });

  it("replays a self-provided webhook certificate and an imported kind, whose CRD copy is the input project's", () => {
    expect(
      replayArgs(
        {
          command: 'init',
          options: {
            projectName: 'guestbook',
            domain: 'example.com',
            owner: '',
            license: 'apache2',
            namespaced: false,
            multigroup: false,
            certProvider: 'self',
          },
        },
        PROJECT_DIR,
      ),
    ).toEqual([
      'init',
      '--domain',
      'example.com',
      '--project-name',
      'guestbook',
      '--skip-install',
      '--cert-provider',
      'self',
    ]);
    expect(
      replayArgs(
        {
          command: 'import crd',
          options: { source: 'config/crd/external/cert-manager.io_certificates.yaml', version: ['v1'] },
        },
        PROJECT_DIR,
      ),
    ).toEqual([
      'import',
      'crd',
      path.join(PROJECT_DIR, 'config/crd/external/cert-manager.io_certificates.yaml'),
      '--version',
      'v1',
    ]);
  });
});

describe('lastLine', () => {
  it("names a test runner's failure, not its summary, without colours", () => {
    const stdout =
      ' \u001b[31mFAIL\u001b[39m test/a.test.ts > converts\nAssertionError: expected 1\n Test Files  1 failed\n Duration 3s\n';
    expect(lastLine({ code: 1, stdout, stderr: '', timedOut: false })).toBe('FAIL test/a.test.ts > converts');
    expect(lastLine({ code: 1, stdout: '', stderr: '', timedOut: true })).toBe('timed out');
  });
});
