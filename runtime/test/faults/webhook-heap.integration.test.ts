/**
 * 16 concurrent admission reviews of 6.8 MB against a webhook server under the generated manager's heap
 * (NODE_OPTIONS=--max-old-space-size=96), in a child process on the built runtime. The issue measured, before
 * maxInFlightBytes: out of memory, the webhook server dead.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { admissionReview, makeCertificates, post, tempDir } from '../webhook/helpers.js';

const child = fileURLToPath(new URL('./fixtures/webhook-server.mjs', import.meta.url));
const VALIDATE = '/validate-webapp-example-com-v1-guestbook';
const object = { apiVersion: 'webapp.example.com/v1', kind: 'Guestbook', metadata: { name: 'g' }, spec: {} };

const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const step of cleanup.splice(0).reverse()) step();
});

/** Starts the server in a child under the 96 MB heap; resolves with it and its port. */
async function startServer(certDir: string): Promise<{ server: ChildProcess; port: number }> {
  const server = spawn(process.execPath, ['--max-old-space-size=96', child, certDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  cleanup.push(() => server.kill('SIGKILL'));
  const port = await new Promise<number>((resolve, reject) => {
    server.stdout!.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim())));
    server.once('exit', (code) => reject(new Error(`the webhook server exited with ${code}`)));
  });
  return { server, port };
}

describe('16 concurrent 6.8 MB reviews under the generated 96 MB heap', () => {
  it('the server refuses what it cannot hold with 429, stays up, and answers afterwards', async () => {
    const dir = tempDir();
    cleanup.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const certs = makeCertificates(dir);
    const { server, port } = await startServer(dir);
    let exited: number | null | undefined;
    server.once('exit', (code) => (exited = code));

    const big = JSON.stringify(
      admissionReview({ object: { ...object, spec: { blob: 'x'.repeat(6_800_000) } } }),
    );
    const replies = await Promise.all(
      Array.from({ length: 16 }, () =>
        post(port, VALIDATE, big, { ca: certs.ca }).then(
          (reply) => reply.status,
          (error: Error) => `connection lost: ${error.message}`,
        ),
      ),
    );
    const answered = replies.filter((status) => status === 200).length;
    const refused = replies.filter((status) => status === 429).length;
    // A refusal answered while the client is still sending its 6.8 MB can reach the client as a reset
    // instead of the 429 (about one run in six): an error for that request all the same.
    const reset = replies.filter((status) => typeof status === 'string').length;
    console.info(
      `16 concurrent 6.8 MB reviews under a 96 MB heap: ${answered} answered, ${refused} refused (429)`,
    );
    expect(exited).toBeUndefined();
    expect(answered + refused + reset).toBe(16);
    expect(answered).toBeGreaterThan(0);
    expect((await post(port, VALIDATE, admissionReview({ object }), { ca: certs.ca })).status).toBe(200);
  }, 60_000);
});
