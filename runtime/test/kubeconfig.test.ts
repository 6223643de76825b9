/**
 * The kubeconfig loader on files: client-go's merging rules for KUBECONFIG lists, relative paths, context
 * choice, the in-cluster service account, token files and exec plugins (a small node script). The same
 * loader against a real API server is in integration/kubeconfig.integration.test.ts.
 */
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KubeconfigError, loadInClusterConfig, loadKubeConfig, type RestConfig } from '../src/kubeconfig.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'kubeconfig-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function write(file: string, content: unknown): string {
  const full = path.join(dir, file);
  mkdirSync(path.dirname(full), { recursive: true });
  writeFileSync(full, typeof content === 'string' ? content : JSON.stringify(content));
  return full;
}

function kubeconfig(parts: {
  clusters?: Record<string, object>;
  users?: Record<string, object>;
  contexts?: Record<string, object>;
  current?: string;
}): object {
  const list = (entries: Record<string, object> | undefined, field: string) =>
    Object.entries(entries ?? {}).map(([name, value]) => ({ name, [field]: value }));
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: list(parts.clusters, 'cluster'),
    users: list(parts.users, 'user'),
    contexts: list(parts.contexts, 'context'),
    ...(parts.current ? { 'current-context': parts.current } : {}),
  };
}

const env = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({ HOME: dir, ...extra });

describe('KUBECONFIG lists (client-go merging rules)', () => {
  it('the first file to set a name keeps its whole entry; current-context from the first that sets it', async () => {
    const first = write(
      'a/config',
      kubeconfig({
        clusters: { shared: { server: 'https://first.example:6443' } },
        users: { admin: { token: 'first-token' } },
        contexts: { ctx: { cluster: 'shared', user: 'admin', namespace: 'from-first' } },
      }),
    );
    const second = write(
      'b/config',
      kubeconfig({
        clusters: {
          shared: { server: 'https://second.example:6443', 'tls-server-name': 'second' },
          other: { server: 'https://other.example' },
        },
        // Same name, another field: not merged into the first file's user.
        users: { admin: { token: 'second-token', username: 'x', password: 'y' } },
        contexts: { ctx: { cluster: 'other', user: 'admin' }, other: { cluster: 'other', user: 'admin' } },
        current: 'ctx',
      }),
    );
    const third = write('c/config', kubeconfig({ current: 'other' }));
    const config = loadKubeConfig({
      env: env({ KUBECONFIG: [first, path.join(dir, 'missing'), '', second, third].join(path.delimiter) }),
    });
    expect(config.server).toBe('https://first.example:6443');
    expect(config.contextName).toBe('ctx');
    expect(config.namespace).toBe('from-first');
    const settings = await config.connection();
    expect(settings.headers.Authorization).toBe('Bearer first-token');
    expect(settings.tls.servername).toBeUndefined();
  });

  it('a context of a later file is chosen with `context`, its cluster from whichever file set it first', () => {
    const first = write(
      'a',
      kubeconfig({ clusters: { other: { server: 'https://first-other' } }, current: 'x' }),
    );
    const second = write(
      'b',
      kubeconfig({
        clusters: { other: { server: 'https://second-other' } },
        contexts: { pick: { cluster: 'other', user: 'nobody' } },
      }),
    );
    const config = loadKubeConfig({
      env: env({ KUBECONFIG: `${first}${path.delimiter}${second}` }),
      context: 'pick',
    });
    expect(config.server).toBe('https://first-other');
  });

  it('a list none of whose files exists, an invalid file and an unknown context are errors with a hint', () => {
    expect(() => loadKubeConfig({ env: env({ KUBECONFIG: path.join(dir, 'nope') }) })).toThrow(
      /none of the files/,
    );
    const bad = write('bad', 'clusters: [oops');
    expect(() => loadKubeConfig({ env: env({ KUBECONFIG: bad }) })).toThrow(KubeconfigError);
    const good = write(
      'good',
      kubeconfig({ clusters: { c: { server: 'https://c' } }, contexts: { a: { cluster: 'c' } } }),
    );
    expect(() => loadKubeConfig({ env: env({ KUBECONFIG: good }), context: 'b' })).toThrow(
      /context "b" is not in the kubeconfig\nhint: the contexts are: a/,
    );
    expect(() => loadKubeConfig({ env: env({ KUBECONFIG: good }) })).toThrow(/no current-context/);
  });

  it('reads YAML, and ~/.kube/config when KUBECONFIG is unset and this is not a pod', () => {
    write(
      '.kube/config',
      [
        'apiVersion: v1',
        'clusters:',
        '- name: c',
        '  cluster: {server: "https://yaml.example"}',
        'contexts:',
        '- name: a',
        '  context: {cluster: c, user: u}',
        'current-context: a',
        'users:',
        '- name: u',
        '  user: {token: t}',
      ].join('\n'),
    );
    expect(loadKubeConfig({ env: env() }).server).toBe('https://yaml.example');
    rmSync(path.join(dir, '.kube'), { recursive: true });
    expect(() => loadKubeConfig({ env: env() })).toThrow(/no kubeconfig found.*\nhint:/);
  });
});

