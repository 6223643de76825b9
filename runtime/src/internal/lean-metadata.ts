/**
 * What an informer does to each object's metadata before storing it, for the heap's sake (issue 24: a
 * metadata-only cache a fraction of the full one). Measured with heap snapshots on 10,000 metadata-only
 * Widgets, a cached object was, besides its unique strings (name, uid, resourceVersion), made of:
 * - strings every object had a copy of although many objects have the same: JSON.parse shares only
 *   property names and values of up to 10 characters, so each object had its own `creationTimestamp`
 *   (40 bytes; objects made in the same second have the same), its own long label and annotation values,
 *   owner references, finalizers, and a full object its own `apiVersion` when it came from a watch;
 * - a metadata object with part of its properties out of line (a PropertyArray of 40 bytes): the one
 *   `{ managedFields, ...rest }` makes has room in itself for four properties only;
 * - the same apiVersion and kind in a `{ apiVersion, kind, metadata }` wrapper of 48 bytes per object,
 *   and a labels object per object although the objects of one owner (the pods of a ReplicaSet) have
 *   the same labels.
 * StringInterner shares the first through a bounded table; leanMetadata makes the second an object of
 * the shape JSON.parse gives, every property in the object; metadataOnlyStore keeps of a metadata-only
 * object its metadata alone, objects with equal labels sharing one labels object (LabelSets).
 */
import type { KubernetesObject, ObjectMeta } from '../types.js';
import { deepCopy } from './deepcopy.js';

/** Strings longer than this are kept as they are: a long value is seldom repeated, and hashing it costs. */
export const INTERN_MAX_LENGTH = 128;
/**
 * The table starts over when it holds this many strings: at most about 1.4 MiB (its entries, and the
 * strings it alone keeps once their objects are gone, 8,192 of 128 characters at worst).
 */
export const INTERN_MAX_ENTRIES = 8_192;

/**
 * One copy of each string seen (up to INTERN_MAX_LENGTH characters), so that objects holding equal
 * strings hold the same one. Bounded: at INTERN_MAX_ENTRIES strings the table is emptied and fills
 * again with what comes next; strings shared before stay shared in the objects holding them. Strings
 * cannot be changed, so sharing them changes nothing an object's reader can see.
 */
export class StringInterner {
  private readonly table = new Map<string, string>();

  constructor(
    private readonly maxEntries = INTERN_MAX_ENTRIES,
    private readonly maxLength = INTERN_MAX_LENGTH,
  ) {}

  intern<T>(value: T): T {
    if (typeof value !== 'string' || value.length > this.maxLength) return value;
    const known = this.table.get(value);
    if (known !== undefined) return known as T;
    if (this.table.size >= this.maxEntries) this.table.clear();
    this.table.set(value, value);
    return value;
  }

  /** How many strings the table holds (for tests). */
  get size(): number {
    return this.table.size;
  }
}

/** Metadata fields whose string values repeat across objects (the name, uid and resourceVersion do not). */
const SHARED_STRINGS = new Set(['namespace', 'generateName', 'creationTimestamp', 'deletionTimestamp']);

/** The owner reference fields that repeat: siblings have the same owner. */
const OWNER_STRINGS = ['apiVersion', 'kind', 'name', 'uid'] as const;

/**
 * Per list of metadata keys (with managedFields left out), an object of those keys made by JSON.parse:
 * a spread of it is an object of the same shape, every property in the object. Bounded as the interner.
 * The last one used is checked first: the objects of a kind mostly have the same keys, and comparing
 * them costs less than a lookup by a string of them.
 */
const SHAPES_MAX = 256;
const shapes = new Map<string, Record<string, unknown>>();
let lastKeys: readonly string[] = [];
let lastShape: Record<string, unknown> = {};

function shapeOf(source: Record<string, unknown>): Record<string, unknown> {
  let i = 0;
  let same = true;
  for (const key in source) {
    if (key === 'managedFields') continue;
    if (lastKeys[i++] !== key) {
      same = false;
      break;
    }
  }
  if (same && i === lastKeys.length) return lastShape;
  const keys = Object.keys(source).filter((key) => key !== 'managedFields');
  const signature = keys.join('\n');
  let shape = shapes.get(signature);
  if (shape === undefined) {
    if (shapes.size >= SHAPES_MAX) shapes.clear();
    const text = `{${keys.map((key) => `${JSON.stringify(key)}:null`).join(',')}}`;
    shape = JSON.parse(text) as Record<string, unknown>;
    // Each field made to hold any value before any copy is made: a copy whose field then gets a value
    // of another kind (a number where null was) would otherwise move to a new shape, one by one, slowly.
    for (const key of keys) for (const value of [0, 0.5, '', {}, null]) shape[key] = value;
    shapes.set(signature, shape);
  }
  lastKeys = keys;
  lastShape = shape;
  return shape;
}

