/** `kubesmith build-installer`: config/default rendered into one install.yaml, the manager image set. */
import path from 'node:path';
import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import type { CommandContext } from './main.js';
import { INSTALLER_FILE } from '../project/layout.js';

interface BuildInstallerFlags {
  img?: string;
  output: string;
}

export function registerBuildInstaller(
  program: Command,
  contextFor: (command: Command) => CommandContext,
): void {
  program
    .command('build-installer')
    .description('render config/default into one install.yaml with the manager image set (kubectl kustomize)')
    .option('--img <image>', 'the manager image (default: $IMG, else controller:latest)')
    .option('--output <file>', 'where to write, relative to the project root', INSTALLER_FILE)
    .addHelpText(
      'after',
      `
Run \`kubesmith manifests\` first (the project's \`npm run build-installer\` does both). kubectl comes from
KUBEBUILDER_ASSETS, the \`kubesmith envtest\` cache, or PATH.

Examples:
  $ kubesmith build-installer --img registry.example.com/guestbook-operator:v0.1.0
  $ IMG=registry.example.com/guestbook-operator:v0.1.0 npm run build-installer
  $ kubectl apply --server-side -f dist/install.yaml`,
    )
    .action(async (flags: BuildInstallerFlags, command: Command) => {
      const { out, cwd, env } = contextFor(command);
      const text = flags.img ?? (env['IMG'] || 'controller:latest');
      const { imageFlag } = await import('../project/image.js');
      const image = imageFlag(text);
      const { requireProjectRoot } = await import('../project/find.js');
      const root = requireProjectRoot(cwd);
      const { findKubectl } = await import('../shipping/kubectl.js');
      const kubectl = await findKubectl(env);
      out.debug(`rendering with ${kubectl}`);
      const { renderInstaller } = await import('../shipping/installer.js');
      const yaml = await renderInstaller(root, kubectl, image);
      const output = path.relative(root, path.resolve(cwd, flags.output)).split(path.sep).join('/');
      if (output.startsWith('../')) {
        throw new UsageError(
          `--output ${flags.output} is outside the project`,
          'write below the project root',
        );
      }
      const { writeFilesAtomically } = await import('../manifests/write.js');
      const [status] = await writeFilesAtomically(root, [{ path: output, content: yaml }]);
      const documents = yaml.split(/^---$/m).length;
      out.info(`${status!.status.padEnd(9)} ${output} (${documents} objects, image ${text})`);
      out.result({
        command: 'build-installer',
        ok: true,
        file: output,
        status: status!.status,
        image: text,
        objects: documents,
      });
    });
}
