#!/usr/bin/env node
/**
 * testdata/project is the golden generated project, as kubebuilder keeps testdata/project-v4: the README's
 * quick start plus webhooks, a conversion between two versions, and a controller of a built-in kind, exactly
 * as the CLI makes them (no file is edited by hand). Every change to what the CLI writes shows in its diff.
 *
 *   node scripts/golden.mjs           (npm run golden)        writes the result over testdata/project
 *   node scripts/golden.mjs --check   (npm run golden:check)  writes nothing; exit 3 and a list of the
 *                                                             files that differ (test/golden runs it)
 *   --dir DIR                         work on DIR instead of testdata/
 *
 * scripts/lib/made-projects.mjs does the work (shared with scripts/examples.mjs).
 */
import { main } from './lib/made-projects.mjs';

const webapp = ['--group', 'webapp', '--version'];

export const GOLDEN = {
  project: {
    // The quick start: the project is named after its directory, as there.
    init: ['--domain', 'example.com'],
    commands: [
      ['create', 'api', ...webapp, 'v1', '--kind', 'Guestbook', '--resource', '--controller'],
      [
        'create',
        'webhook',
        ...webapp,
        'v1',
        '--kind',
        'Guestbook',
        '--defaulting',
        '--programmatic-validation',
      ],
      // A second version, converted to and from v1 (the hub) by a conversion webhook.
      ['create', 'api', ...webapp, 'v2', '--kind', 'Guestbook', '--resource', '--controller=false'],
      ['create', 'webhook', ...webapp, 'v1', '--kind', 'Guestbook', '--conversion', '--spoke', 'v2'],
      // A controller of a built-in kind.
      [
        'create',
        'api',
        '--group',
        'core',
        '--version',
        'v1',
        '--kind',
        'Pod',
        '--resource=false',
        '--controller',
      ],
    ],
    USER_FILES: [],
  },
};

await main({ script: 'scripts/golden.mjs', dir: 'testdata', regenerate: 'npm run golden', projects: GOLDEN });
