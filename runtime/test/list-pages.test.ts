/**
 * HttpClient.listEach, the informer's list, against a local HTTP server that plays the API server's
 * pagination: pages linked by continue tokens, each item handed out as its page arrives, and a continue
 * token that expired (410, as after an etcd compaction).
 */
import http from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { HttpClient } from '../src/client.js';
import { groupVersion } from '../src/kinds.js';
import { localKubeConfig } from './local-server.js';

const Widget = groupVersion('example.com', 'v1').kind('Widget', { plural: 'widgets' });
const ITEMS = ['a', 'b', 'c', 'd', 'e'].map((name) => ({
  metadata: { name, namespace: 'default', managedFields: [{ manager: 'test' }] },
}));

let server: http.Server;
let client: HttpClient;
/** The query of every request the server answered. */
let requests: URLSearchParams[] = [];
/** Answer 410 to any request that carries a continue token. */
let expireTokens = false;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const query = new URL(req.url ?? '/', 'http://x').searchParams;
    requests.push(query);
    const token = query.get('continue');
    if (token && expireTokens) {
      res.writeHead(410, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          kind: 'Status',
          status: 'Failure',
          reason: 'Expired',
          code: 410,
          message: 'too old',
        }),
      );
      return;
    }
    const start = token ? Number(token) : 0;
    const limit = query.has('limit') ? Number(query.get('limit')) : ITEMS.length;
    const end = Math.min(start + limit, ITEMS.length);
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(
      JSON.stringify({
        kind: 'WidgetList',
        metadata: { resourceVersion: '42', ...(end < ITEMS.length ? { continue: String(end) } : {}) },
        items: ITEMS.slice(start, end),
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const kubeConfig = localKubeConfig(server);
  client = new HttpClient(kubeConfig);
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  requests = [];
  expireTokens = false;
});

describe("the informer's list (HttpClient.listEach)", () => {
  it("follows continue tokens page by page, setting each item's kind, and returns the resourceVersion", async () => {
    const seen: string[] = [];
    const items: { apiVersion?: string; kind?: string }[] = [];
    const list = await client.listEach(Widget, { namespace: 'default', pageSize: 2 }, (item) => {
      seen.push(item.metadata?.name ?? '');
      items.push(item);
    });
    expect(seen).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(items[0]).toMatchObject({ apiVersion: 'example.com/v1', kind: 'Widget' });
    expect(list).toEqual({ resourceVersion: '42' });
    expect(requests.map((q) => [q.get('limit'), q.get('continue')])).toEqual([
      ['2', null],
      ['2', '2'],
      ['2', '4'],
    ]);
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
