/*
Copyright 2026.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

/**
 * The control plane of the test run, for the integration tests (`*.integration.test.ts`): vitest's global
 * setup (test/envtest.setup.ts) starts one envtest and provides its kubeconfig here. Test files share it,
 * as they would share a cluster: each works in a namespace of its own (createNamespace), and a file that
 * serves webhooks installs them for its own kind and namespace (installWebhooks of
 * `@kubesmith/runtime/envtest`).
 */
import { KubeConfig, type V1Namespace, type V1ServiceAccount } from '@kubernetes/client-node';
import { HttpClient, isNotFound, resourceKind } from '@kubesmith/runtime';
import { inject } from 'vitest';

/** What test/envtest.setup.ts provides to the test files. */
export interface ProvidedEnvtest {
  /** The admin kubeconfig of the running envtest; absent when no envtest runs. */
  kubeconfigPath?: string;
  /** envtest's cluster mode: controllers, a scheduler and fake nodes run too. */
  controllers: boolean;
  /** Why the integration tests cannot run where they must (CI): each of their files fails with it. */
  error?: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    envtest: ProvidedEnvtest;
  }
}

export interface SharedEnvtest {
  /** Admin credentials for the shared apiserver. */
  kubeConfig: KubeConfig;
  controllers: boolean;
}

/**
 * The run's envtest, or undefined when there is none (its binaries are missing: the global setup said so
 * once, and the tests are skipped). Throws where the tests must run (CI) but cannot.
 */
export function sharedEnvtest(): SharedEnvtest | undefined {
  const provided = inject('envtest') as ProvidedEnvtest | undefined;
  if (provided === undefined) {
    throw new Error(
      'no envtest was provided: vitest.config.ts must list test/envtest.setup.ts in globalSetup',
    );
  }
  if (provided.error !== undefined) throw new Error(provided.error);
  if (provided.kubeconfigPath === undefined) return undefined;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(provided.kubeconfigPath);
  return { kubeConfig, controllers: provided.controllers };
}

const NamespaceKind = resourceKind<V1Namespace>({
  group: '',
  version: 'v1',
  kind: 'Namespace',
  plural: 'namespaces',
  namespaced: false,
});
const ServiceAccountKind = resourceKind<V1ServiceAccount>({
  group: '',
  version: 'v1',
  kind: 'ServiceAccount',
  plural: 'serviceaccounts',
  namespaced: true,
});

/**
 * Creates a namespace named `<prefix><random suffix>` for one test file and returns its name. In cluster
 * mode it resolves once the namespace's `default` ServiceAccount exists, as pods need it.
 */
export async function createNamespace(envtest: SharedEnvtest, prefix: string): Promise<string> {
  const api = new HttpClient(envtest.kubeConfig);
  const created = await api.create(NamespaceKind, {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { generateName: prefix },
  });
  const name = created.metadata?.name ?? '';
  if (envtest.controllers) {
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        await api.get(ServiceAccountKind, 'default', name);
        break;
      } catch (error) {
        if (!isNotFound(error) || Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  }
  return name;
}
