/**
 * Applies the schema effects of a node's markers (schema/markers.ts) to its schema, in controller-gen's
 * priority order; `items:` variants apply to the array's items afterwards, then the checks that need the
 * finished schema (a default against its field). Where the schema (or its items) is a named type's, the
 * use's markers combine with the type's own (combine.ts) instead of overwriting them. Only the schema's
 * top-level object is the caller's: its children (items, rules) may be a cached type's, shared by every
 * use, so they are replaced by changed copies, never changed in place.
 */
import type { SchemaEffect } from '../markers/effects.js';
import type { Marker } from '../markers/index.js';
import { combineUse, useShape } from './combine.js';
import { RULE_ORIGIN, withRuleOrigin, type JSONSchemaProps } from './types.js';

/** Reports a marker that cannot apply; `message` says why, `hint` how to fix it. */
export type MarkerProblem = (marker: Marker, message: string, hint?: string) => void;

interface Entry {
  marker: Marker;
  effect: SchemaEffect<unknown>;
}

const withArticle = (word: string) => `${/^[aeiou]/.test(word) ? 'an' : 'a'} ${word}`;
const typeOf = (s: JSONSchemaProps) =>
  s.type ?? (s['x-kubernetes-int-or-string'] ? 'int-or-string' : 'untyped');
const hasSchemaEffect = (marker: Marker) => marker.definition.schema !== undefined;
const byPriority = (a: Entry, b: Entry) => (a.effect.priority ?? 10) - (b.effect.priority ?? 10);

/** Applies the schema markers among `markers` to `schema`. `what` names it in messages. */
export function applyMarkers(
  schema: JSONSchemaProps,
  markers: readonly Marker[],
  what: string,
  problem: MarkerProblem,
  isNamed: (schema: JSONSchemaProps) => boolean = () => false,
): void {
  // Most properties have no schema marker (or none at all): then nothing below has anything to do.
  if (!markers.some(hasSchemaEffect)) return;
  const direct: Entry[] = [];
  const items: Entry[] = [];
  for (const marker of markers) {
    const effect = marker.definition.schema;
    if (effect) (effect.items ? items : direct).push({ marker, effect });
  }
  const failFor = (marker: Marker) => (message: string, hint?: string) =>
    problem(marker, `+${marker.name} on ${what}: ${message}`, hint);
  /** Runs `entries` on `target`, or on the shape of a use of a named type, then combined with it. */
  const runAll = (target: JSONSchemaProps, entries: Entry[], named: boolean) => {
    const on = named ? useShape(target) : target;
    let typeSetter: Marker | undefined;
    for (const { marker, effect } of entries) {
      const type = on.type;
      effect.apply(on, marker.value, failFor(marker));
      if (on.type !== type) typeSetter ??= marker;
      // The rules a marker adds remember it, so that compiling them later can point at it.
      const rules = on['x-kubernetes-validations'];
      if (rules?.some((rule) => rule[RULE_ORIGIN] === undefined)) {
        const origin = { file: marker.file, line: marker.line, col: marker.col, raw: marker.raw };
        on['x-kubernetes-validations'] = rules.map((rule) => withRuleOrigin(rule, origin));
      }
    }
    if (!named) return;
    const conflict = combineUse(target, on);
    const culprit = typeSetter ?? entries[0]?.marker;
    if (conflict && culprit)
      problem(culprit, `+${culprit.name} on ${what}: ${conflict}`, 'remove the marker');
  };
  runAll(schema, direct.sort(byPriority), direct.length > 0 && isNamed(schema));
  if (items.length > 0) {
    if (schema.type !== 'array' || schema.items === undefined) {
      for (const { marker } of items)
        failFor(marker)(`items markers apply to arrays, not to ${withArticle(typeOf(schema))}`);
    } else {
      // The items of a named array type are that type's too. They may be a cached type's: changed on a copy.
      const named = isNamed(schema.items) || isNamed(schema);
      schema.items = { ...schema.items };
      runAll(schema.items, items.sort(byPriority), named);
    }
  }
  // Checks of the finished schema, once each (+default and +kubebuilder:default share one).
  const checked: SchemaEffect<unknown>['check'][] = [];
  for (const { marker, effect } of direct) {
    if (!effect.check || checked.includes(effect.check)) continue;
    checked.push(effect.check);
    effect.check(schema, marker.value, failFor(marker));
  }
}
