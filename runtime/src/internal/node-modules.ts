/**
 * Node's HTTP, TLS and HTTP/2 modules, imported at their first use instead of with the runtime: compiling
 * them is most of what an import of the runtime costs a process (http2 and https alone ~40 ms of a fast
 * machine), and a program that imports the runtime without serving or calling anything (a CLI, a test, a
 * tool reading its types' values) never needs them. Every use is in an async path (a start, a request).
 */
import type Crypto from 'node:crypto';
import type Http from 'node:http';
import type Http2 from 'node:http2';
import type Https from 'node:https';
import type Tls from 'node:tls';

export interface HttpModules {
  http: typeof Http;
  https: typeof Https;
}

export type Http2Module = typeof Http2;

let httpModules: Promise<HttpModules> | undefined;
let http2Module: Promise<typeof Http2> | undefined;
let tlsModule: Promise<typeof Tls> | undefined;

/** node:http and node:https, imported once. */
export function loadHttp(): Promise<HttpModules> {
  return (httpModules ??= Promise.all([import('node:http'), import('node:https')]).then(([http, https]) => ({
    http: http.default,
    https: https.default,
  })));
}

/** node:http2, imported once: only a server with HTTP/2 enabled needs it. */
export function loadHttp2(): Promise<typeof Http2> {
  return (http2Module ??= import('node:http2').then((http2) => http2.default));
}

/** node:tls, imported once. */
export function loadTls(): Promise<typeof Tls> {
  return (tlsModule ??= import('node:tls').then((tls) => tls.default));
}

/**
 * node:crypto, taken as `require` would take it: an ES import of it evaluates every one of its exports
 * (web crypto and streams included), ~15 ms of an import of the runtime.
 */
export function nodeCrypto(): typeof Crypto {
  return process.getBuiltinModule('node:crypto');
}
