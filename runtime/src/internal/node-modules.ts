/**
 * Node's HTTP, TLS and HTTP/2 modules, imported at their first use instead of with the runtime: compiling
 * them is most of what an import of the runtime costs a process (http2 and https alone ~40 ms of a fast
 * machine), and a program that imports the runtime without serving or calling anything (a CLI, a test, a
 * tool reading its types' values) never needs them. Every use is in an async path (a start, a request).
 */
import type Crypto from 'node:crypto';
import type Fs from 'node:fs';
import type Http from 'node:http';
import type Http2 from 'node:http2';
import type Https from 'node:https';
import type Module from 'node:module';
import type Os from 'node:os';
import type Path from 'node:path';
import type Tls from 'node:tls';
import type Url from 'node:url';

export interface HttpModules {
  http: typeof Http;
  https: typeof Https;
}

export type Http2Module = typeof Http2;

let httpModules: Promise<HttpModules> | undefined;
let http2Module: Promise<typeof Http2> | undefined;
let tlsModule: Promise<typeof Tls> | undefined;

/*
 * These are taken as `require` takes them, not imported: an ES import of a built-in module builds its ES
 * face, which reads every export, and from Node 22 node:http's exports include lazy getters for undici's
 * WebSocket and events, so `import('node:http')` loaded Node's whole fetch implementation (undici: about
 * 35 ms of CPU time and 7 MiB of a manager's start on Node 22 and 24, for nothing the runtime uses).
 */

/** node:http and node:https, loaded once. */
export function loadHttp(): Promise<HttpModules> {
  return (httpModules ??= Promise.resolve().then(() => ({
    http: process.getBuiltinModule('node:http'),
    https: process.getBuiltinModule('node:https'),
  })));
}

/** node:http2, loaded once: only a server with HTTP/2 enabled needs it. */
export function loadHttp2(): Promise<typeof Http2> {
  return (http2Module ??= Promise.resolve().then(() => process.getBuiltinModule('node:http2')));
}

/** node:tls, loaded once. */
export function loadTls(): Promise<typeof Tls> {
  return (tlsModule ??= Promise.resolve().then(() => process.getBuiltinModule('node:tls')));
}

/**
 * node:crypto, taken as `require` would take it: an ES import of it evaluates every one of its exports
 * (web crypto and streams included), ~15 ms of an import of the runtime.
 */
export function nodeCrypto(): typeof Crypto {
  return process.getBuiltinModule('node:crypto');
}

/*
 * Node's modules that the runtime's first tick needs, taken as `require` takes them instead of imported:
 * an ES import of a built-in module builds its ES face, which reads every export, and node:fs's lazy
 * ReadStream then loads Node's whole streams stack (with node:os and node:module, about 10 ms of CPU and
 * 1.3 MiB of an import of the runtime, Node 20). fs, path, url and module are loaded by Node's own start.
 */
export const nodeFs: typeof Fs = process.getBuiltinModule('node:fs');
export const nodeModule: typeof Module = process.getBuiltinModule('node:module');
export const nodePath: typeof Path = process.getBuiltinModule('node:path');
export const nodeUrl: typeof Url = process.getBuiltinModule('node:url');

/** node:os, loaded at its first use (a Node start does not load it). */
export function nodeOs(): typeof Os {
  return process.getBuiltinModule('node:os');
}