describe('paths in a kubeconfig', () => {
  it('are resolved against the directory of the file that set them; an exec command only when it has a /', async () => {
    write('certs/ca.crt', 'CA PEM');
    write('certs/client.crt', 'CERT PEM');
    write('certs/client.key', 'KEY PEM');
    write('certs/token', 'file-token\n');
    const file = write(
      'nested/config',
      kubeconfig({
        clusters: { c: { server: 'https://c', 'certificate-authority': '../certs/ca.crt' } },
        users: {
          u: {
            'client-certificate': '../certs/client.crt',
            'client-key': '../certs/client.key',
            tokenFile: '../certs/token',
          },
        },
        contexts: { a: { cluster: 'c', user: 'u' } },
        current: 'a',
      }),
    );
    // Loaded from another working directory: the paths are the file's, not the process's.
    const config = loadKubeConfig({ kubeconfig: path.relative(process.cwd(), file) });
    const settings = await config.connection();
    expect(settings.tls).toMatchObject({ ca: 'CA PEM', cert: 'CERT PEM', key: 'KEY PEM' });
    expect(settings.headers.Authorization).toBe('Bearer file-token');
  });

  it('a file that cannot be read is an error naming it', () => {
    const file = write(
      'config',
      kubeconfig({
        clusters: { c: { server: 'https://c', 'certificate-authority': 'nowhere/ca.crt' } },
        contexts: { a: { cluster: 'c' } },
        current: 'a',
      }),
    );
    expect(() => loadKubeConfig({ kubeconfig: file })).toThrow(
      new RegExp(
        `cannot read certificate-authority ${path.join(dir, 'nowhere/ca.crt').replace(/\//g, '\\/')}`,
      ),
    );
  });
});

describe('credential files are bounded', () => {
  const withCa = (ca: string) =>
    write(
      'bounded',
      kubeconfig({
        clusters: { c: { server: 'https://c', 'certificate-authority': ca } },
        contexts: { a: { cluster: 'c' } },
        current: 'a',
      }),
    );

  it('refuses a certificate file over 4 MiB and a path that is not a regular file (a device, a FIFO)', () => {
    const big = write('big.crt', '');
    truncateSync(big, 5 * 2 ** 20);
    expect(() => loadKubeConfig({ kubeconfig: withCa(big) })).toThrow(
      /big\.crt is 5242880 bytes, over 4194304/,
    );
    expect(() => loadKubeConfig({ kubeconfig: withCa('/dev/null') })).toThrow(/\/dev\/null is not a file/);
  });

  it('ignores a token file that is too large, keeping the token it had', async () => {
    const tokenFile = write('token', '');
    truncateSync(tokenFile, 5 * 2 ** 20);
    const config = loadKubeConfig({
      kubeconfig: write(
        'with-token-file',
        kubeconfig({
          clusters: { c: { server: 'https://c' } },
          users: { u: { tokenFile, token: 'static' } },
          contexts: { a: { cluster: 'c', user: 'u' } },
          current: 'a',
        }),
      ),
    });
    expect((await config.connection()).headers.Authorization).toBe('Bearer static');
  });
});

