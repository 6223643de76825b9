/**
 * watchWithBookmarks against a local HTTP server that ends every watch the moment it opens, cleanly (a
 * complete, empty response): client-node reports that as a normal end, and its ListWatch would reopen
 * the watch at once, in a loop. The wrapper turns it into an error, so the informer backs off.
 */
import http from 'node:http';
import type { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { watchWithBookmarks } from '../src/cache.js';
import { localKubeConfig } from './local-server.js';

let server: http.Server;
let kubeConfig: KubeConfig;
let body = '';
const queries: URLSearchParams[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    queries.push(new URL(req.url ?? '/', 'http://x').searchParams);
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  kubeConfig = localKubeConfig(server);
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

function watchOnce(): Promise<unknown> {
  return new Promise((resolve) => {
    void watchWithBookmarks(kubeConfig, { random: () => 0.5 }).watch(
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
