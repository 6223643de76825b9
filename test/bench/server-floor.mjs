/**
 * How long the API server takes to send a kind's whole list, read by a client that does nothing with it:
 * one unpaginated list (the floor's informer), pages of 500 linked by continue tokens (the runtime's
 * fallback, client-go's pager) and a streamed list up to its `k8s.io/initial-events-end` bookmark (the
 * runtime's default, client-go's WatchList). Each informer's sync cannot be faster than its way of listing
 * here; the rest of its time is its own. Used by runtime.mjs.
 */
import { Buffer } from 'node:buffer';
import https from 'node:https';
import { performance } from 'node:perf_hooks';

/** Milliseconds until the answer to GET `path` has ended, or until `until` appears in it (then closed). */
function timeRead(agent, base, options, path, until) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let tail = '';
    let body = [];
    const req = https.request(
      {
        ...options,
        agent,
        host: base.hostname,
        port: base.port,
        path,
        headers: { ...options.headers, Accept: 'application/json' },
      },
      (res) => {
        if (res.statusCode !== 200) reject(new Error(`GET ${path}: ${res.statusCode}`));
        res.on('data', (chunk) => {
          if (until === undefined) {
            body.push(chunk);
            return;
          }
          const text = tail + chunk.toString('latin1');
          if (text.includes(until)) {
            resolve({ ms: performance.now() - started });
            req.destroy();
          }
          tail = text.slice(-until.length);
        });
        res.on('end', () => {
          const text = Buffer.concat(body).toString('latin1');
          body = [];
          resolve({ ms: performance.now() - started, text });
        });
      },
    );
    req.on('error', (err) => (until === undefined ? reject(err) : undefined));
    req.end();
  });
}

/** The API server's time for each way of listing `resource` (a path), the median of `rounds` each. */
export async function serverListTimes(kubeConfig, resource, rounds) {
  const options = {};
  await kubeConfig.applyToHTTPSOptions(options);
  const base = new URL(kubeConfig.getCurrentCluster().server);
  const agent = new https.Agent({ keepAlive: true });
  const ways = {
    'one list': async () => (await timeRead(agent, base, options, resource)).ms,
    'pages of 500': async () => {
      const started = performance.now();
      let token = '';
      do {
        const query = `?limit=500${token ? `&continue=${encodeURIComponent(token)}` : ''}`;
        const { text } = await timeRead(agent, base, options, `${resource}${query}`);
        // A custom resource list's metadata ends its text (keys sorted): no need to parse the page.
        token = /"continue":"([^"]+)"/.exec(text.slice(-512))?.[1] ?? '';
      } while (token);
      return performance.now() - started;
    },
    'streamed list': async () => {
      const query =
        '?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=&allowWatchBookmarks=true';
      return (await timeRead(agent, base, options, `${resource}${query}`, 'k8s.io/initial-events-end')).ms;
    },
  };
  const times = Object.fromEntries(Object.keys(ways).map((way) => [way, []]));
  try {
    for (let round = 0; round < rounds; round++) {
      for (const [way, read] of Object.entries(ways)) times[way].push(await read());
    }
  } finally {
    agent.destroy();
  }
  const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
  return Object.fromEntries(Object.entries(times).map(([way, list]) => [way, median(list)]));
}
