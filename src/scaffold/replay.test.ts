import { describe, expect, it } from 'vitest';
import { parseProject } from '../project/config.js';
import { parseBoilerplate, replaySteps } from './replay.js';

const project = (resources: string) =>
  parseProject(
    `domain: example.com\nlayout:\n  - typescript.kubesmith.dev/v1\nprojectName: demo\nversion: "3"\nresources:\n${resources}`,
    'PROJECT',
  );

const guestbook = (version: string, extra = '') =>
  `  - {group: webapp, version: ${version}, kind: Guestbook, domain: example.com, api: {namespaced: true}${extra}}\n`;

describe('replaySteps', () => {
  it('runs a kind\u2019s defaulting and validating webhooks after its API, its conversion once every spoke exists', () => {
    const config = project(
      guestbook(
        'v1',
        ', controller: true, webhooks: {defaulting: true, validation: true, conversion: true, spoke: [v2], webhookVersion: v1}',
      ) +
        guestbook('v2') +
        '  - {group: core, version: v1, kind: Pod, controller: true}\n',
    );
    const steps = replaySteps(config, undefined).map((step) => {
      const options = step.options as Record<string, unknown>;
      return `${step.command} ${String(options['version'] ?? '')}${options['conversion'] ? ' conversion' : ''}`;
    });
    expect(steps).toEqual([
      'init ',
      'create api v1',
      'create webhook v1',
      'create api v2',
      'create webhook v1 conversion',
      'create api v1',
    ]);
  });

  it('takes licence, owner and year from the license header of a PROJECT that does not record them', () => {
    const header = '/*\nCopyright 2024 The Demo Authors.\n\nLicensed under the Apache License';
    const init = replaySteps(project(guestbook('v1')), header)[0]!;
    expect(init.options).toMatchObject({ license: 'apache2', owner: 'The Demo Authors', year: 2024 });
    expect(replaySteps(project(guestbook('v1')), '')[0]!.options).toMatchObject({
      license: 'none',
      owner: '',
    });
    expect(parseBoilerplate('/*\nCopyright 2026.\n')).toEqual({ year: 2026 });
  });

  it('refuses a resource of another domain than the project', () => {
    const config = project(
      '  - {group: webapp, version: v1, kind: Guestbook, domain: other.io, api: {namespaced: true}}\n',
    );
    expect(() => replaySteps(config, undefined)).toThrow(/in domain other.io, not the project's example.com/);
  });
});
