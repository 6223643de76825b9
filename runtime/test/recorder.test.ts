/** Each controller made by the builder gets one event recorder, named after the controller. */
import { describe, expect, it } from 'vitest';
import { controllerManagedBy } from '../src/builder.js';
import { ManualInformer } from '../src/testing/informer.js';
import { Controller } from '../src/controller.js';
import { EventKind } from '../src/events.js';
import { groupVersion } from '../src/kinds.js';
import { createLogger } from '../src/logger.js';
import { Manager } from '../src/manager.js';
import type { Reconciler } from '../src/reconcile.js';
import { FakeClient, FakeRecorder, reconcileContext } from '../src/testing/index.js';
import type { KubernetesObject } from '../src/types.js';

const Guestbook = groupVersion('webapp.example.com', 'v1').kind('Guestbook', { plural: 'guestbooks' });
const guestbook: KubernetesObject = {
  apiVersion: Guestbook.apiVersion,
  kind: 'Guestbook',
  metadata: { name: 'g', namespace: 'default', uid: 'u-1' },
};

/** Records one event about the object it reconciles, through the recorder of its context. */
const recording = (reason: string): Reconciler => ({
  async reconcile(request, { recorder }) {
    await recorder.event(
      { ...guestbook, metadata: { ...guestbook.metadata, name: request.name } },
      'Normal',
      reason,
      'Reconcile',
    );
  },
});

describe('event recorders of controllers', () => {
  it("hands each controller's reconciler a recorder whose reportingController is the controller's name", async () => {
    const api = new FakeClient();
    const mgr = Manager.create({
      newClient: () => api,
      newInformer: () => new ManualInformer([guestbook]),
      metrics: { bindAddress: '0' },
      healthProbeBindAddress: '0',
      handleSignals: false,
      logger: createLogger({ write: () => {} }),
    });
    const byKind = controllerManagedBy(mgr).for(Guestbook).complete(recording('Seen'));
    const named = controllerManagedBy(mgr)
      .for(Guestbook)
      .named('guestbook-auditor')
      .complete(recording('Audited'));
    expect(byKind.recorder).toBe(mgr.getEventRecorderFor('guestbook'));
    expect(named.recorder).toBe(mgr.getEventRecorderFor('guestbook-auditor'));
    expect(byKind.recorder).not.toBe(named.recorder);

    const running = mgr.start();
    await mgr.ready();
    await expect.poll(async () => (await api.list(EventKind)).length).toBe(2);
    await mgr.stop();
    await running;
    const events = await api.list(EventKind);
    expect(events.map((e) => [e.reason, e.reportingController, e.regarding.name]).sort()).toEqual([
      ['Audited', 'guestbook-auditor', 'g'],
      ['Seen', 'guestbook', 'g'],
    ]);
    expect(events.find((e) => e.reason === 'Seen')?.reportingInstance).toMatch(/^guestbook-/);
  });

  it('a controller made without a manager logs the events it cannot send', async () => {
    const lines: Record<string, unknown>[] = [];
    const controller = new Controller({
      name: 'bare',
      reconciler: recording('Seen'),
      logger: createLogger({ level: 'debug', write: (line) => lines.push(JSON.parse(line)) }),
    });
    await controller.recorder.event(guestbook, 'Warning', 'Failed', 'Reconcile', 'no client');
    expect(lines).toEqual([
      expect.objectContaining({
        msg: 'event not recorded: the controller has no event recorder',
        controller: 'bare',
        reason: 'Failed',
        regarding: 'Guestbook default/g',
      }),
    ]);
  });

  it('reconcileContext and FakeRecorder let unit tests call a reconciler with a context', async () => {
    const recorder = new FakeRecorder();
    await recording('Seen').reconcile({ namespace: 'default', name: 'g' }, reconcileContext({ recorder }));
    expect(recorder.events).toEqual([
      {
        regarding: expect.objectContaining({ kind: 'Guestbook' }),
        type: 'Normal',
        reason: 'Seen',
        action: 'Reconcile',
      },
    ]);
  });
});
