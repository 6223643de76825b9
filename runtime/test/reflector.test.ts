/**
 * HttpClient.listEach, the informer's list, and the Reflector (a streamed list or a list in pages, then a watch, into a store),
 * against a local HTTP server that plays the API server's paginated list (pages linked by continue tokens,
 * tokens that expire as after an etcd compaction) and, for the Reflector, a scripted watch: pages delivered as they arrive, a start that does not
 * wait for the watch to connect, update handlers given the replaced object, relists that delete what is
 * gone, and a stop that ends a list in flight. Its behaviour on a real API server (restarts, 410s,
 * silent watches) is tested in test/faults and test/integration.
 */
import http from 'node:http';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { InformerCache, supervisedInformer } from '../src/cache.js';
import { HttpClient } from '../src/client.js';
import { realClock } from '../src/clock.js';
import { createLogger } from '../src/logger.js';
import { groupVersion } from '../src/kinds.js';
import { Reflector, type Watcher } from '../src/reflector.js';
import type { KubernetesObject } from '../src/types.js';
import { localKubeConfig } from './local-server.js';

const Widget = groupVersion('example.com', 'v1').kind('Widget', { plural: 'widgets' });

/** What the list answers: its objects, and the page size the server uses when asked for none. */
let items: KubernetesObject[] = [];
let listResourceVersion = '10';
/** Called before a page after the first is answered: a test may hold the answer. */
let beforeLaterPage: () => Promise<void> = async () => {};
let requests: URLSearchParams[] = [];
/** The Accept header of each request. */
let accepts: string[] = [];
/** Answer 410 to a request that carries a continue token, as after an etcd compaction. */
let expireTokens = false;

let server: http.Server;
let client: HttpClient;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const query = new URL(req.url ?? '/', 'http://x').searchParams;
    requests.push(query);
    accepts.push(req.headers.accept ?? '');
    const token = query.get('continue');
    if (token && expireTokens) {
      res.writeHead(410, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Status', status: 'Failure', reason: 'Expired', code: 410 }));
      return;
    }
    const start = token ? Number(token) : 0;
    const limit = query.has('limit') ? Number(query.get('limit')) : items.length;
    const end = Math.min(start + limit, items.length);
    void (start > 0 ? beforeLaterPage() : Promise.resolve()).then(() => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          kind: 'WidgetList',
          metadata: {
            resourceVersion: listResourceVersion,
            ...(end < items.length ? { continue: String(end) } : {}),
          },
          items: items.slice(start, end),
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const kubeConfig = localKubeConfig(server);
  client = new HttpClient(kubeConfig);
});
afterAll(async () => {
  client.close();
  await new Promise((resolve) => server.close(resolve));
});
afterEach(() => {
  items = [];
  listResourceVersion = '10';
  beforeLaterPage = async () => {};
  requests = [];
  accepts = [];
  expireTokens = false;
});

const widget = (name: string, resourceVersion: string, generation = 1): KubernetesObject => ({
  metadata: { name, namespace: 'default', resourceVersion, generation },
});

/** A watch the test drives: each call is recorded; `connect` decides when (if ever) it is answered. */
class ScriptedWatcher implements Watcher {
  calls: {
    query: Record<string, string>;
    emit: (type: string, object: unknown) => void;
    end: (err?: unknown) => void;
    aborted: boolean;
    options?: { metadataOnly?: boolean };
  }[] = [];
  constructor(private readonly connect: () => Promise<void> = async () => {}) {}
  async watch(
    _path: string,
    query: Record<string, string>,
    onEvent: (type: string, object: unknown) => void,
    done: (err: unknown) => void,
    options?: { metadataOnly?: boolean },
  ): Promise<{ abort(): void }> {
    const call = {
      query,
      emit: onEvent,
      end: (err?: unknown) => done(err ?? null),
      aborted: false,
      ...(options ? { options } : {}),
    };
    this.calls.push(call);
    await this.connect();
    return { abort: () => (call.aborted = true) };
  }
}

/** A Reflector of the Widgets of `default`; it lists in pages of `pageSize` unless `streaming`. */
function reflector(
  watcher: Watcher,
  { pageSize = 2, streaming = false, streamTimeoutMs, onFallback }: ReflectorTestOptions = {},
): Reflector {
  return new Reflector({
    client,
    kind: Widget,
    path: '/apis/example.com/v1/namespaces/default/widgets',
    watcher,
    list: { namespace: 'default', pageSize },
    streamingList: streaming,
    streamTimeoutMs: streamTimeoutMs ?? 30_000,
    ...(onFallback ? { onFallback } : {}),
  });
}

