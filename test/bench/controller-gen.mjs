/**
 * controller-gen for the generator benchmark: provisions the pinned version into kubesmith's tool cache
 * (`go install`, from the Go module proxy) when it is missing, and compares its CRDs with kubesmith's as data.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

export const CONTROLLER_GEN_VERSION = 'v0.23.0';
const PACKAGE = 'sigs.k8s.io/controller-tools/cmd/controller-gen';
/** Downloading controller-tools' modules and building it takes 1 to 3 minutes on 2 CPUs. */
const INSTALL_TIMEOUT_MS = 10 * 60 * 1000;

/** The cache directory of kubesmith's tools: $KUBESMITH_TOOLS_DIR, else $XDG_CACHE_HOME/kubesmith/tools. */
function toolsDir() {
  if (process.env.KUBESMITH_TOOLS_DIR) return process.env.KUBESMITH_TOOLS_DIR;
  const cache = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(cache, 'kubesmith', 'tools');
}

/**
 * The path of controller-gen CONTROLLER_GEN_VERSION, installed with `go install` into the tools directory
 * if it is not there (or is another version). Throws a one-line reason with what to do when it cannot.
 */
export function ensureControllerGen() {
  const dir = toolsDir();
  const binary = path.join(dir, process.platform === 'win32' ? 'controller-gen.exe' : 'controller-gen');
  if (existsSync(binary) && versionOf(binary) === CONTROLLER_GEN_VERSION) return binary;
  const go = spawnSync('go', ['version'], { encoding: 'utf8', timeout: 30_000 });
  if (go.error || go.status !== 0) {
    throw new Error(
      `controller-gen ${CONTROLLER_GEN_VERSION} is not in ${dir} and Go is not installed to build it\n` +
        `hint: install Go 1.25+ (https://go.dev/dl/), or put controller-gen ${CONTROLLER_GEN_VERSION} at ${binary}`,
    );
  }
  process.stderr.write(`installing controller-gen ${CONTROLLER_GEN_VERSION} into ${dir} (go install)...\n`);
  const install = spawnSync('go', ['install', `${PACKAGE}@${CONTROLLER_GEN_VERSION}`], {
    env: { ...process.env, GOBIN: dir },
    encoding: 'utf8',
    timeout: INSTALL_TIMEOUT_MS,
    stdio: ['ignore', 'inherit', 'pipe'],
  });
  if (install.error?.code === 'ETIMEDOUT' || install.signal) {
    throw new Error(
      `go install ${PACKAGE}@${CONTROLLER_GEN_VERSION} took more than ${INSTALL_TIMEOUT_MS / 60000} minutes\n` +
        'hint: check the access to the Go module proxy (GOPROXY), then run npm run bench again',
    );
  }
  if (install.status !== 0 || versionOf(binary) !== CONTROLLER_GEN_VERSION) {
    throw new Error(
      `go install ${PACKAGE}@${CONTROLLER_GEN_VERSION} failed:\n${install.stderr}\n` +
        `hint: run it yourself with GOBIN=${dir}, then run npm run bench again`,
    );
  }
  return binary;
}

function versionOf(binary) {
  const out = spawnSync(binary, ['--version'], { encoding: 'utf8', timeout: 30_000 });
  return /Version: (\S+)/.exec(out.stdout ?? '')?.[1];
}

/** The CRDs of a directory's YAML files by name, without either tool's version annotation. */
async function crdsIn(dir) {
  const crds = new Map();
  for (const file of (await readdir(dir)).filter((f) => f.endsWith('.yaml')).sort()) {
    for (const doc of parseAllDocuments(await readFile(path.join(dir, file), 'utf8'))) {
      const crd = doc.toJS();
      if (!crd) continue;
      const annotations = crd.metadata?.annotations;
      if (annotations) {
        delete annotations['controller-gen.kubebuilder.io/version'];
        delete annotations['kubesmith.dev/version'];
        if (Object.keys(annotations).length === 0) delete crd.metadata.annotations;
      }
      crds.set(crd.metadata?.name, crd);
    }
  }
  return crds;
}

/** Every leaf of a JSON value by its path (`spec.versions.0.name`), empty objects and arrays included. */
function leaves(value, prefix, out) {
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value);
    if (entries.length === 0) out.set(prefix, JSON.stringify(value));
    for (const [key, child] of entries) leaves(child, prefix === '' ? key : `${prefix}.${key}`, out);
  } else {
    out.set(prefix, JSON.stringify(value));
  }
  return out;
}

/**
 * Compares two directories of CRDs as data: `paths` is the number of leaf paths in either, `differing` the
 * number present in one only or with another value (a CRD missing on one side counts all its paths).
 */
export async function compareCrds(oursDir, theirsDir) {
  const ours = await crdsIn(oursDir);
  const theirs = await crdsIn(theirsDir);
  const a = new Map();
  const b = new Map();
  for (const [name, crd] of ours) leaves(crd, name, a);
  for (const [name, crd] of theirs) leaves(crd, name, b);
  const all = new Set([...a.keys(), ...b.keys()]);
  let differing = 0;
  const examples = [];
  for (const key of all) {
    if (a.get(key) !== b.get(key)) {
      differing++;
      if (examples.length < 5) examples.push(`${key}: ${a.get(key) ?? '(none)'} / ${b.get(key) ?? '(none)'}`);
    }
  }
  return { crds: Math.max(ours.size, theirs.size), paths: all.size, differing, examples };
}