/**
 * `metadata` as an informer stores it: without managedFields unless `keepManagedFields`, its repeated
 * strings (namespace, generateName, timestamps, label and annotation values, owner references,
 * finalizers) shared through `interner`, its keys in the same order. It must be freshly parsed and
 * nobody else's: its labels, annotations, owner references and finalizers are changed in place, and the
 * metadata itself when it has no managedFields to drop.
 */
export function leanMetadata(
  metadata: ObjectMeta,
  interner: StringInterner,
  keepManagedFields: boolean,
): ObjectMeta {
  const source = metadata as Record<string, unknown>;
  let lean = source;
  if (!keepManagedFields && source['managedFields'] !== undefined) {
    lean = { ...shapeOf(source) };
    for (const key in source) if (key !== 'managedFields') lean[key] = source[key];
  }
  for (const key in lean) {
    const value = lean[key];
    if (SHARED_STRINGS.has(key)) lean[key] = interner.intern(value);
    else if (key === 'labels' || key === 'annotations') internValues(value, interner);
    else if (key === 'finalizers' && Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) value[i] = interner.intern(value[i]);
    } else if (key === 'ownerReferences' && Array.isArray(value)) {
      for (const owner of value) internValues(owner, interner, OWNER_STRINGS);
    }
  }
  return lean as ObjectMeta;
}

/** The string values of `object` (those of `keys` only, when given) shared through `interner`, in place. */
function internValues(object: unknown, interner: StringInterner, keys?: readonly string[]): void {
  if (typeof object !== 'object' || object === null || Array.isArray(object)) return;
  const record = object as Record<string, unknown>;
  if (keys) {
    for (const key of keys) if (typeof record[key] === 'string') record[key] = interner.intern(record[key]);
    return;
  }
  for (const key in record) {
    if (Object.hasOwn(record, key)) record[key] = interner.intern(record[key]);
  }
}

/**
 * How a Reflector keeps its objects: what it stores of one, and the object it gives out (to handlers,
 * get and list) for what it stored.
 */
export interface ObjectStore {
  pack(object: KubernetesObject): unknown;
  unpack(stored: unknown): KubernetesObject;
}

/** The store of a full informer: the objects themselves, given out as they are. */
export const IDENTITY_STORE: ObjectStore = {
  pack: (object) => object,
  unpack: (stored) => stored as KubernetesObject,
};

/** Labels of more than this many characters (as JSON) are kept as they are. */
const LABEL_SET_MAX_LENGTH = 512;
/** The table of label sets starts over at this many: its keys take at most about 1.1 MiB. */
export const LABEL_SETS_MAX_ENTRIES = 2_048;

/**
 * One labels object per distinct set of labels (keys in the same order: the API server writes them
 * sorted), bounded: at `maxEntries` sets the table is emptied and fills again.
 */
export class LabelSets {
  private readonly table = new Map<string, Record<string, string>>();

  constructor(private readonly maxEntries = LABEL_SETS_MAX_ENTRIES) {}

  share(labels: Record<string, string>): Record<string, string> {
    const key = JSON.stringify(labels);
    if (key.length > LABEL_SET_MAX_LENGTH) return labels;
    const known = this.table.get(key);
    if (known !== undefined) return known;
    if (this.table.size >= this.maxEntries) this.table.clear();
    this.table.set(key, labels);
    return labels;
  }

  get size(): number {
    return this.table.size;
  }
}

/**
 * The store of a metadata-only informer of `kind`, whose objects are `{ apiVersion, kind, metadata }` of
 * the kind: it keeps the metadata alone, its labels object shared with the other objects of the same
 * labels (`labelSets`), and gives out a new `{ apiVersion, kind, metadata }`, the metadata a deep copy:
 * as the labels object is shared, an object given out must be nobody else's.
 */
export function metadataOnlyStore(
  kind: { apiVersion: string; kind: string },
  labelSets: LabelSets,
): ObjectStore {
  const { apiVersion } = kind;
  const kindName = kind.kind;
  return {
    pack: (object) => {
      const metadata = object.metadata ?? {};
      if (metadata.labels) metadata.labels = labelSets.share(metadata.labels);
      return metadata;
    },
    unpack: (metadata) => ({ apiVersion, kind: kindName, metadata: deepCopy(metadata as ObjectMeta) }),
  };
}