describe('users', () => {
  const single = (user: object, cluster: object = { server: 'https://c' }) =>
    write(
      'config',
      kubeconfig({
        clusters: { c: cluster },
        users: { u: user },
        contexts: { a: { cluster: 'c', user: 'u' } },
        current: 'a',
      }),
    );

  it('basic auth, impersonation, tls-server-name, insecure-skip-tls-verify and data fields', async () => {
    const config = loadKubeConfig({
      kubeconfig: single(
        {
          username: 'alice',
          password: 's3cret',
          as: 'bob',
          'as-groups': ['g1', 'g2'],
          'client-certificate-data': Buffer.from('CERT').toString('base64'),
          'client-key-data': Buffer.from('KEY').toString('base64'),
        },
        { server: 'https://c', 'tls-server-name': 'api.internal', 'insecure-skip-tls-verify': true },
      ),
    });
    const settings = await config.connection();
    expect(settings.headers.Authorization).toBe(`Basic ${Buffer.from('alice:s3cret').toString('base64')}`);
    expect(settings.headers['Impersonate-User']).toBe('bob');
    expect(settings.headers['Impersonate-Group']).toEqual(['g1', 'g2']);
    expect(settings.tls).toMatchObject({
      cert: 'CERT',
      key: 'KEY',
      servername: 'api.internal',
      rejectUnauthorized: false,
    });
  });

  it('refuses what client-go refuses: a token with basic auth, a certificate without its key', () => {
    expect(() =>
      loadKubeConfig({ kubeconfig: single({ token: 't', username: 'u', password: 'p' }) }),
    ).toThrow(/both a token and a username\/password/);
    expect(() => loadKubeConfig({ kubeconfig: single({ 'client-certificate-data': 'QQ==' }) })).toThrow(
      /certificate without a client key/,
    );
    expect(() =>
      loadKubeConfig({
        kubeconfig: single({ exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'x' } }),
      }),
    ).toThrow(/no interactiveMode/);
  });

  it('a token file is read again after a 401, and keeps its last token when it cannot be read', async () => {
    const tokenFile = write('token', 'one');
    const config = loadKubeConfig({ kubeconfig: single({ tokenFile, token: 'static' }) });
    const first = await config.connection();
    expect(first.headers.Authorization).toBe('Bearer one');
    writeFileSync(tokenFile, 'two');
    // Within the minute: the cached token.
    expect((await config.connection()).headers.Authorization).toBe('Bearer one');
    config.unauthorized(first);
    expect((await config.connection()).headers.Authorization).toBe('Bearer two');
    rmSync(tokenFile);
    config.unauthorized(await config.connection());
    expect((await config.connection()).headers.Authorization).toBe('Bearer two');
  });

  it('an auth-provider is left to client-node, loaded only then', async () => {
    const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const idToken = `${part({ alg: 'none' })}.${part({ exp: Math.floor(Date.now() / 1000) + 3600 })}.sig`;
    const config = loadKubeConfig({
      kubeconfig: single({
        'auth-provider': { name: 'oidc', config: { 'id-token': idToken, 'client-id': 'x' } },
      }),
    });
    const settings = await config.connection();
    expect(settings.server).toBe('https://c');
    expect(settings.headers.Authorization).toBe(`Bearer ${idToken}`);
  });
});

