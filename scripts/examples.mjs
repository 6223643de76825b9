#!/usr/bin/env node
/**
 * The projects under examples/ are made by the CLI: this script makes each one again, from the commands
 * below, with the CLI of this checkout (build it first: npm run build), and
 *
 *   node scripts/examples.mjs             (npm run examples)        writes the result over examples/NAME
 *   node scripts/examples.mjs --check     (npm run examples:check)  writes nothing; exit 3 and a list of
 *                                                                   the files that differ
 *   --dir DIR                             work on DIR instead of examples/ (the tests use a copy)
 *   --only NAME                           one example
 *
 * Only the files a user edits after scaffolding (USER_FILES of each example) may differ from what the CLI
 * makes. scripts/lib/made-projects.mjs does the work (shared with scripts/golden.mjs).
 */
import { main } from './lib/made-projects.mjs';

export const EXAMPLES = {
  'pod-labeler': {
    init: ['--domain', 'example.com', '--project-name', 'pod-labeler'],
    commands: [
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
    USER_FILES: [
      'README.md',
      // main.ts passes the controller's cache selector to the manager.
      'src/main.ts',
      'src/controllers/pod.controller.ts',
      'test/controllers/pod.controller.test.ts',
      'test/controllers/pod.controller.integration.test.ts',
    ],
  },
  'demo-application': {
    init: ['--domain', 'example.com', '--project-name', 'demo-application'],
    commands: [
      [
        'create',
        'api',
        '--group',
        'demo',
        '--version',
        'v1',
        '--kind',
        'DemoApplication',
        '--image',
        'nginx:1.27',
        '--image-container-port',
        '80',
        '--service-type',
        'NodePort',
        '--node-port',
        '30002',
      ],
    ],
    USER_FILES: ['README.md'],
  },
  'node-agent': {
    init: ['--domain', 'example.com', '--project-name', 'node-agent'],
    commands: [['create', 'api', '--group', 'agents', '--version', 'v1', '--kind', 'NodeAgent']],
    USER_FILES: [
      'README.md',
      'src/api/agents/v1/nodeagent.types.ts',
      'src/controllers/nodeagent.controller.ts',
      'test/controllers/nodeagent.controller.test.ts',
      'test/controllers/nodeagent.controller.integration.test.ts',
      'config/samples/agents_v1_nodeagent.yaml',
      // Its integration test starts a cluster of its own (three labelled nodes, then adds and removes
      // nodes): no global setup starting a shared one.
      'vitest.config.ts',
      // The manager's own availability and size: a PodDisruptionBudget, and requests/limits measured.
      'config/manager/kustomization.yaml',
      'config/manager/manager.yaml',
      'config/manager/pdb.yaml',
    ],
  },
};

await main({
  script: 'scripts/examples.mjs',
  dir: 'examples',
  regenerate: 'npm run examples',
  projects: EXAMPLES,
});
