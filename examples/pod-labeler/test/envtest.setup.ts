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
 * vitest's global setup (vitest.config.ts): one control plane for the whole test run, shared by every
 * integration test file, as kubebuilder's suite_test.go starts one envtest per package. It starts etcd and
 * kube-apiserver once, installs the CRDs of config/crd/bases (the project's) and config/crd/external (the
 * copies `kubesmith import crd` keeps of other APIs' CRDs), and provides its kubeconfig to the test files
 * (test/envtest.ts reads it); they stop at the end of the run. A run without integration test files
 * (`npm run test:unit`) starts nothing.
 *
 * Without the binaries (`npm run setup-envtest` provides them) the integration tests are skipped, after one
 * line saying so; in CI (`CI=true`) they fail instead.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { binaryAssetsOrSkip, startEnvtest, type EnvtestOptions } from '@kubesmith/runtime/envtest';
import type { TestProject } from 'vitest/node';
import type { ProvidedEnvtest } from './envtest.js';

const crds = ['../config/crd/bases', '../config/crd/external'].map((dir) =>
  fileURLToPath(new URL(dir, import.meta.url)),
);

const options: EnvtestOptions = {
  // None before the first `create api` of a custom kind or `import crd`.
  crdDirectoryPaths: crds.filter((dir) => existsSync(dir)),
  // +kubesmith:scaffold:envtestoptions
};

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const controllers = options.controllers ?? false;
  const provide = (envtest: ProvidedEnvtest) => project.provide('envtest', envtest);
  const { testFiles } = await project.globTestFiles();
  if (!testFiles.some((file) => file.endsWith('.integration.test.ts'))) {
    provide({ controllers });
    return undefined;
  }
  let binaries: string | undefined;
  try {
    binaries = binaryAssetsOrSkip({ controllers });
  } catch (error) {
    // Each integration test file fails with this (CI must not pass with them skipped).
    provide({ controllers, error: error instanceof Error ? error.message : String(error) });
    return undefined;
  }
  if (binaries === undefined) {
    provide({ controllers });
    return undefined;
  }
  const env = await startEnvtest({ ...options, binaryAssetsDirectory: binaries });
  provide({ controllers, kubeconfigPath: env.kubeconfigPath });
  return () => env.stop();
}
