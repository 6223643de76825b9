/**
 * The manager's options: withDefaults applies every default, a group given in part keeps the defaults
 * of the rest, the manager runs on what it returns, and every option says its default, in its doc
 * comment and in docs/runtime-api.md's tables.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { controllerManagedBy } from '../src/builder.js';
import { realClock } from '../src/clock.js';
import { makeServingCertificates } from '../src/internal/certs.js';
import { FORWARD_SECRET_CIPHERS } from '../src/internal/tls-policy.js';
import { groupVersion } from '../src/kinds.js';
import { createLogger } from '../src/logger.js';
import { Manager } from '../src/manager.js';
import { withDefaults } from '../src/options.js';
import { FakeClient, ManualInformer } from '../src/testing/index.js';

const Guestbook = groupVersion('webapp.example.com', 'v1').kind('Guestbook', { plural: 'guestbooks' });

describe('withDefaults', () => {
  it('applies every default', () => {
    const { logger: _logger, ...config } = withDefaults();
    expect(config).toEqual({
      kubeConfig: undefined,
      cache: {
        namespace: undefined,
        byObject: [],
        streamingList: true,
        listPageSize: 500,
        warnOnUndeclaredInformer: true,
        readerFailOnMissingInformer: false,
      },
      client: {
        timeoutMs: 30_000,
        disableCacheFor: [],
        readYourWrites: true,
        readYourWritesTimeoutMs: 5_000,
      },
      metrics: {
        bindAddress: ':8080',
        secureServing: false,
        enableHttp2: false,
        certDir: undefined,
        certName: 'tls.crt',
        keyName: 'tls.key',
        handshakeTimeoutMs: 10_000,
        headersTimeoutMs: 10_000,
        readTimeoutMs: 30_000,
        keepAliveTimeoutMs: 90_000,
        maxConnections: 64,
        tlsMinVersion: 'TLSv1.2',
        tlsCiphers: FORWARD_SECRET_CIPHERS,
        reviewTimeoutMs: 10_000,
        maxConcurrentReviews: 8,
        authenticationCacheTtlMs: 60_000,
        authenticationFailureCacheTtlMs: 10_000,
        authorizationAllowCacheTtlMs: 300_000,
        authorizationDenyCacheTtlMs: 30_000,
        maxCachedReviews: 1024,
      },
      healthProbeBindAddress: ':8081',
      webhookServer: {
        host: undefined,
        port: 9443,
        certDir: path.join(os.tmpdir(), 'k8s-webhook-server', 'serving-certs'),
        certName: 'tls.crt',
        keyName: 'tls.key',
        certPollIntervalMs: 10_000,
        maxRequestBytes: 7 * 1024 * 1024,
        requestTimeoutMs: 9_000,
        handshakeTimeoutMs: 10_000,
        headersTimeoutMs: 10_000,
        readTimeoutMs: 30_000,
        keepAliveTimeoutMs: 30_000,
        shutdownDelayMs: 5_000,
        maxConnections: 256,
        maxConcurrentRequests: 64,
        maxInFlightBytes: 24 * 1024 * 1024,
        tlsMinVersion: 'TLSv1.2',
        tlsCiphers: FORWARD_SECRET_CIPHERS,
        enableHttp2: false,
      },
      leaderElection: {
        enabled: false,
        leaseDurationMs: 15_000,
        renewDeadlineMs: 10_000,
        retryPeriodMs: 2_000,
        releaseOnCancel: true,
      },
      controller: { maxConcurrentReconciles: 1, cacheSyncTimeoutMs: 120_000, usePriorityQueue: true },
      tracing: { enabled: false, tracerProvider: undefined },
      gracefulShutdownTimeoutMs: 30_000,
      handleSignals: true,
      clock: realClock,
      newClient: undefined,
      newInformer: undefined,
    });
  });

  it('keeps what is given, and the defaults of the rest of a group given in part', () => {
    const config = withDefaults({
      cache: { namespace: 'team-a' },
      metrics: { secureServing: true, maxConnections: 8 },
      leaderElection: { enabled: true, id: 'op.example.com', retryPeriodMs: 500 },
      controller: { maxConcurrentReconciles: 4 },
    });
    expect(config.cache).toEqual({
      namespace: 'team-a',
      byObject: [],
      streamingList: true,
      listPageSize: 500,
      warnOnUndeclaredInformer: true,
      readerFailOnMissingInformer: false,
    });
    expect(config.metrics).toEqual({ ...withDefaults().metrics, secureServing: true, maxConnections: 8 });
    expect(config.leaderElection).toMatchObject({
      enabled: true,
      id: 'op.example.com',
      retryPeriodMs: 500,
      leaseDurationMs: 15_000,
    });
    expect(config.controller).toEqual({
      maxConcurrentReconciles: 4,
      cacheSyncTimeoutMs: 120_000,
      usePriorityQueue: true,
    });
  });
});

describe('the manager on its options', () => {
  function manager(options: Parameters<typeof Manager.create>[0] = {}) {
    return Manager.create({
      newClient: () => new FakeClient(),
      newInformer: () => new ManualInformer(),
      logger: createLogger({ write: () => {} }),
      ...options,
    });
  }

  it('runs on withDefaults: mgr.config is what withDefaults returns', () => {
    const options = { cache: { streamingList: false }, controller: { cacheSyncTimeoutMs: 5_000 } };
    const { logger: _a, newClient: _b, newInformer: _c, ...config } = manager(options).config;
    const { logger: _d, newClient: _e, newInformer: _f, ...expected } = withDefaults(options);
    expect(config).toEqual(expected);
  });

  it("runs its webhook server on withDefaults' webhookServer, given in part: the server defaults nothing", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'options-'));
    const { cert, key } = makeServingCertificates(['localhost'], { name: 'options' });
    writeFileSync(path.join(dir, 'tls.crt'), cert);
    writeFileSync(path.join(dir, 'tls.key'), key);
    const mgr = manager({ webhookServer: { host: '127.0.0.1', port: 0, certDir: dir, maxRequestBytes: 10 } });
    mgr.webhookServer.register('/hook', {
      review: { apiVersion: 'v1', kind: 'Review' },
      answer: async () => ({ body: {} }),
      failure: () => ({}),
    });
    await mgr.webhookServer.start();
    try {
      const status = await new Promise<number>((resolve, reject) => {
        const req = https.request(
          {
            host: '127.0.0.1',
            port: mgr.webhookServer.address!.port,
            path: '/hook',
            method: 'POST',
            rejectUnauthorized: false,
            headers: { 'content-type': 'application/json' },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode!);
          },
        );
        req.on('error', reject);
        req.end(JSON.stringify({ apiVersion: 'v1', kind: 'Review', padding: 'x'.repeat(64) }));
      });
      // The body is over the 10 bytes given; the rest of the server's bounds are withDefaults'.
      expect(status).toBe(413);
    } finally {
      await mgr.webhookServer.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('gives every controller controller.maxConcurrentReconciles, unless its builder sets its own', async () => {
    const mgr = manager({ controller: { maxConcurrentReconciles: 3 } });
    controllerManagedBy(mgr)
      .for(Guestbook)
      .complete({ reconcile: async () => {} });
    controllerManagedBy(mgr)
      .for(Guestbook)
      .named('own')
      .withOptions({ maxConcurrentReconciles: 2 })
      .complete({ reconcile: async () => {} });
    const workers = async (controller: string) =>
      mgr.metrics.value('controller_runtime_max_concurrent_reconciles', { controller });
    expect(await workers('guestbook')).toBe(3);
    expect(await workers('own')).toBe(2);
  });
});

/** The interfaces of the manager's options, by the file that declares each. */
const OPTION_INTERFACES: Record<string, string[]> = {
  'options.ts': ['ManagerOptions'],
  'cache.ts': ['CacheOptions'],
  'client.ts': ['ClientOptions'],
  'metrics-server.ts': ['MetricsOptions', 'MetricsServingOptions'],
  'leaderelection.ts': ['LeaderElectionOptions'],
  'controller.ts': ['ControllerDefaults'],
  'tracing.ts': ['TracingOptions'],
  'webhook/server.ts': ['WebhookServerOptions'],
};

