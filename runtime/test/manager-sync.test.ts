import { describe, expect, it } from 'vitest';
import { controllerManagedBy } from '../src/builder.js';
import type { Informer } from '../src/cache.js';
import { groupVersion } from '../src/kinds.js';
import { createLogger } from '../src/logger.js';
import { Manager } from '../src/manager.js';
import { FakeClient } from '../src/testing/index.js';

const Guestbook = groupVersion('webapp.example.com', 'v1').kind('Guestbook', { plural: 'guestbooks' });

/** An informer whose first list never succeeds, as for a CRD that is not installed: start() waits for stop(). */
function neverSyncing(): Informer & { stopped: boolean } {
  let release!: () => void;
  const stopped = new Promise<void>((resolve) => (release = resolve));
  const informer = {
    stopped: false,
    on: () => {},
    start: () => stopped,
    stop: async () => {
      informer.stopped = true;
      release();
    },
    hasSynced: () => false,
    get: () => undefined,
    list: () => [],
  };
  return informer;
}

describe('Manager cache sync', () => {
  it('fails start() naming the kinds that did not sync in time, and never reconciles', async () => {
    const informer = neverSyncing();
    const mgr = Manager.create({
      newClient: () => new FakeClient(),
      newInformer: () => informer,
      metrics: { bindAddress: '0' },
      healthProbeBindAddress: '0',
      handleSignals: false,
      controller: { cacheSyncTimeoutMs: 50 },
      logger: createLogger({ write: () => {} }),
    });
    let reconciled = false;
    controllerManagedBy(mgr)
      .for(Guestbook)
      .complete({ reconcile: async () => void (reconciled = true) });
    await expect(mgr.start()).rejects.toThrow(
      'timed out after 50 ms waiting for caches to sync: webapp.example.com/v1/Guestbook',
    );
    expect(informer.stopped).toBe(true);
    expect(reconciled).toBe(false);
  });
});
