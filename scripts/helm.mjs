#!/usr/bin/env node
/**
 * Provisions the helm binary the chart tests run (test/shipping/helm-chart.integration.test.ts), as
 * `kubesmith envtest` provisions etcd and kube-apiserver: from the cache when it is there, else built from
 * Go modules (`go install helm.sh/helm/v3/cmd/helm@<version>`) into a staging directory of the cache and
 * renamed into place, so a killed build never leaves half a binary. `npm test` runs it before vitest, so a
 * fresh clone's `.ci/run` gets helm with no manual step.
 *
 *   $XDG_CACHE_HOME/kubesmith/helm/<version>/helm   (default ~/.cache/kubesmith/helm/<version>/helm)
 *
 * KUBESMITH_HELM names a helm to use instead. Without Go, or when the build fails, it prints why and
 * exits 0 (the chart tests then skip with one line), but under CI=true (or KUBESMITH_REQUIRE_ENVTEST=1)
 * it exits 1, as a missing envtest binary fails CI.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { clearInterval, clearTimeout, setInterval, setTimeout } from 'node:timers';

export const HELM_VERSION = 'v3.19.0';
/** A cold build downloads ~150 modules and compiles for a few minutes; a hung proxy must not hang CI. */
const BUILD_TIMEOUT_MS = 20 * 60 * 1000;

export function helmCachePath(env = process.env) {
  const xdg = env.XDG_CACHE_HOME;
  const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(env.HOME || os.homedir(), '.cache');
  return path.join(base, 'kubesmith', 'helm', HELM_VERSION, 'helm');
}

function executable(file) {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(name, env) {
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (dir && executable(path.join(dir, name))) return path.join(dir, name);
  }
  return undefined;
}

function required(env) {
  for (const value of [env.KUBESMITH_REQUIRE_ENVTEST, env.CI]) {
    if (value === undefined || value === '') continue;
    return !['0', 'false', 'no'].includes(value.toLowerCase());
  }
  return false;
}

function run(command, args, options) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'ignore', 'pipe'] });
    let tail = '';
    child.stderr.on('data', (chunk) => {
      tail = (tail + chunk.toString()).slice(-4000);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), BUILD_TIMEOUT_MS);
    const heartbeat = setInterval(() => console.error('helm: still building ...'), 30_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      clearInterval(heartbeat);
      resolve({ code: -1, tail: error.message });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      clearInterval(heartbeat);
      resolve({
        code: code ?? -1,
        tail: signal ? `${tail}\nkilled by ${signal} (timeout ${BUILD_TIMEOUT_MS / 60000} min)` : tail,
      });
    });
  });
}

async function main() {
  const env = process.env;
  const fail = (message, hint) => {
    console.error(`${required(env) ? 'error' : 'skip'}: ${message}\nhint: ${hint}`);
    process.exit(required(env) ? 1 : 0);
  };
  if (env.KUBESMITH_HELM) {
    if (!executable(env.KUBESMITH_HELM))
      fail(
        `KUBESMITH_HELM=${env.KUBESMITH_HELM} is not executable`,
        'point it at a helm binary, or unset it',
      );
    console.error(`helm: ${env.KUBESMITH_HELM} (KUBESMITH_HELM)`);
    return;
  }
  const target = helmCachePath(env);
  if (executable(target)) {
    console.error(`helm ${HELM_VERSION}: ${target}`);
    return;
  }
  const go = onPath('go', env);
  if (!go) {
    fail(
      `no helm ${HELM_VERSION} in ${path.dirname(target)} and no go to build it; the helm chart tests will skip`,
      'install Go 1.24+ (https://go.dev/dl/) and run `npm run helm`, or set KUBESMITH_HELM to a helm binary',
    );
    return;
  }
  mkdirSync(path.dirname(path.dirname(target)), { recursive: true });
  const staging = mkdtempSync(path.join(path.dirname(path.dirname(target)), '.build-'));
  try {
    console.error(`helm: building ${HELM_VERSION} from Go modules (a few minutes on a cold Go cache)`);
    const result = await run(
      go,
      [
        'install',
        '-trimpath',
        '-ldflags',
        `-s -w -X helm.sh/helm/v3/internal/version.version=${HELM_VERSION}`,
        `helm.sh/helm/v3/cmd/helm@${HELM_VERSION}`,
      ],
      {
        env: {
          ...env,
          GOBIN: staging,
          GOFLAGS: '-mod=mod',
          GOWORK: 'off',
          GO111MODULE: 'on',
          CGO_ENABLED: '0',
        },
      },
    );
    if (result.code !== 0 || !existsSync(path.join(staging, 'helm'))) {
      const last = result.tail.trim().split('\n').slice(-5).join('\n');
      fail(
        `building helm ${HELM_VERSION} failed: ${last}`,
        'check that the Go module proxy is reachable (GOPROXY), then run `npm run helm`',
      );
      return;
    }
    mkdirSync(path.dirname(target), { recursive: true });
    // rename(2) is atomic: a concurrent run sees no helm or a whole one.
    renameSync(path.join(staging, 'helm'), target);
    console.error(`helm ${HELM_VERSION}: ${target}`);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

// Imported by the tests for helmCachePath; provisions only when run.
if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) await main();