interface ReflectorTestOptions {
  pageSize?: number;
  streaming?: boolean;
  streamTimeoutMs?: number;
  onFallback?: (reason: unknown) => void;
}

/** Every event the reflector reports, as `add a 1`, `update a 2<-1`, `delete a`. */
function record(r: Reflector): string[] {
  const events: string[] = [];
  r.on('add', (o) => events.push(`add ${o.metadata?.name} ${o.metadata?.resourceVersion}`));
  r.on('update', (o, old) =>
    events.push(
      `update ${o.metadata?.name} ${o.metadata?.resourceVersion}<-${old?.metadata?.resourceVersion}`,
    ),
  );
  r.on('delete', (o) => events.push(`delete ${o.metadata?.name}`));
  return events;
}

/** Waits for `assertion` to pass (a loaded machine may take a while). */
const until = (assertion: () => void) => vi.waitFor(assertion, { timeout: 5_000, interval: 5 });
/** Gives what should not happen a chance to. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

describe("the informer's list (HttpClient.listEach)", () => {
  beforeEach(() => {
    items = ['a', 'b', 'c', 'd', 'e'].map((name) => widget(name, '5'));
  });

  it("follows continue tokens page by page, setting each item's kind, and returns the resourceVersion", async () => {
    const seen: KubernetesObject[] = [];
    const list = await client.listEach(Widget, { namespace: 'default', pageSize: 2 }, (item) =>
      seen.push(item),
    );
    expect(seen.map((item) => item.metadata?.name)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(seen[0]).toMatchObject({ apiVersion: 'example.com/v1', kind: 'Widget' });
    expect(list).toEqual({ resourceVersion: '10' });
    expect(requests.map((q) => [q.get('limit'), q.get('continue')])).toEqual([
      ['2', null],
      ['2', '2'],
      ['2', '4'],
    ]);
  });

  it('rejects with the abort reason when its signal was aborted before it was sent', async () => {
    // An uncaught error here would fail the run: destroying an unsent request emits one.
    const reason = new Error('stopped');
    await expect(
      client.listEach(Widget, { namespace: 'default', signal: AbortSignal.abort(reason) }, () => {}),
    ).rejects.toBe(reason);
  });

  it('reads the list in one request with pageSize 0', async () => {
    const seen: string[] = [];
    await client.listEach(Widget, { namespace: 'default', pageSize: 0 }, (item) =>
      seen.push(item.metadata?.name ?? ''),
    );
    expect(seen).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(requests.map((q) => [q.get('limit'), q.get('continue')])).toEqual([[null, null]]);
  });

  it('fails with a 410 ApiError when a continue token has expired (the Reflector lists again)', async () => {
    expireTokens = true;
    const seen: string[] = [];
    await expect(
      client.listEach(Widget, { namespace: 'default', pageSize: 2 }, (item) =>
        seen.push(item.metadata?.name ?? ''),
      ),
    ).rejects.toMatchObject({ statusCode: 410 });
    expect(seen).toEqual(['a', 'b']);
  });
});

describe('Reflector, listing in pages', () => {
  it('delivers each page of the list as it arrives, before the next one is answered', async () => {
    items = ['a', 'b', 'c', 'd'].map((name) => widget(name, '5'));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    beforeLaterPage = () => held;
    const r = reflector(new ScriptedWatcher());
    const events = record(r);
    const started = r.start();
    await until(() => expect(events).toHaveLength(2));
    // The second page is held by the server: the first one's objects are already delivered and stored.
    expect(events).toEqual(['add a 5', 'add b 5']);
    expect(r.get('a', 'default')).toMatchObject({ apiVersion: 'example.com/v1', kind: 'Widget' });
    expect(r.hasListed()).toBe(false);
    release();
    await started;
    expect(events).toEqual(['add a 5', 'add b 5', 'add c 5', 'add d 5']);
    expect(r.hasListed()).toBe(true);
    expect(r.list('default').map((o) => o.metadata?.name)).toEqual(['a', 'b', 'c', 'd']);
    await r.stop();
  });

  it('resolves start() once the list is delivered, without waiting for the watch to connect', async () => {
    items = [widget('a', '5')];
    const watcher = new ScriptedWatcher(() => new Promise(() => {})); // never answers
    const r = reflector(watcher);
    await r.start();
    expect(r.hasListed()).toBe(true);
    await until(() => expect(watcher.calls).toHaveLength(1));
    expect(watcher.calls.map((c) => c.query)).toEqual([{ resourceVersion: '10' }]);
    await r.stop();
  });

  it('gives update handlers the replaced object, skips a version it holds, and deletes', async () => {
    items = [widget('a', '5', 1)];
    const watcher = new ScriptedWatcher();
    const r = reflector(watcher);
    const events = record(r);
    await r.start();
    await until(() => expect(watcher.calls).toHaveLength(1));
    const watch = watcher.calls[0]!;
    watch.emit('MODIFIED', widget('a', '5', 1)); // the version held: no event
    watch.emit('MODIFIED', widget('a', '6', 2));
    watch.emit('ADDED', widget('b', '7'));
    watch.emit('DELETED', widget('a', '8'));
    watch.emit('BOOKMARK', { metadata: { resourceVersion: '9' } });
    expect(events).toEqual(['add a 5', 'update a 6<-5', 'add b 7', 'delete a']);
    expect(r.get('a', 'default')).toBeUndefined();
    expect(r.latestResourceVersion()).toBe('9');
    // The server ends the watch (its timeoutSeconds): the next one resumes from the bookmark, no list.
    const lists = requests.length;
    watch.end();
    await until(() => expect(watcher.calls).toHaveLength(2));
    expect(watcher.calls.map((c) => c.query['resourceVersion'])).toEqual(['10', '9']);
    expect(requests.length).toBe(lists);
    await r.stop();
  });

  it('lists again after a 410, deleting the objects the new list does not have', async () => {
    items = [widget('a', '5'), widget('b', '5'), widget('c', '5')];
    const watcher = new ScriptedWatcher();
    const r = reflector(watcher);
    const events = record(r);
    await r.start();
    await until(() => expect(watcher.calls).toHaveLength(1));
    items = [widget('a', '5'), widget('c', '12'), widget('d', '12')];
    listResourceVersion = '20';
    watcher.calls[0]!.emit('ERROR', { kind: 'Status', code: 410, reason: 'Expired' });
    watcher.calls[0]!.end();
    await until(() => expect(watcher.calls).toHaveLength(2));
    expect(events.slice(3)).toEqual(['update c 12<-5', 'add d 12', 'delete b']);
    expect(watcher.calls.map((c) => c.query['resourceVersion'])).toEqual(['10', '20']);
    await r.stop();
  });

  it('a metadata-only Reflector asks for a PartialObjectMetadataList and watches metadata only', async () => {
    items = [{ ...widget('a', '5'), spec: { big: 'x' } } as KubernetesObject];
    const watcher = new ScriptedWatcher();
    const r = new Reflector({
      client,
      kind: Widget,
      path: '/apis/example.com/v1/namespaces/default/widgets',
      watcher,
      list: { namespace: 'default', pageSize: 2, metadataOnly: true },
      streamingList: false,
      streamTimeoutMs: 30_000,
    });
    await r.start();
    expect(accepts).toEqual([
      'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json',
    ]);
    // The server here ignores the Accept header: what it sent is cut down to the metadata all the same.
    expect(r.get('a', 'default')).toEqual({
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: widget('a', '5').metadata,
    });
    await until(() => expect(watcher.calls).toHaveLength(1));
    expect(watcher.calls[0]!.options).toEqual({ metadataOnly: true });
    await r.stop();
  });

  it("a cache's field index follows a relist: what the new list changed or no longer has moves or leaves the index", async () => {
    items = [widget('a', '5', 1), widget('b', '5', 1), widget('c', '5', 1)];
    const watcher = new ScriptedWatcher();
    const r = reflector(watcher);
    const logger = createLogger({ level: 'error', write: () => {} });
    const cache = new InformerCache(() => supervisedInformer(r, () => r.hasListed(), logger), {
      namespace: undefined,
      byObject: [],
      syncTimeoutMs: 5_000,
      clock: realClock,
    });
    cache.indexField(Widget, 'generation', (o) => [String(o.metadata?.generation)]);
    await cache.start();
    const generation = async (value: string) =>
      (await cache.list(Widget, { index: { name: 'generation', value } })).map((o) => o.metadata?.name);
    expect(await generation('1')).toEqual(['a', 'b', 'c']);
    await until(() => expect(watcher.calls).toHaveLength(1));
    items = [widget('a', '5', 1), widget('c', '12', 2), widget('d', '12', 2)];
    listResourceVersion = '20';
    watcher.calls[0]!.emit('ERROR', { kind: 'Status', code: 410, reason: 'Expired' });
    watcher.calls[0]!.end();
    await until(() => expect(watcher.calls).toHaveLength(2));
    expect(await generation('1')).toEqual(['a']);
    expect(await generation('2')).toEqual(['c', 'd']);
    await cache.stop();
  });

  it('lists again in one request when a continue token expired, without repeating what it delivered', async () => {
    items = ['a', 'b', 'c', 'd'].map((name) => widget(name, '5'));
    expireTokens = true;
    const r = reflector(new ScriptedWatcher());
    const events = record(r);
    await r.start();
    expect(events).toEqual(['add a 5', 'add b 5', 'add c 5', 'add d 5']);
    expect(r.hasListed()).toBe(true);
    expect(requests.map((q) => [q.get('limit'), q.get('continue')])).toEqual([
      ['2', null],
      ['2', '2'],
      [null, null],
    ]);
    await r.stop();
  });

  it('reports a failed watch to its error handlers, and resumes from its resourceVersion on start()', async () => {
    items = [widget('a', '5')];
    const watcher = new ScriptedWatcher();
    const r = reflector(watcher);
    const errors: unknown[] = [];
    r.on('error', (err) => errors.push(err));
    await r.start();
    await until(() => expect(watcher.calls).toHaveLength(1));
    watcher.calls[0]!.end(new Error('connection reset'));
    expect(errors).toEqual([new Error('connection reset')]);
    const lists = requests.length;
    await r.start();
    await until(() => expect(watcher.calls).toHaveLength(2));
    expect(requests.length).toBe(lists);
    expect(watcher.calls.map((c) => c.query['resourceVersion'])).toEqual(['10', '10']);
    await r.stop();
    expect(watcher.calls[1]!.aborted).toBe(true);
  });

  it('stop() ends a list in flight: nothing is delivered after it, no watch starts', async () => {
    items = ['a', 'b', 'c', 'd'].map((name) => widget(name, '5'));
    let release: (() => void) | undefined;
    beforeLaterPage = () => new Promise<void>((resolve) => (release = resolve));
    const watcher = new ScriptedWatcher();
    const r = reflector(watcher);
    const events = record(r);
    const errors: unknown[] = [];
    r.on('error', (err) => errors.push(err));
    const started = r.start();
    await until(() => expect(events.length === 2 && release !== undefined).toBe(true));
    await r.stop();
    release?.();
    await started;
    await settle();
    expect(events).toEqual(['add a 5', 'add b 5']);
    expect(errors).toEqual([]);
    expect(watcher.calls).toEqual([]);
    expect(r.hasListed()).toBe(false);
  });
});

/** The bookmark that ends a streamed list's objects, at `resourceVersion`. */
const initialEventsEnd = (resourceVersion: string) => ({
  kind: 'Widget',
  metadata: { resourceVersion, annotations: { 'k8s.io/initial-events-end': 'true' } },
});

