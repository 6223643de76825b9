/**
 * RFC 6902 JSON patches applied to a JSON document: what FakeClient does with a `json` patch, and how
 * tests check the patches a defaulting webhook answers. (The webhook computes its patches with
 * createPatch, in the runtime; applying one is the API server's job, so only tests need this.)
 */
import { deepCopy } from '../internal/deepcopy.js';
import { deepEqual, type JsonValue } from '../webhook/internal/jsonpatch.js';

/** One operation of RFC 6902: add, remove, replace, move, copy or test. */
export type JsonPatchOperation =
  | { op: 'add' | 'replace' | 'test'; path: string; value: unknown }
  | { op: 'remove'; path: string }
  | { op: 'move' | 'copy'; from: string; path: string };

/** A patch that cannot be applied: a path that does not exist, an index out of range, a failed test. */
export class JsonPatchError extends Error {
  override readonly name = 'JsonPatchError';
}

/**
 * The document with `patch` applied, as a new document (`document` is left as it was). Operations apply
 * in order, each to the result of the one before; the first that cannot apply throws a JsonPatchError.
 */
export function applyJsonPatch<T>(document: T, patch: readonly JsonPatchOperation[]): T {
  let root: unknown = deepCopy(document);
  for (const operation of patch) {
    switch (operation.op) {
      case 'add':
        root = add(root, operation.path, deepCopy(operation.value));
        break;
      case 'remove':
        root = remove(root, operation.path).root;
        break;
      case 'replace':
        root = add(remove(root, operation.path).root, operation.path, deepCopy(operation.value));
        break;
      case 'move': {
        if (operation.path.startsWith(`${operation.from}/`)) {
          throw new JsonPatchError(`JSON patch: cannot move "${operation.from}" into itself`);
        }
        const removed = remove(root, operation.from);
        root = add(removed.root, operation.path, removed.value);
        break;
      }
      case 'copy':
        root = add(root, operation.path, deepCopy(valueAt(root, operation.from)));
        break;
      case 'test':
        if (!deepEqual(valueAt(root, operation.path) as JsonValue, operation.value as JsonValue)) {
          throw new JsonPatchError(`JSON patch: test of "${operation.path}" failed`);
        }
        break;
      default:
        throw new JsonPatchError(`JSON patch: unknown operation ${JSON.stringify(operation)}`);
    }
  }
  return root as T;
}

/** The tokens of a JSON pointer (RFC 6901): `/a~1b/0` is `['a/b', '0']`; `''` is the whole document. */
function tokensOf(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new JsonPatchError(`JSON patch: invalid path "${pointer}"`);
  return pointer
    .slice(1)
    .split('/')
    .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'));
}

type Container = unknown[] | Record<string, unknown>;

function isContainer(value: unknown): value is Container {
  return typeof value === 'object' && value !== null;
}

/** The container holding what `pointer` names, and the last token; the pointer must not be the root. */
function parentOf(root: unknown, pointer: string): { parent: Container; token: string } {
  const tokens = tokensOf(pointer);
  const token = tokens.pop() as string;
  let parent: unknown = root;
  for (const step of tokens) parent = child(parent, step, pointer);
  if (!isContainer(parent)) throw new JsonPatchError(`JSON patch: path "${pointer}" does not exist`);
  return { parent, token };
}

function child(value: unknown, token: string, pointer: string): unknown {
  if (Array.isArray(value)) {
    const index = arrayIndex(token, value.length - 1, pointer);
    return value[index];
  }
  if (isContainer(value) && Object.hasOwn(value, token)) return (value as Record<string, unknown>)[token];
  throw new JsonPatchError(`JSON patch: path "${pointer}" does not exist`);
}

/** An array index: digits without a leading zero, at most `max`. */
function arrayIndex(token: string, max: number, pointer: string): number {
  const index = /^(0|[1-9][0-9]*)$/.test(token) ? Number(token) : NaN;
  if (!(index <= max)) throw new JsonPatchError(`JSON patch: index "${token}" out of range in "${pointer}"`);
  return index;
}

function valueAt(root: unknown, pointer: string): unknown {
  let value = root;
  for (const token of tokensOf(pointer)) value = child(value, token, pointer);
  return value;
}

function add(root: unknown, pointer: string, value: unknown): unknown {
  if (pointer === '') return value;
  const { parent, token } = parentOf(root, pointer);
  if (Array.isArray(parent)) {
    const index = token === '-' ? parent.length : arrayIndex(token, parent.length, pointer);
    parent.splice(index, 0, value);
  } else {
    parent[token] = value;
  }
  return root;
}

function remove(root: unknown, pointer: string): { root: unknown; value: unknown } {
  if (pointer === '') return { root: null, value: root };
  const { parent, token } = parentOf(root, pointer);
  if (Array.isArray(parent)) {
    const index = arrayIndex(token, parent.length - 1, pointer);
    return { root, value: parent.splice(index, 1)[0] };
  }
  if (!Object.hasOwn(parent, token)) throw new JsonPatchError(`JSON patch: path "${pointer}" does not exist`);
  const value = parent[token];
  delete parent[token];
  return { root, value };
}
