import { describe, expect, it } from 'vitest';
import { controllerManagedBy } from '../src/builder.js';
import { ManualInformer } from '../src/testing/informer.js';
import { groupVersion } from '../src/kinds.js';
import { createLogger, logFormat, type LogFormat } from '../src/logger.js';
import { Manager } from '../src/manager.js';
import { FakeClient } from '../src/testing/index.js';

const NOW = Date.parse('2026-11-23T12:00:00.000Z');

function capture(format?: LogFormat) {
  const lines: string[] = [];
  const logger = createLogger({
    level: 'debug',
    now: () => NOW,
    write: (line) => lines.push(line),
    ...(format ? { format } : {}),
  });
  return { logger, lines };
}

describe('the logger', () => {
  it('writes JSON lines by default when given a sink', () => {
    const { logger, lines } = capture();
    logger.child({ controller: 'guestbook' }).info('Starting workers', { workerCount: 2 });
    expect(lines).toEqual([
      '{"level":"info","ts":"2026-11-23T12:00:00.000Z","msg":"Starting workers","controller":"guestbook","workerCount":2}\n',
    ]);
  });

  it('writes lines for people in text format: time, level, message, then key=value fields', () => {
    const { logger, lines } = capture('text');
    const log = logger.child({ controller: 'guestbook', namespace: 'default', name: 'my guestbook' });
    log.info('Reconciled', { result: { requeueAfter: 5000 }, ready: true, count: 3, skipped: undefined });
    log.warn('no fields');
    expect(lines).toEqual([
      '2026-11-23T12:00:00.000Z  INFO   Reconciled  controller=guestbook namespace=default name="my guestbook" ' +
        'result={"requeueAfter":5000} ready=true count=3\n',
      '2026-11-23T12:00:00.000Z  WARN   no fields  controller=guestbook namespace=default name="my guestbook"\n',
    ]);
  });

  it('writes the stack of an error field on the lines after, indented', () => {
    const { logger, lines } = capture('text');
    const error = new Error('boom "here"');
    error.stack = 'Error: boom "here"\n    at reconcile (guestbook.ts:10:5)';
    logger.error('Reconciler error', { error });
    expect(lines).toEqual([
      '2026-11-23T12:00:00.000Z  ERROR  Reconciler error  error="boom \\"here\\""\n' +
        '    Error: boom "here"\n' +
        '        at reconcile (guestbook.ts:10:5)\n',
    ]);
  });

  it('picks text at a terminal and JSON otherwise; LOG_FORMAT overrides both', () => {
    expect(logFormat({}, true)).toBe('text');
    expect(logFormat({}, false)).toBe('json');
    expect(logFormat({ LOG_FORMAT: 'json' }, true)).toBe('json');
    expect(logFormat({ LOG_FORMAT: 'text' }, false)).toBe('text');
    expect(logFormat({ LOG_FORMAT: 'TEXT' }, false)).toBe('text');
    expect(logFormat({ LOG_FORMAT: 'yaml' }, false)).toBe('json');
  });
});

describe('reconcile logs', () => {
  const Guestbook = groupVersion('webapp.example.com', 'v1').kind('Guestbook', { plural: 'guestbooks' });

  it("carry controller, namespace, name and reconcileID on every line, the reconciler's own included", async () => {
    const lines: Record<string, unknown>[] = [];
    const informer = new ManualInformer([
      { apiVersion: Guestbook.apiVersion, kind: 'Guestbook', metadata: { name: 'g', namespace: 'default' } },
    ]);
    const mgr = Manager.create({
      newClient: () => new FakeClient(),
      newInformer: () => informer,
      metrics: { bindAddress: '0' },
      healthProbeBindAddress: '0',
      handleSignals: false,
      logger: createLogger({ level: 'debug', write: (line) => lines.push(JSON.parse(line)) }),
    });
    let attempts = 0;
    const contextIDs: string[] = [];
    controllerManagedBy(mgr)
      .for(Guestbook)
      .complete({
        async reconcile(request, context) {
          attempts++;
          context.logger.info('reconciling', { attempt: attempts });
          // The id is made on first use (here, the line above), then stays.
          contextIDs.push(context.reconcileID, context.reconcileID);
          if (attempts === 1) throw new Error('first attempt fails');
        },
      });
    const running = mgr.start();
    await mgr.ready();
    await expect.poll(() => lines.filter((line) => line['msg'] === 'Reconciled').length).toBe(1);
    await mgr.stop();
    await running;

    const reconcileLines = lines.filter((line) =>
      ['reconciling', 'Reconciler error', 'Reconciled'].includes(line['msg'] as string),
    );
    expect(reconcileLines.map((line) => line['msg'])).toEqual([
      'reconciling',
      'Reconciler error',
      'reconciling',
      'Reconciled',
    ]);
    for (const line of reconcileLines) {
      expect(line).toMatchObject({ controller: 'guestbook', namespace: 'default', name: 'g' });
      expect(line['reconcileID']).toMatch(/^[0-9a-f-]{36}$/);
    }
    const ids = reconcileLines.map((line) => line['reconcileID']);
    expect(ids[0]).toBe(ids[1]); // one reconcile
    expect(ids[2]).toBe(ids[3]);
    expect(ids[0]).not.toBe(ids[2]); // the retry is another
    expect(contextIDs).toEqual([ids[0], ids[0], ids[2], ids[2]]);
    expect(reconcileLines[1]!['error']).toMatchObject({ message: 'first attempt fails' });
  });
});
