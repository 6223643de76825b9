/**
 * `kubesmith import crd --from-cluster NAME...`: the CRDs read from the cluster of the kubeconfig's current
 * context, through kubectl (which speaks every way a kubeconfig authenticates: certificates, tokens, exec
 * plugins, proxies). One call for all the names, bounded as the importer's URLs are: kubectl's own request
 * timeout, a deadline on the whole process, and a cap on what it may print. The names are checked first:
 * each is a CRD's name (`<plural>.<group>`, a DNS subdomain), never a flag of kubectl's.
 */
import { KubesmithError, UsageError } from '../errors.js';
import { isGroup } from '../manifests/crd-names.js';
import { printable } from '../printable.js';
import type { InputText, ReadLimits } from './read.js';

export async function readFromCluster(
  kubectl: string,
  names: readonly string[],
  env: NodeJS.ProcessEnv,
  limits: ReadLimits,
): Promise<InputText> {
  for (const name of names) {
    // A CRD's name is <plural>.<group>: a DNS subdomain with at least one dot, as the group is.
    if (!isGroup(name) || !name.includes('.'))
      throw new UsageError(
        `--from-cluster: ${JSON.stringify(printable(name.slice(0, 300)))} is not the name of a CRD (<plural>.<group>)`,
        "give the CRDs' names, as `kubectl get crd` lists them, e.g. certificates.cert-manager.io",
      );
  }
  const seconds = Math.max(1, Math.ceil(limits.timeoutMs / 1000));
  const { execa } = await import('execa');
  const result = await execa(
    kubectl,
    [
      'get',
      'customresourcedefinitions.apiextensions.k8s.io',
      ...names,
      '--output=json',
      `--request-timeout=${seconds}s`,
    ],
    {
      env,
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
      timeout: limits.timeoutMs + 5_000,
      maxBuffer: limits.maxBytes,
      encoding: 'utf8',
    },
  );
  const shown = `cluster (${names.join(', ')})`;
  if (result.isMaxBuffer)
    throw new KubesmithError(`${shown}: larger than ${limits.maxBytes} bytes`, {
      hint: 'import fewer CRDs at a time; nothing was written',
    });
  if (result.timedOut)
    throw new KubesmithError(`${shown}: no complete answer within ${seconds} s`, {
      hint: 'check that the cluster of the current context answers (`kubectl cluster-info`); nothing was written',
    });
  if (result.exitCode !== 0) {
    const line =
      String(result.stderr)
        .split('\n')
        .find((l) => l.trim() !== '') ?? `kubectl exited ${result.exitCode}`;
    throw new KubesmithError(`${shown}: ${printable(line.slice(0, 500))}`, {
      hint: "check the names (`kubectl get crd`) and the kubeconfig's current context (`kubectl config current-context`); nothing was written",
    });
  }
  return { name: 'cluster', text: String(result.stdout) };
}