/** A streaming Reflector started on a ScriptedWatcher, once its stream has been opened. */
async function startStreaming(options: ReflectorTestOptions = {}) {
  const watcher = new ScriptedWatcher();
  const r = reflector(watcher, { ...options, streaming: true });
  const events = record(r);
  const starting = r.start();
  await until(() => expect(watcher.calls).toHaveLength(1));
  return { watcher, r, events, starting };
}

describe('Reflector, streaming its list (sendInitialEvents)', () => {
  it('stores each object as it arrives, has listed at the bookmark that ends them, and goes on watching', async () => {
    const { watcher, r, events, starting } = await startStreaming();
    let started = false;
    void starting.then(() => (started = true));
    const stream = watcher.calls[0]!;
    expect(stream.query).toEqual({
      sendInitialEvents: 'true',
      resourceVersionMatch: 'NotOlderThan',
      resourceVersion: '',
    });
    stream.emit('ADDED', widget('a', '5'));
    stream.emit('ADDED', widget('b', '7'));
    // A progress bookmark without the annotation does not end the list.
    stream.emit('BOOKMARK', { kind: 'Widget', metadata: { resourceVersion: '8' } });
    await settle();
    expect(events).toEqual(['add a 5', 'add b 7']);
    expect(r.get('b', 'default')).toMatchObject({ metadata: { resourceVersion: '7' } });
    expect(started).toBe(false);
    expect(r.hasListed()).toBe(false);
    stream.emit('BOOKMARK', initialEventsEnd('9'));
    await starting;
    expect(r.hasListed()).toBe(true);
    expect(r.latestResourceVersion()).toBe('9');
    // The same watch goes on; nothing was listed.
    stream.emit('MODIFIED', widget('a', '10', 2));
    expect(events).toEqual(['add a 5', 'add b 7', 'update a 10<-5']);
    expect(r.latestResourceVersion()).toBe('10');
    expect(requests).toEqual([]);
    expect(watcher.calls).toHaveLength(1);
    await r.stop();
    expect(stream.aborted).toBe(true);
  });

  it('lists in pages, and says why, when the server refuses to stream (422: WatchList off)', async () => {
    items = [widget('a', '5'), widget('b', '5'), widget('c', '5')];
    const refusal = Object.assign(new Error('Unprocessable Entity'), { statusCode: 422 });
    const reasons: unknown[] = [];
    const { watcher, r, events, starting } = await startStreaming({
      onFallback: (reason) => reasons.push(reason),
    });
    watcher.calls[0]!.end(refusal);
    await starting;
    expect(reasons).toEqual([refusal]);
    expect(events).toEqual(['add a 5', 'add b 5', 'add c 5']);
    expect(r.hasListed()).toBe(true);
    expect(requests.map((q) => [q.get('limit'), q.get('continue')])).toEqual([
      ['2', null],
      ['2', '2'],
    ]);
    await until(() => expect(watcher.calls).toHaveLength(2));
    expect(watcher.calls[1]!.query).toEqual({ resourceVersion: '10' });
    await r.stop();
  });

  it('lists in pages when the stream ends before its bookmark, keeping what it delivered', async () => {
    items = [widget('a', '5'), widget('b', '5')];
    const reasons: unknown[] = [];
    const { watcher, r, events, starting } = await startStreaming({
      onFallback: (reason) => reasons.push(reason),
    });
    watcher.calls[0]!.emit('ADDED', widget('a', '5'));
    watcher.calls[0]!.end();
    await starting;
    expect(reasons).toEqual([new Error('the watch ended before its initial events did')]);
    // a came with the stream; the list has it at the same version (no event) and adds b.
    expect(events).toEqual(['add a 5', 'add b 5']);
    expect(r.hasListed()).toBe(true);
    await r.stop();
  });

  it('gives up a stream that carries nothing within its timeout, and lists in pages', async () => {
    items = [widget('a', '5')];
    let connects = 0;
    // The first watch (the stream) is never answered; the one after the list connects.
    const watcher = new ScriptedWatcher(() => (connects++ === 0 ? new Promise(() => {}) : Promise.resolve()));
    const reasons: unknown[] = [];
    const r = reflector(watcher, {
      streaming: true,
      streamTimeoutMs: 50,
      onFallback: (reason) => reasons.push(reason),
    });
    const events = record(r);
    await r.start();
    expect(reasons).toEqual([new Error('no event from the API server within 50 ms')]);
    expect(events).toEqual(['add a 5']);
    expect(r.hasListed()).toBe(true);
    // Events of the abandoned stream are ignored.
    watcher.calls[0]!.emit('ADDED', widget('z', '9'));
    expect(events).toEqual(['add a 5']);
    await r.stop();
  });

  it('streams again after a 410, deleting what the new state does not have', async () => {
    const { watcher, r, events, starting } = await startStreaming();
    for (const name of ['a', 'b', 'c']) watcher.calls[0]!.emit('ADDED', widget(name, '5'));
    watcher.calls[0]!.emit('BOOKMARK', initialEventsEnd('6'));
    await starting;
    watcher.calls[0]!.emit('ERROR', { kind: 'Status', code: 410, reason: 'Expired' });
    watcher.calls[0]!.end();
    await until(() => expect(watcher.calls).toHaveLength(2));
    const again = watcher.calls[1]!;
    expect(again.query['sendInitialEvents']).toBe('true');
    again.emit('ADDED', widget('a', '5'));
    again.emit('ADDED', widget('c', '12'));
    again.emit('ADDED', widget('d', '12'));
    expect(events.slice(3)).toEqual(['update c 12<-5', 'add d 12']);
    again.emit('BOOKMARK', initialEventsEnd('20'));
    expect(events.slice(5)).toEqual(['delete b']);
    expect(r.latestResourceVersion()).toBe('20');
    expect(requests).toEqual([]);
    await r.stop();
  });

  it('stop() during the stream resolves start(), and nothing is delivered after it', async () => {
    const { watcher, r, events, starting } = await startStreaming();
    watcher.calls[0]!.emit('ADDED', widget('a', '5'));
    await r.stop();
    await starting;
    watcher.calls[0]!.emit('ADDED', widget('b', '5'));
    watcher.calls[0]!.emit('BOOKMARK', initialEventsEnd('6'));
    expect(events).toEqual(['add a 5']);
    expect(r.hasListed()).toBe(false);
    expect(watcher.calls[0]!.aborted).toBe(true);
  });
});