describe('exec credential plugins', () => {
  /** A plugin that counts its runs in a file and prints the credential `credential.json` holds. */
  function plugin(): {
    command: string;
    runs: () => number;
    answer: (status: object, apiVersion?: string) => void;
  } {
    const counter = path.join(dir, 'runs');
    const answerFile = path.join(dir, 'credential.json');
    const script = write(
      'bin/plugin.mjs',
      [
        '#!/usr/bin/env node',
        "import { appendFileSync, readFileSync } from 'node:fs';",
        `appendFileSync(${JSON.stringify(counter)}, JSON.stringify({ args: process.argv.slice(2), env: process.env.PLUGIN_ENV, info: JSON.parse(process.env.KUBERNETES_EXEC_INFO) }) + '\\n');`,
        `process.stdout.write(readFileSync(${JSON.stringify(answerFile)}, 'utf8'));`,
      ].join('\n'),
    );
    chmodSync(script, 0o755);
    return {
      command: script,
      runs: () => {
        try {
          return readFileSync(counter, 'utf8').trim().split('\n').length;
        } catch {
          return 0;
        }
      },
      answer: (status, apiVersion = 'client.authentication.k8s.io/v1') =>
        writeFileSync(answerFile, JSON.stringify({ apiVersion, kind: 'ExecCredential', status })),
    };
  }

  function execConfig(command: string, extra: object = {}): RestConfig {
    return loadKubeConfig({
      kubeconfig: write(
        'config',
        kubeconfig({
          clusters: { c: { server: 'https://c' } },
          users: {
            u: {
              exec: {
                apiVersion: 'client.authentication.k8s.io/v1',
                command,
                args: ['--flag'],
                env: [{ name: 'PLUGIN_ENV', value: 'set' }],
                interactiveMode: 'Never',
                provideClusterInfo: true,
                ...extra,
              },
            },
          },
          contexts: { a: { cluster: 'c', user: 'u' } },
          current: 'a',
        }),
      ),
    });
  }

  it('runs once while the credential is valid, again after its expiry and after a 401', async () => {
    const p = plugin();
    p.answer({ token: 'tok-1' });
    const config = execConfig(p.command);
    const [a, b] = await Promise.all([config.connection(), config.connection()]);
    expect(a.headers.Authorization).toBe('Bearer tok-1');
    expect(b.headers.Authorization).toBe('Bearer tok-1');
    expect(p.runs()).toBe(1);
    const run = JSON.parse(readFileSync(path.join(dir, 'runs'), 'utf8').split('\n')[0]!);
    expect(run).toMatchObject({
      args: ['--flag'],
      env: 'set',
      info: { kind: 'ExecCredential', spec: { interactive: false, cluster: { server: 'https://c' } } },
    });

    const expiry = Date.now() + 3_000;
    p.answer({ token: 'tok-2', expirationTimestamp: new Date(expiry).toISOString() });
    config.unauthorized(a);
    config.unauthorized(b); // the same credential: one more run, not two
    expect((await config.connection()).headers.Authorization).toBe('Bearer tok-2');
    expect((await config.connection()).headers.Authorization).toBe('Bearer tok-2');
    expect(p.runs()).toBe(2);

    p.answer({ token: 'tok-3' });
    await new Promise((resolve) => setTimeout(resolve, expiry + 100 - Date.now()));
    expect((await config.connection()).headers.Authorization).toBe('Bearer tok-3');
    expect(p.runs()).toBe(3);
  });

  it('a certificate and key from the plugin go to TLS', async () => {
    const p = plugin();
    p.answer({ clientCertificateData: 'CERT', clientKeyData: 'KEY' }, 'client.authentication.k8s.io/v1beta1');
    const config = execConfig(p.command, {
      apiVersion: 'client.authentication.k8s.io/v1beta1',
      interactiveMode: undefined,
    });
    const settings = await config.connection();
    expect(settings.tls).toMatchObject({ cert: 'CERT', key: 'KEY' });
    expect(settings.headers.Authorization).toBeUndefined();
  });

  it('a plugin that fails, hangs, floods, answers another version or is missing fails the request with a hint', async () => {
    const fail = write('bin/fail.sh', '#!/bin/sh\necho "no credentials: run login" >&2\nexit 3\n');
    const hang = write('bin/hang.sh', '#!/bin/sh\nexec sleep 30\n');
    const flood = write('bin/flood.sh', '#!/bin/sh\nexec yes\n');
    for (const file of [fail, hang, flood]) chmodSync(file, 0o755);
    await expect(execConfig(fail).connection()).rejects.toThrow(
      /failed \(exit code 3\): no credentials: run login\nhint:/,
    );
    execConfig(hang); // writes the kubeconfig; loaded again with a short timeout
    const started = Date.now();
    await expect(
      loadKubeConfig({ kubeconfig: path.join(dir, 'config'), execTimeoutMs: 300 }).connection(),
    ).rejects.toThrow(/did not finish within 300 ms/);
    expect(Date.now() - started).toBeLessThan(5_000);
    await expect(execConfig(flood).connection()).rejects.toThrow(/printed more than/);
    const p = plugin();
    p.answer({ token: 't' }, 'client.authentication.k8s.io/v1beta1');
    await expect(execConfig(p.command).connection()).rejects.toThrow(/returned apiVersion/);
    await expect(
      execConfig('kubesmith-no-such-plugin', { installHint: 'install it with brew' }).connection(),
    ).rejects.toThrow(/was not found\nhint: install it with brew/);
  });
});

describe('in a cluster', () => {
  it('the service account: KUBERNETES_SERVICE_HOST/PORT (IPv6 too), its CA, namespace and a token read again', async () => {
    const sa = path.join(dir, 'sa');
    write('sa/token', 'sa-token-1');
    write('sa/ca.crt', 'SA CA');
    write('sa/namespace', 'operators\n');
    const config = loadInClusterConfig({
      env: { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' },
      serviceAccountDir: sa,
    });
    expect(config?.server).toBe('https://[fd00::1]:443');
    expect(config?.namespace).toBe('operators');
    const first = await config!.connection();
    expect(first.tls.ca).toBe('SA CA');
    expect(first.headers.Authorization).toBe('Bearer sa-token-1');
    write('sa/token', 'sa-token-2');
    config!.unauthorized(first);
    expect((await config!.connection()).headers.Authorization).toBe('Bearer sa-token-2');
  });

  it('is chosen over ~/.kube/config when KUBECONFIG is unset, as controller-runtime does; not without a token', () => {
    write(
      '.kube/config',
      kubeconfig({
        clusters: { c: { server: 'https://home' } },
        contexts: { a: { cluster: 'c' } },
        current: 'a',
      }),
    );
    write('sa/token', 't');
    const podEnv = env({ KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' });
    expect(loadKubeConfig({ env: podEnv, serviceAccountDir: path.join(dir, 'sa') }).server).toBe(
      'https://10.0.0.1:443',
    );
    expect(loadKubeConfig({ env: podEnv, serviceAccountDir: path.join(dir, 'none') }).server).toBe(
      'https://home',
    );
  });
});
