/**
 * HttpClient.watch, and watchWithBookmarks, against a local HTTP server. HttpClient.watch: events split
 * anywhere across chunks, error statuses, a server that never answers, an endless line, an abort, and
 * connections kept for the next request. watchWithBookmarks, against a server that ends every watch the moment it opens, cleanly (a
 * complete, empty response): HttpClient.watch reports that as a normal end, and a Reflector would reopen
 * the watch at once, in a loop. The wrapper turns it into an error, so the informer backs off.
 */
import http from 'node:http';
import type { KubeConfig } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { watchWithBookmarks } from '../src/cache.js';
import { HttpClient, MAX_WATCH_EVENT_BYTES } from '../src/client.js';
import { ApiError, RequestTimeoutError } from '../src/errors.js';
import { localKubeConfig } from './local-server.js';

let server: http.Server;
let kubeConfig: KubeConfig;
let body = '';
const queries: URLSearchParams[] = [];
/** Answers instead of the default (200 with `body`) when set. */
let answer: ((res: http.ServerResponse) => void) | undefined;
const connections = new Set<unknown>();

beforeAll(async () => {
  server = http.createServer((req, res) => {
    queries.push(new URL(req.url ?? '/', 'http://x').searchParams);
    connections.add(req.socket);
    if (answer) return answer(res);
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  kubeConfig = localKubeConfig(server);
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
afterEach(() => {
  answer = undefined;
  connections.clear();
});

function watchOnce(): Promise<unknown> {
  return new Promise((resolve) => {
    void watchWithBookmarks(new HttpClient(kubeConfig), { random: () => 0.5 }).watch(
      '/api/v1/configmaps',
      {},
      () => {},
      (err: unknown) => resolve(err),
    );
  });
}

describe('watchWithBookmarks', () => {
  it('asks for bookmarks and a jittered timeoutSeconds of 30 to 45 s', async () => {
    body = '';
    await watchOnce();
    const query = queries.at(-1);
    expect(query?.get('allowWatchBookmarks')).toBe('true');
    expect(query?.get('timeoutSeconds')).toBe('37'); // 30 * (1 + 0.5 / 2)
  });

  it('reports a watch closed at once, with no event, as an error: "very short watch"', async () => {
    body = '';
    const err = await watchOnce();
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(
      /^very short watch: the watch of \/api\/v1\/configmaps was closed/,
    );
  });

  it('reports a short watch that carried an event as a normal end', async () => {
    body = `${JSON.stringify({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '5' } } })}\n`;
    expect(await watchOnce()).toBeNull();
  });
});

/** Runs one watch of HttpClient to its end: the events it handed out, and what it ended with. */
function watchToEnd(
  client: HttpClient,
  query: Record<string, string> = {},
): Promise<{ events: [string, unknown][]; err: unknown }> {
  const events: [string, unknown][] = [];
  return new Promise((resolve) => {
    void client.watch(
      '/api/v1/configmaps',
      query,
      (type, object) => events.push([type, object]),
      (err) => resolve({ events, err }),
    );
  });
}

describe('HttpClient.watch', () => {
  it('hands out each event line, wherever the chunks split it, and ends with null', async () => {
    const lines = [
      JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'é-one' } } }),
      JSON.stringify({ type: 'MODIFIED', object: { metadata: { name: 'two', resourceVersion: '2' } } }),
      JSON.stringify({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '3' } } }),
    ];
    const bytes = Buffer.from(`${lines[0]}\n\n${lines[1]}\n${lines[2]}\n`);
    answer = (res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      // One byte at a time at first (the é is two bytes), then the rest in two chunks.
      let at = 0;
      const next = () => {
        if (at >= bytes.length) return res.end();
        const size = at < 20 ? 1 : Math.ceil((bytes.length - at) / 2);
        res.write(bytes.subarray(at, at + size));
        at += size;
        setImmediate(next);
      };
      next();
    };
    const client = new HttpClient(kubeConfig);
    const { events, err } = await watchToEnd(client, { resourceVersion: '1', allowWatchBookmarks: 'true' });
    expect(err).toBeNull();
    expect(events).toEqual(lines.map((line) => Object.values(JSON.parse(line) as object)));
    expect(queries.at(-1)?.toString()).toBe('watch=true&resourceVersion=1&allowWatchBookmarks=true');
    client.close();
  });

  it('ends with an ApiError carrying the status when the server refuses the watch', async () => {
    answer = (res) =>
      res.writeHead(422, { 'Content-Type': 'application/json' }).end(
        JSON.stringify({
          kind: 'Status',
          status: 'Failure',
          reason: 'Invalid',
          code: 422,
          message: 'sendInitialEvents is forbidden',
        }),
      );
    const client = new HttpClient(kubeConfig);
    const { events, err } = await watchToEnd(client);
    expect(events).toEqual([]);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ statusCode: 422, reason: 'Invalid' });
    client.close();
  });

  it("ends with a RequestTimeoutError when the server does not answer within the client's timeout", async () => {
    answer = () => {}; // never
    const client = new HttpClient(kubeConfig, { timeoutMs: 100 });
    const { err } = await watchToEnd(client);
    expect(err).toBeInstanceOf(RequestTimeoutError);
    expect((err as Error).message).toBe(
      'watch /api/v1/configmaps: no answer from the API server within 100 ms',
    );
    client.close();
  });

  it('ends with an error on a line longer than MAX_WATCH_EVENT_BYTES', async () => {
    answer = (res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('x'.repeat(MAX_WATCH_EVENT_BYTES + 1));
    };
    const client = new HttpClient(kubeConfig);
    const { err } = await watchToEnd(client);
    expect((err as Error).message).toBe(
      `watch /api/v1/configmaps: an event longer than ${MAX_WATCH_EVENT_BYTES} bytes`,
    );
    client.close();
  });

  it('ends with the error of an event handler that throws, instead of crashing', async () => {
    body = `${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a' } } })}\n`;
    const client = new HttpClient(kubeConfig);
    const err = await new Promise((resolve) => {
      void client.watch(
        '/api/v1/configmaps',
        {},
        () => {
          throw new Error('handler failed');
        },
        resolve,
      );
    });
    expect(err).toEqual(new Error('handler failed'));
    client.close();
  });

  it('abort() ends the watch, and done is called once', async () => {
    answer = (res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a' } } })}\n`);
    };
    const client = new HttpClient(kubeConfig);
    const ends: unknown[] = [];
    const events: string[] = [];
    const watch = await client.watch(
      '/api/v1/configmaps',
      {},
      (type) => events.push(type),
      (err) => ends.push(err),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    watch.abort();
    watch.abort();
    expect(events).toEqual(['ADDED']);
    expect(ends).toEqual([new Error('watch /api/v1/configmaps: aborted')]);
    client.close();
  });

  it('leaves the connection of a watch the server ended to the next request', async () => {
    body = `${JSON.stringify({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '5' } } })}\n`;
    const client = new HttpClient(kubeConfig);
    expect((await watchToEnd(client)).err).toBeNull();
    expect((await watchToEnd(client)).err).toBeNull();
    expect(connections.size).toBe(1);
    client.close();
  });
});
