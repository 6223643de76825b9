import { describe, expect, it } from 'vitest';
import { applyJsonPatch, JsonPatchError } from '../../src/testing/jsonpatch.js';
import { createPatch, escapePointerToken, type JsonValue } from '../../src/webhook/internal/jsonpatch.js';

/** The patch, checked to turn `before` into `after`. */
function patchOf(before: JsonValue, after: JsonValue) {
  const patch = createPatch(before, after);
  expect(applyJsonPatch(before, patch)).toEqual(after);
  return patch;
}

describe('createPatch', () => {
  it('is empty for equal documents, whatever the key order', () => {
    expect(patchOf({ a: 1, b: { c: [1, 2] } }, { b: { c: [1, 2] }, a: 1 })).toEqual([]);
  });

  it('adds, replaces and removes object keys, one level down where both sides are objects', () => {
    expect(
      patchOf(
        { spec: { replicas: 1, image: 'a', old: true }, status: {} },
        { spec: { replicas: 3, image: 'a', size: 'M' }, status: {} },
      ),
    ).toEqual([
      { op: 'replace', path: '/spec/replicas', value: 3 },
      { op: 'remove', path: '/spec/old' },
      { op: 'add', path: '/spec/size', value: 'M' },
    ]);
  });

  it('adds a whole missing object at once', () => {
    expect(patchOf({ metadata: { name: 'g' } }, { metadata: { name: 'g', labels: { app: 'g' } } })).toEqual([
      { op: 'add', path: '/metadata/labels', value: { app: 'g' } },
    ]);
  });

  it('escapes ~ and / in keys (RFC 6901), ~ first', () => {
    expect(escapePointerToken('a/b~c~1')).toBe('a~1b~0c~01');
    expect(
      patchOf(
        { metadata: { annotations: { 'example.com/x': '1' } } },
        { metadata: { annotations: { 'example.com/x': '2', 'a~b': 'y' } } },
      ),
    ).toEqual([
      { op: 'replace', path: '/metadata/annotations/example.com~1x', value: '2' },
      { op: 'add', path: '/metadata/annotations/a~0b', value: 'y' },
    ]);
  });

  it('compares arrays index by index, into nested objects and arrays', () => {
    const before: JsonValue = {
      spec: {
        containers: [
          { name: 'a', ports: [80] },
          { name: 'b', ports: [1, 2] },
        ],
      },
    };
    const after: JsonValue = {
      spec: {
        containers: [
          { name: 'a', ports: [8080] },
          { name: 'b', ports: [1, 2], image: 'x' },
        ],
      },
    };
    expect(patchOf(before, after)).toEqual([
      { op: 'replace', path: '/spec/containers/0/ports/0', value: 8080 },
      { op: 'add', path: '/spec/containers/1/image', value: 'x' },
    ]);
  });

  it('adds extra elements at the end and removes surplus ones from the end, last first', () => {
    expect(patchOf({ a: [1, 2] }, { a: [1, 2, 3, 4] })).toEqual([
      { op: 'add', path: '/a/2', value: 3 },
      { op: 'add', path: '/a/3', value: 4 },
    ]);
    expect(patchOf({ a: [1, 2, 3, 4] }, { a: [1] })).toEqual([
      { op: 'remove', path: '/a/3' },
      { op: 'remove', path: '/a/2' },
      { op: 'remove', path: '/a/1' },
    ]);
    // An insertion at the front: longer than one add, and still right.
    patchOf({ a: [[1], [2]] }, { a: [[0], [1], [2]] });
  });

  it('replaces a value whose JSON type changes, null included', () => {
    expect(patchOf({ a: 'x', b: [1], c: null, d: {} }, { a: { x: 1 }, b: null, c: 0, d: [] })).toEqual([
      { op: 'replace', path: '/a', value: { x: 1 } },
      { op: 'replace', path: '/b', value: null },
      { op: 'replace', path: '/c', value: 0 },
      { op: 'replace', path: '/d', value: [] },
    ]);
  });

  it('replaces the root when the documents are of different types', () => {
    expect(patchOf({ a: 1 }, [1])).toEqual([{ op: 'replace', path: '', value: [1] }]);
  });

  it('keeps empty and odd keys apart', () => {
    expect(patchOf({ '': 1, '0': 2 }, { '': 2, '0': 2, '-': 3 })).toEqual([
      { op: 'replace', path: '/', value: 2 },
      { op: 'add', path: '/-', value: 3 },
    ]);
  });
});

describe('applyJsonPatch', () => {
  it('applies add, remove, replace, move, copy and test in order, leaving the document as it was', () => {
    const document = { metadata: { labels: { a: '1' } }, spec: { ports: [80, 443], old: true } };
    const before = structuredClone(document);
    expect(
      applyJsonPatch(document, [
        { op: 'add', path: '/metadata/labels/b', value: '2' },
        { op: 'add', path: '/spec/ports/1', value: 8080 },
        { op: 'add', path: '/spec/ports/-', value: 9090 },
        { op: 'remove', path: '/spec/old' },
        { op: 'replace', path: '/spec/ports/0', value: 81 },
        { op: 'move', from: '/metadata/labels/a', path: '/metadata/labels/c' },
        { op: 'copy', from: '/spec/ports', path: '/spec/copied' },
        { op: 'test', path: '/spec/copied', value: [81, 8080, 443, 9090] },
      ]),
    ).toEqual({
      metadata: { labels: { b: '2', c: '1' } },
      spec: { ports: [81, 8080, 443, 9090], copied: [81, 8080, 443, 9090] },
    });
    expect(document).toEqual(before);
  });

  it('refuses what it cannot apply, naming the path', () => {
    const document = { spec: { ports: [80] } };
    const refused = (patch: Parameters<typeof applyJsonPatch>[1]) => () => applyJsonPatch(document, patch);
    expect(refused([{ op: 'remove', path: '/spec/missing' }])).toThrow(
      new JsonPatchError('JSON patch: path "/spec/missing" does not exist'),
    );
    expect(refused([{ op: 'replace', path: '/spec/ports/1', value: 1 }])).toThrow(
      'JSON patch: index "1" out of range in "/spec/ports/1"',
    );
    expect(refused([{ op: 'add', path: '/spec/ports/01', value: 1 }])).toThrow('out of range');
    expect(refused([{ op: 'add', path: '/nope/x', value: 1 }])).toThrow('path "/nope/x" does not exist');
    expect(refused([{ op: 'test', path: '/spec/ports', value: [81] }])).toThrow(
      'JSON patch: test of "/spec/ports" failed',
    );
    expect(refused([{ op: 'move', from: '/spec', path: '/spec/inner' }])).toThrow('into itself');
    expect(refused([{ op: 'add', path: 'spec', value: 1 }])).toThrow('invalid path "spec"');
  });

  it('replaces the whole document at the empty path', () => {
    expect(applyJsonPatch({ a: 1 }, [{ op: 'replace', path: '', value: [1] }])).toEqual([1]);
  });
});
