/**
 * The object the generated tests of an imported kind create: apiVersion, kind and metadata, plus every
 * field the CRD's schema requires, each with the simplest value its schema plainly accepts (a default, the
 * first of an enum, `'example'`, the minimum, `false`, `{}`, `[]`). Where a schema says more than this can
 * be sure to meet (a pattern, a format, a CEL rule, `oneOf`...), the object is incomplete: the tests that
 * send it to the API server are scaffolded skipped, with a TODO naming the field.
 */
type Schema = Record<string, unknown>;

const isObject = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface ExternalSample {
  /** The fields besides apiVersion, kind and metadata. */
  fields: Record<string, unknown>;
  /** The first field kubesmith could not fill in for certain, as a path; undefined when none. */
  unsure: string | undefined;
}

export function externalSample(schema: unknown): ExternalSample {
  let unsure: string | undefined;
  const giveUp = (path: string): undefined => {
    unsure ??= path;
    return undefined;
  };
  const valueOf = (s: unknown, path: string): unknown => {
    if (!isObject(s)) return giveUp(path);
    if (s['default'] !== undefined) return s['default'];
    if (Array.isArray(s['enum']) && s['enum'].length > 0) return s['enum'][0];
    for (const key of ['x-kubernetes-validations', 'allOf', 'anyOf', 'oneOf', 'not', 'pattern', 'format'])
      if (s[key] !== undefined) return giveUp(path);
    if (s['x-kubernetes-int-or-string'] === true) return numberOf(s, path);
    switch (s['type']) {
      case 'string': {
        const value = 'example';
        const min = s['minLength'];
        const max = s['maxLength'];
        if (
          (typeof min === 'number' && min > value.length) ||
          (typeof max === 'number' && max < value.length)
        )
          return giveUp(path);
        return value;
      }
      case 'integer':
      case 'number':
        return numberOf(s, path);
      case 'boolean':
        return false;
      case 'array':
        return typeof s['minItems'] === 'number' && s['minItems'] > 0 ? giveUp(path) : [];
      case 'object':
      case undefined:
        return objectOf(s, path);
      default:
        return giveUp(path);
    }
  };
  const numberOf = (s: Schema, path: string): unknown => {
    const min = s['minimum'];
    const max = s['maximum'];
    let value = typeof min === 'number' ? (s['exclusiveMinimum'] === true ? min + 1 : min) : 0;
    if (typeof max === 'number' && (value > max || (value === max && s['exclusiveMaximum'] === true))) {
      if (typeof min === 'number') return giveUp(path);
      value = s['exclusiveMaximum'] === true ? max - 1 : max;
    }
    if (typeof s['multipleOf'] === 'number' && value % s['multipleOf'] !== 0) return giveUp(path);
    return value;
  };
  const objectOf = (s: Schema, path: string, skip: readonly string[] = []): Record<string, unknown> => {
    const object: Record<string, unknown> = {};
    const properties = isObject(s['properties']) ? s['properties'] : {};
    const required = Array.isArray(s['required']) ? s['required'].filter((r) => typeof r === 'string') : [];
    for (const name of required) {
      if (skip.includes(name)) continue;
      const value = valueOf(properties[name], `${path}.${name}`);
      if (value !== undefined) object[name] = value;
    }
    const minProperties = s['minProperties'];
    if (typeof minProperties === 'number' && Object.keys(object).length < minProperties) giveUp(path);
    return object;
  };
  if (!isObject(schema)) return { fields: {}, unsure: undefined };
  for (const key of ['x-kubernetes-validations', 'allOf', 'anyOf', 'oneOf', 'not'])
    if (schema[key] !== undefined) giveUp('');
  const fields = objectOf(schema, '', ['apiVersion', 'kind', 'metadata']);
  return { fields, unsure: unsure === '' ? '.' : unsure };
}
