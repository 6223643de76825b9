/**
 * The options of `create api --image` (kubebuilder's deploy-image plugin): the operand's image, its
 * container port and command, the user it runs as and how its Service is exposed. Each is checked here,
 * before anything is rendered, so a bad value is one usage error and nothing is written.
 */
import { UsageError } from '../errors.js';
import { imageProblem } from './image.js';

export type ServiceType = 'ClusterIP' | 'NodePort';
const SERVICE_TYPES: readonly ServiceType[] = ['ClusterIP', 'NodePort'];

/** The flags as commander hands them over: strings, absent when not given. */
export interface DeployImageFlags {
  image?: string;
  imageContainerPort?: string;
  imageContainerCommand?: string;
  runAsUser?: string;
  serviceType?: string;
  nodePort?: string;
}

export interface DeployImageOptions {
  image: string;
  containerPort?: number;
  containerCommand: string[];
  runAsUser?: number;
  serviceType: ServiceType;
  nodePort?: number;
}

/** The flags that mean nothing without --image. */
const IMAGE_ONLY: [keyof DeployImageFlags, string][] = [
  ['imageContainerPort', '--image-container-port'],
  ['imageContainerCommand', '--image-container-command'],
  ['runAsUser', '--run-as-user'],
  ['serviceType', '--service-type'],
  ['nodePort', '--node-port'],
];

const MAX_COMMAND_LENGTH = 4096;

function integer(value: string): number | undefined {
  return /^[0-9]{1,10}$/.test(value) ? Number(value) : undefined;
}

/** Checks the deploy-image flags; undefined when --image is not given (and no image-only flag is). */
export function resolveDeployImage(
  flags: DeployImageFlags,
  context: { resource: boolean },
): DeployImageOptions | undefined {
  if (flags.image === undefined) {
    const stray = IMAGE_ONLY.find(([key]) => flags[key] !== undefined);
    if (stray)
      throw new UsageError(
        `${stray[1]} needs --image`,
        `add --image <reference>, e.g. --image nginx:1.27, or leave ${stray[1]} out`,
      );
    return undefined;
  }
  if (!context.resource)
    throw new UsageError(
      '--image scaffolds a custom resource and its controller; it cannot be used with --resource=false',
      'drop --resource=false, or drop --image to scaffold a controller for a built-in kind',
    );
  const problem = imageProblem(flags.image);
  if (problem)
    throw new UsageError(
      `--image ${JSON.stringify(flags.image)} is not a valid image reference: ${problem}`,
      'give [registry/]name[:tag][@digest] in lower case, e.g. nginx:1.27 or ghcr.io/acme/app:v1.2.3',
    );

  let containerPort: number | undefined;
  if (flags.imageContainerPort !== undefined) {
    containerPort = integer(flags.imageContainerPort);
    if (containerPort === undefined || containerPort < 1 || containerPort > 65535)
      throw new UsageError(
        `--image-container-port ${JSON.stringify(flags.imageContainerPort)} is not a port: a port is an integer from 1 to 65535`,
        'give the port the image listens on, e.g. --image-container-port 80',
      );
  }

  const containerCommand =
    flags.imageContainerCommand === undefined
      ? []
      : flags.imageContainerCommand.split(',').map((part) => part.trim());
  if (flags.imageContainerCommand !== undefined) {
    if (flags.imageContainerCommand.length > MAX_COMMAND_LENGTH || containerCommand.some((p) => p === ''))
      throw new UsageError(
        `--image-container-command ${JSON.stringify(flags.imageContainerCommand.slice(0, 80))} is not a command: it needs comma-separated, non-empty words (at most ${MAX_COMMAND_LENGTH} characters)`,
        'give the command and its arguments separated by commas, e.g. --image-container-command memcached,-m=64,-v',
      );
  }

  let runAsUser: number | undefined;
  if (flags.runAsUser !== undefined) {
    runAsUser = integer(flags.runAsUser);
    if (runAsUser === undefined || runAsUser < 1 || runAsUser > 2147483647)
      throw new UsageError(
        `--run-as-user ${JSON.stringify(flags.runAsUser)} is not a user ID the restricted pod security standard allows: it must be an integer from 1 to 2147483647 (0 is root)`,
        'give the numeric user the image runs as, e.g. --run-as-user 1001',
      );
  }

  const serviceType = (flags.serviceType ?? 'ClusterIP') as ServiceType;
  if (!SERVICE_TYPES.includes(serviceType))
    throw new UsageError(
      `--service-type ${JSON.stringify(flags.serviceType)} is not supported: use ClusterIP or NodePort`,
      'ClusterIP exposes the pods inside the cluster; NodePort also on a port of every node',
    );

  let nodePort: number | undefined;
  if (flags.nodePort !== undefined) {
    if (serviceType !== 'NodePort')
      throw new UsageError('--node-port needs --service-type NodePort', 'add --service-type NodePort');
    if (containerPort === undefined)
      throw new UsageError(
        '--node-port needs --image-container-port: the node port forwards to the container port',
        'add --image-container-port <port>',
      );
    nodePort = integer(flags.nodePort);
    if (nodePort === undefined || nodePort < 30000 || nodePort > 32767)
      throw new UsageError(
        `--node-port ${JSON.stringify(flags.nodePort)} is outside the service node port range 30000-32767`,
        'give a port from 30000 to 32767 (the API server default --service-node-port-range), or leave --node-port out to let the cluster pick one',
      );
  }

  return {
    image: flags.image,
    ...(containerPort !== undefined ? { containerPort } : {}),
    containerCommand,
    ...(runAsUser !== undefined ? { runAsUser } : {}),
    serviceType,
    ...(nodePort !== undefined ? { nodePort } : {}),
  };
}
