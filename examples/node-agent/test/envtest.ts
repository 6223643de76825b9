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
 * serves webhooks installs them for its own kind and namespace (installWebhooks). Both come from
 * `@kubesmith/runtime/envtest`; what stays here is vitest's part, which the runtime does not depend on.
 */
import { sharedEnvtestFrom, type ProvidedEnvtest, type SharedEnvtest } from '@kubesmith/runtime/envtest';
import { inject } from 'vitest';

export { createNamespace, type ProvidedEnvtest, type SharedEnvtest } from '@kubesmith/runtime/envtest';

declare module 'vitest' {
  export interface ProvidedContext {
    envtest: ProvidedEnvtest;
  }
}

/**
 * The run's envtest, or undefined when there is none (its binaries are missing: the global setup said so
 * once, and the tests are skipped). Throws where the tests must run (CI) but cannot.
 */
export function sharedEnvtest(): SharedEnvtest | undefined {
  return sharedEnvtestFrom(inject('envtest') as ProvidedEnvtest | undefined);
}
