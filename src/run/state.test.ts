import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KubesmithError } from '../errors.js';
import { prepareRunDir, readState, removeState, STATE_FILE, writeState, type RunState } from './state.js';

let root: string;
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'kubesmith-run-state-'));
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

const state: RunState = {
  pid: 4242,
  server: 'https://127.0.0.1:6443',
  context: 'kind-dev',
  changed: [
    { kind: 'MutatingWebhookConfiguration', name: 'project-mutating-webhook-configuration', original: null },
    {
      kind: 'CustomResourceDefinition',
      name: 'guestbooks.webapp.example.com',
      original: { metadata: { name: 'guestbooks.webapp.example.com' } },
    },
  ],
};

function write(content: unknown): void {
  prepareRunDir(root);
  fs.writeFileSync(path.join(root, STATE_FILE), JSON.stringify(content));
}

describe('the state file of kubesmith run', () => {
  it('reads back what a run wrote, and is gone once removed', () => {
    prepareRunDir(root);
    writeState(root, state);
    expect(readState(root)).toEqual(state);
    removeState(root);
    expect(readState(root)).toBeUndefined();
  });

  it('keeps itself out of git', () => {
    prepareRunDir(root);
    expect(fs.readFileSync(path.join(root, '.kubesmith/run/.gitignore'), 'utf8')).toMatch(/^\*$/m);
  });

  it.each([
    [
      'a kind run never changes',
      { ...state, changed: [{ kind: 'Secret', name: 'x', original: null }] },
      /Secret/,
    ],
    ['a name that is no object name', { ...state, changed: [{ ...state.changed[0], name: '../x' }] }, /name/],
    [
      'an original of another object',
      { ...state, changed: [{ ...state.changed[1], original: { metadata: { name: 'other' } } }] },
      /original/,
    ],
    ['no pid', { ...state, pid: 'me' }, /pid/],
    ['not JSON', '{', /JSON|Unexpected|Expected/],
  ])('refuses %s, with one line and a hint', (_what, content, message) => {
    if (typeof content === 'string') {
      prepareRunDir(root);
      fs.writeFileSync(path.join(root, STATE_FILE), content);
    } else write(content);
    let error: unknown;
    try {
      readState(root);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(KubesmithError);
    expect((error as KubesmithError).message).toMatch(
      /^\.kubesmith\/run\/state\.json is not a state file of kubesmith run: /,
    );
    expect((error as KubesmithError).message).toMatch(message);
    expect((error as KubesmithError).hint).toMatch(/delete \.kubesmith\/run\/state\.json/);
  });

  it('refuses a file larger than any run writes, before reading it', () => {
    prepareRunDir(root);
    fs.writeFileSync(path.join(root, STATE_FILE), ' '.repeat(5 * 2 ** 20));
    expect(() => readState(root)).toThrow(/more than run ever writes/);
  });

  it('refuses a run directory that leads out of the project (a link a pull request committed)', () => {
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'kubesmith-outside-'));
    try {
      fs.mkdirSync(path.join(root, '.kubesmith'));
      fs.symlinkSync(outside, path.join(root, '.kubesmith/run'));
      expect(() => prepareRunDir(root)).toThrow(KubesmithError);
      expect(() => readState(root)).toThrow(/symbolic link/);
      expect(fs.readdirSync(outside)).toEqual([]);
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });
});