/** Each property of the interface `name` in `file`, with its doc comment. */
function optionFields(file: string, name: string): { name: string; doc: string }[] {
  const path = new URL(`../src/${file}`, import.meta.url);
  const source = ts.createSourceFile(file, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const declaration = source.statements.find(
    (statement): statement is ts.InterfaceDeclaration =>
      ts.isInterfaceDeclaration(statement) && statement.name.text === name,
  );
  if (!declaration) throw new Error(`no interface ${name} in ${file}`);
  return declaration.members.filter(ts.isPropertySignature).map((member) => ({
    name: member.name.getText(source),
    doc: ts
      .getJSDocCommentsAndTags(member)
      .map((doc) => doc.getText(source))
      .join('\n'),
  }));
}

describe('every option', () => {
  const fields = Object.entries(OPTION_INTERFACES).flatMap(([file, names]) =>
    names.flatMap((name) => optionFields(file, name).map((field) => ({ ...field, of: name }))),
  );

  it('says its default in its doc comment', () => {
    const undocumented = fields
      .filter((field) => !/Default:/.test(field.doc))
      .map((f) => `${f.of}.${f.name}`);
    expect(undocumented).toEqual([]);
  });

  it("has a row in docs/runtime-api.md's tables (the manager's own and its groups')", () => {
    const docs = readFileSync(new URL('../../docs/runtime-api.md', import.meta.url), 'utf8');
    const groups = [
      'CacheOptions',
      'ClientOptions',
      'MetricsOptions',
      'MetricsServingOptions',
      'LeaderElectionOptions',
      'ControllerDefaults',
      'WebhookServerOptions',
      'TracingOptions',
    ];
    // The webhook server's logger and metrics are the manager's own: no options of the manager.
    const managers = new Set(['WebhookServerOptions.logger', 'WebhookServerOptions.metrics']);
    const missing = fields
      .filter((field) => field.of === 'ManagerOptions' || groups.includes(field.of))
      .filter((field) => !managers.has(`${field.of}.${field.name}`))
      .filter((field) => !new RegExp(`^\\| \`${field.name}\` +\\|`, 'm').test(docs))
      .map((field) => `${field.of}.${field.name}`);
    expect(missing).toEqual([]);
  });
});
