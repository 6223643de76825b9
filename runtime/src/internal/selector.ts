/**
 * Label and field selectors matched in memory, as the API server matches them: for reads from the cache
 * and for the FakeClient.
 */
import type { KubernetesObject } from '../types.js';

export type Matcher = (object: KubernetesObject) => boolean;

/**
 * A label selector in the API's text form: `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x,y)`, `a`,
 * `!a`, joined by commas (all must hold). Throws on a term it cannot read.
 */
export function labelMatcher(selector: string | undefined): Matcher {
  if (!selector?.trim()) return () => true;
  const tests = splitTerms(selector).map(labelTerm);
  return (object) => {
    const labels = object.metadata?.labels ?? {};
    return tests.every((test) => test(labels));
  };
}

/** Commas outside parentheses separate terms. */
function splitTerms(selector: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      terms.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(selector.slice(start));
  return terms.map((term) => term.trim()).filter((term) => term !== '');
}

function labelTerm(term: string): (labels: Record<string, string>) => boolean {
  const set = /^(\S+)\s+(in|notin)\s*\(([^)]*)\)$/.exec(term);
  if (set) {
    const [, key = '', op, list = ''] = set;
    const values = new Set(list.split(',').map((v) => v.trim()));
    return op === 'in' ? (l) => key in l && values.has(l[key]!) : (l) => !(key in l) || !values.has(l[key]!);
  }
  const ne = /^([^!=\s]+)\s*!=\s*(\S*)$/.exec(term);
  if (ne) return (l) => l[ne[1]!] !== ne[2];
  const eq = /^([^!=\s]+)\s*==?\s*(\S*)$/.exec(term);
  if (eq) return (l) => l[eq[1]!] === eq[2];
  const absent = /^!\s*([^!=\s]+)$/.exec(term);
  if (absent) return (l) => !(absent[1]! in l);
  if (/^[^!=\s()]+$/.test(term)) return (l) => term in l;
  throw new Error(`cannot parse the label selector term "${term}"`);
}

/**
 * A field selector: `path=value`, `path==value`, `path!=value`, joined by commas, where `path` is a
 * dotted path into the object (`metadata.name`, `status.phase`). An absent field equals `''`.
 */
export function fieldMatcher(selector: string | undefined): Matcher {
  if (!selector?.trim()) return () => true;
  const tests = splitTerms(selector).map((term) => {
    const match = /^([^!=\s]+)\s*(!=|==|=)\s*(\S*)$/.exec(term);
    if (!match) throw new Error(`cannot parse the field selector term "${term}"`);
    const [, path = '', op, value] = match;
    const parts = path.split('.');
    return (object: KubernetesObject) => {
      let current: unknown = object;
      for (const part of parts) current = (current as Record<string, unknown> | undefined)?.[part];
      const equal = String(current ?? '') === value;
      return op === '!=' ? !equal : equal;
    };
  });
  return (object) => tests.every((test) => test(object));
}
