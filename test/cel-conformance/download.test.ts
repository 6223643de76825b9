/**
 * scripts/cel-conformance.mjs: where it fetches the conformance data from (GOPROXY), and that it keeps
 * nothing of a module zip whose hash is not the pinned one.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CEL_EXPR_VERSION,
  conformanceCachePath,
  ensureConformanceData,
  hash1,
  proxies,
  readZip,
  // @ts-expect-error -- a plain .mjs script without types
} from '../../scripts/cel-conformance.mjs';

/** A zip of stored (uncompressed) files: enough for readZip. */
function storedZip(files: Record<string, string>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, text] of Object.entries(files)) {
    const data = Buffer.from(text);
    const nameBytes = Buffer.from(name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, data);
    centrals.push(central, nameBytes);
    offset += 30 + nameBytes.length + data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Object.keys(files).length, 8);
  end.writeUInt16LE(Object.keys(files).length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('cel-conformance: the module proxy', () => {
  it('uses GOPROXY’s proxies up to direct, and proxy.golang.org by default', () => {
    expect(proxies({}).map((u: URL) => u.href)).toEqual(['https://proxy.golang.org/']);
    expect(
      proxies({ GOPROXY: 'https://a.example/go,https://b.example|direct,https://c.example' }).map(
        (u: URL) => u.href,
      ),
    ).toEqual(['https://a.example/go', 'https://b.example/']);
    expect(() => proxies({ GOPROXY: 'off' })).toThrow(/names no module proxy/);
    expect(() => proxies({ GOPROXY: 'direct' })).toThrow(/names no module proxy/);
  });

  it('refuses a module zip whose go.sum hash is not the pinned one, and caches nothing of it', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'cel-conformance-'));
    dirs.push(root);
    const prefix = `cel.dev/expr@${CEL_EXPR_VERSION}/tests/simple/testdata/`;
    const zip = storedZip({ [`${prefix}basic.textproto`]: 'name: "tampered"\n' });
    const files = readZip(zip);
    expect([...files.keys()]).toEqual([`${prefix}basic.textproto`]);
    expect(hash1(files)).toMatch(/^h1:[A-Za-z0-9+/]{43}=$/);

    const proxy = path.join(root, 'proxy');
    mkdirSync(path.join(proxy, 'cel.dev/expr/@v'), { recursive: true });
    writeFileSync(path.join(proxy, `cel.dev/expr/@v/${CEL_EXPR_VERSION}.zip`), zip);
    const env = { XDG_CACHE_HOME: path.join(root, 'cache'), GOPROXY: pathToFileURL(proxy).href };
    await expect(ensureConformanceData(env)).rejects.toThrow(/hashes to h1:.*not the pinned/);
    expect(existsSync(conformanceCachePath(env))).toBe(false);
  });

  it('says what failed when no proxy has the module', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'cel-conformance-'));
    dirs.push(root);
    const env = {
      XDG_CACHE_HOME: path.join(root, 'cache'),
      GOPROXY: pathToFileURL(path.join(root, 'none')).href,
    };
    await expect(ensureConformanceData(env)).rejects.toMatchObject({
      message: expect.stringMatching(/could not download cel\.dev\/expr@v[\d.]+:/),
      hint: expect.stringMatching(/GOPROXY/),
    });
  });
});
