/** `kubesmith manifests`: placeholder until the generator lands (issue 3). */
import type { Command } from 'commander';
import type { CommandContext } from './main.js';
import { KubesmithError } from '../errors.js';

export function registerManifests(program: Command, contextFor: (command: Command) => CommandContext): void {
  program
    .command('manifests')
    .description('generate CRDs, RBAC and webhook configurations from TypeScript types and markers')
    .action((_options: unknown, command: Command) => {
      contextFor(command);
      throw new KubesmithError('kubesmith manifests is not implemented yet');
    });
}
