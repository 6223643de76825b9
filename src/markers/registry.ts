/**
 * Typed marker definitions that apply themselves (controller-tools' `MakeDefinition` + `ApplyToSchema`):
 * `defineMarker` ties a marker's arguments, the type of its value and its effects together; a registry
 * keyed by target holds them, and parses one raw marker line into a marker (carrying its definition and
 * a value made from that definition's arguments, which is what its effects take) or a diagnostic.
 * Strict: a marker with a known prefix that is unknown, misplaced or ill-typed is an error naming the
 * nearest valid marker.
 */
import type {
  ApiDirectory,
  CrdParts,
  Fail,
  FieldFacts,
  RbacRule,
  SchemaEffect,
  VersionParts,
  WebhookSet,
} from './effects.js';
import { deepFreeze } from '../deep-freeze.js';
import { Cursor, GrammarError, IDENT, parseValue, typeName, type ArgType } from './grammar.js';

/** Where a marker may stand: a file (controller-gen's package), a type declaration, or a property. */
export type Target = 'package' | 'type' | 'field';

export interface ArgSpec<V = unknown> {
  type: ArgType<V>;
  optional?: boolean;
}

/** A required argument or value of type `type`. */
export const required = <V>(type: ArgType<V>): { type: ArgType<V> } => ({ type });
/** An optional argument or value of type `type`. */
export const optional = <V>(type: ArgType<V>): { type: ArgType<V>; optional: true } => ({
  type,
  optional: true,
});

/**
 * What a marker does: to the schema it stands on, to its property, to its API directory, to its kind's
 * CRD or version, to the role, to the webhooks. Each effect receives the marker's value, typed by the
 * definition's arguments (the parser made it from them), and says what does not apply through `fail`.
 * Effects are methods, not function properties, so that a `MarkerDefinition<number>` stands in the
 * registry's list of `MarkerDefinition<unknown>`.
 */
export interface MarkerEffects<V> {
  schema?: SchemaEffect<V>;
  field?: FieldFacts;
  directory?(dir: ApiDirectory, value: V, fail: Fail): void;
  crd?(crd: CrdParts, value: V, fail: Fail): void;
  version?(version: VersionParts, value: V, fail: Fail): void;
  rbac?(rules: RbacRule[], value: V): void;
  webhook?(webhooks: WebhookSet, value: V, fail: Fail): void;
}

export interface MarkerDefinition<V = unknown> extends MarkerEffects<V> {
  /** Without the leading `+`: `kubebuilder:validation:Minimum`. */
  name: string;
  targets: readonly Target[];
  /** Named arguments (`+name:arg=value,arg2=value`). */
  args?: Readonly<Record<string, ArgSpec>>;
  /** The one anonymous value (`+name=value`). Neither args nor value: a flag (`+optional`). */
  value?: ArgSpec;
  /** Accepted and ignored: Go code-generation markers that mean nothing to kubesmith. */
  ignored?: boolean;
  help: string;
}

type SpecValue<S> = S extends { type: ArgType<infer V> } ? V : never;
type IsOptional<S> = S extends { optional: true } ? true : false;
/** The record of named arguments `A` parses to: optional arguments are optional properties. */
type ArgsValue<A> = {
  -readonly [K in keyof A as IsOptional<A[K]> extends true ? never : K]: SpecValue<A[K]>;
} & { -readonly [K in keyof A as IsOptional<A[K]> extends true ? K : never]?: SpecValue<A[K]> };
/** The value of a marker with anonymous value spec `S` or named arguments `A`; a flag's is `true`. */
export type ValueOf<S, A> = [S] extends [ArgSpec]
  ? IsOptional<S> extends true
    ? SpecValue<S> | undefined
    : SpecValue<S>
  : [A] extends [Record<string, ArgSpec>]
    ? ArgsValue<A>
    : true;

/**
 * A marker definition whose effects are typed by its arguments: `value: required(T.number)` gives
 * `apply(schema, value: number)`, `args: { url: required(T.string) }` gives `value.url: string`.
 */
export function defineMarker<
  S extends ArgSpec | undefined = undefined,
  A extends Readonly<Record<string, ArgSpec>> | undefined = undefined,
>(
  definition: {
    name: string;
    targets: readonly Target[];
    value?: S;
    args?: A;
    ignored?: boolean;
    help: string;
  } & MarkerEffects<NoInfer<ValueOf<S, A>>>,
): MarkerDefinition<ValueOf<S, A>> {
  return definition;
}

/** A parsed marker: its definition, its value, and where it stands. */
export interface Marker {
  name: string;
  definition: MarkerDefinition;
  /**
   * The anonymous value, the record of named arguments, or `true` for a flag: parsed from the
   * definition's own arguments, so `definition`'s effects take it (`m.definition.crd?.(crd, m.value)`).
   */
  value: unknown;
  /** The marker text from `+` to the end of the line. */
  raw: string;
  file: string;
  line: number;
  col: number;
}

/** Prefixes kubesmith is strict about; other `+...` lines are left alone (they may be someone else's). */
const KNOWN_PREFIXES: readonly string[] = [
  'kubebuilder:',
  'k8s:',
  'optional',
  'required',
  'listType',
  'listMapKey',
  'mapType',
  'structType',
  'nullable',
  'default',
  'groupName',
  'versionName',
];

function hasKnownPrefix(raw: string): boolean {
  const body = raw.startsWith('+') ? raw.slice(1) : raw;
  return KNOWN_PREFIXES.some((p) => body.startsWith(p));
}

/** controller-gen's split: `+a:b:c=v` is looked up as `a:b:c`, then as `a:b` with `c=v` as arguments. */
export function splitMarker(raw: string): { name: string; anonName: string; rest: string; restAt: number } {
  const body = raw.slice(1);
  const eq = body.indexOf('=');
  if (eq < 0) return { name: body, anonName: body, rest: '', restAt: raw.length };
  const anonName = body.slice(0, eq);
  const colon = anonName.lastIndexOf(':');
  const name = colon >= 0 ? anonName.slice(0, colon) : anonName;
  return { name, anonName, rest: body.slice(eq + 1), restAt: eq + 2 };
}

export type ParseResult =
  | { ok: true; marker: Marker }
  | {
      ok: false;
      code: 'unknown-marker' | 'misplaced-marker' | 'invalid-marker';
      message: string;
      hint?: string;
      offset: number;
    };

const TARGET_WORDS: Record<Target, string> = {
  package: 'anywhere in a file',
  type: 'directly above a type declaration',
  field: 'directly above a property',
};
const MISPLACED_WORDS: Record<Target, string> = {
  package: 'apart from a declaration',
  type: 'on a type declaration',
  field: 'on a property',
};

/** A marker text parsed for a target: its definition and value (frozen: every use shares it), or none. */
type Parsed = { definition: MarkerDefinition; value: unknown } | null;

/** A map for each target. */
const perTarget = <V>(): Record<Target, Map<string, V>> => ({
  package: new Map(),
  type: new Map(),
  field: new Map(),
});

export class MarkerRegistry {
  private readonly byTarget = perTarget<MarkerDefinition>();
  /**
   * Lookups and parses by marker text, per target: an API repeats its markers (the same bounds and
   * patterns on many fields), and a text means the same wherever it stands. Problems are not kept: their
   * messages name the declaration.
   */
  private looked = perTarget<MarkerDefinition | null>();
  private parsed = perTarget<Parsed>();

  define(...definitions: MarkerDefinition[]): this {
    for (const def of definitions) {
      for (const target of def.targets) this.byTarget[target].set(def.name, def);
    }
    // What a text meant may change with the new definitions.
    this.looked = perTarget();
    this.parsed = perTarget();
    return this;
  }

  /** Every definition once, sorted by name. */
  all(): MarkerDefinition[] {
    const seen = new Set<MarkerDefinition>();
    for (const map of Object.values(this.byTarget)) for (const def of map.values()) seen.add(def);
    return [...seen].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  lookup(raw: string, target: Target): MarkerDefinition | undefined {
    const looked = this.looked[target].get(raw);
    if (looked !== undefined) return looked ?? undefined;
    const { name, anonName } = splitMarker(raw);
    const map = this.byTarget[target];
    const def = map.get(anonName) ?? map.get(name);
    this.looked[target].set(raw, def ?? null);
    return def;
  }

  /** The targets a marker would be valid on. */
  targetsOf(raw: string): Target[] {
    return (['package', 'type', 'field'] as const).filter((t) => this.lookup(raw, t) !== undefined);
  }

  /** The registered name nearest to the marker's name, if it is close enough to be a typo. */
  suggest(raw: string): string | undefined {
    return this.nearest(raw)?.name;
  }

  /** The nearest registered name, and which reading of the marker's name (`a:b:c` or `a:b`) it is near. */
  private nearest(raw: string): { name: string; written: string } | undefined {
    const { name, anonName } = splitMarker(raw);
    let best: { name: string; written: string; distance: number } | undefined;
    for (const def of this.all()) {
      for (const candidate of new Set([anonName, name])) {
        const distance = editDistance(candidate.toLowerCase(), def.name.toLowerCase());
        if (best === undefined || distance < best.distance)
          best = { name: def.name, written: candidate, distance };
      }
    }
    if (best === undefined) return undefined;
    const limit = Math.max(2, Math.floor(best.written.length / 4));
    return best.distance <= limit ? best : undefined;
  }

  /**
   * Parses `raw` (from `+` to the end of the line) for `target`. Returns undefined for a marker without a
   * known prefix that no definition matches: it belongs to another tool.
   */
  parse(
    raw: string,
    target: Target,
    where: { file: string; line: number; col: number },
    subject?: string,
  ): ParseResult | undefined {
    let parsed = this.parsed[target].get(raw);
    if (parsed === undefined) {
      const result = this.parseText(raw, target, where, subject);
      if (result?.ok === false) return result;
      parsed = result
        ? { definition: result.marker.definition, value: deepFreeze(result.marker.value) }
        : null;
      this.parsed[target].set(raw, parsed);
    }
    if (parsed === null) return undefined;
    const { definition, value } = parsed;
    return { ok: true, marker: { name: definition.name, definition, value, raw, ...where } };
  }

  private parseText(
    raw: string,
    target: Target,
    where: { file: string; line: number; col: number },
    subject?: string,
  ): ParseResult | undefined {
    // `subject` names the declaration the marker stands on (`OrderSpec.count`), for the messages.
    const on = subject ? ` on ${subject}` : '';
    const def = this.lookup(raw, target);
    if (def === undefined) {
      if (!hasKnownPrefix(raw) && this.targetsOf(raw).length === 0) return undefined;
      const { anonName } = splitMarker(raw);
      const elsewhere = this.targetsOf(raw);
      if (elsewhere.length > 0) {
        const places = elsewhere.map((t) => TARGET_WORDS[t]).join(' or ');
        return {
          ok: false,
          code: 'misplaced-marker',
          message: `marker +${this.lookup(raw, elsewhere[0] ?? 'package')?.name ?? anonName} cannot stand ${MISPLACED_WORDS[target]}${subject ? ` (${subject})` : ''}`,
          hint: `move it ${places}`,
          offset: 0,
        };
      }
      const near = this.nearest(raw);
      return {
        ok: false,
        code: 'unknown-marker',
        message: `unknown marker +${near?.written ?? anonName}${on}`,
        hint: near
          ? `did you mean +${near.name}?`
          : 'see docs/manifests.md for the markers kubesmith supports',
        offset: 0,
      };
    }
    try {
      const value = parseArguments(def, raw);
      return { ok: true, marker: { name: def.name, definition: def, value, raw, ...where } };
    } catch (error) {
      if (!(error instanceof MarkerSyntaxError)) throw error;
      return {
        ok: false,
        code: 'invalid-marker',
        message: `invalid marker +${def.name}${on}: ${error.message}`,
        hint: `usage: ${usage(def)}`,
        offset: error.offset,
      };
    }
  }
}

class MarkerSyntaxError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

/** `+kubebuilder:validation:Minimum=<float>`, `+kubebuilder:rbac:groups=<[]string>,verbs=<[]string>`. */
export function usage(def: MarkerDefinition): string {
  if (def.value) return `+${def.name}=<${typeName(def.value.type)}>`;
  if (def.args) {
    const parts = Object.entries(def.args).map(
      ([arg, spec]) => `${arg}=<${typeName(spec.type)}>${spec.optional ? '?' : ''}`,
    );
    return `+${def.name}:${parts.join(',')}`;
  }
  return `+${def.name}`;
}

/** Parses the arguments of `raw` per `def`; throws MarkerSyntaxError with an offset into `raw`. */
function parseArguments(def: MarkerDefinition, raw: string): unknown {
  const { name, anonName, rest, restAt } = splitMarker(raw);
  const stripComment = (text: string): string => {
    // Declarative-validation markers (k8s:) may end with a `#` comment, as gengo's tag parser allows.
    if (!def.name.startsWith('k8s:')) return text;
    const hash = text.indexOf('#');
    return hash >= 0 ? text.slice(0, hash) : text;
  };
  const wrap = (fn: () => unknown, base: number): unknown => {
    try {
      return fn();
    } catch (error) {
      if (error instanceof GrammarError) throw new MarkerSyntaxError(error.message, base + error.offset);
      throw error;
    }
  };

  if (def.value) {
    const spec = def.value;
    const text = stripComment(rest);
    if (anonName !== def.name) {
      throw new MarkerSyntaxError(`unexpected argument name "${anonName.slice(def.name.length + 1)}"`, 1);
    }
    if (text.trim() === '') {
      if (spec.optional) return undefined;
      throw new MarkerSyntaxError('missing value', restAt);
    }
    return wrap(() => {
      const cur = new Cursor(text);
      const value = parseValue(cur, spec.type);
      if (cur.peek() !== '') throw new GrammarError(`unexpected text ${JSON.stringify(cur.rest())}`, cur.pos);
      return value;
    }, restAt);
  }

  if (!def.args || Object.keys(def.args).length === 0) {
    if (anonName !== def.name || rest.trim() !== '') {
      throw new MarkerSyntaxError(`+${def.name} takes no arguments`, name.length + 1);
    }
    return true;
  }

  // Named arguments: `+name:a=1,b=2` (the first argument's name is glued to the marker name).
  const fieldsAt = anonName.length > def.name.length ? def.name.length + 2 : restAt;
  const fields = anonName.length > def.name.length ? `${anonName.slice(def.name.length + 1)}=${rest}` : rest;
  const args = def.args;
  const out: Record<string, unknown> = {};
  wrap(() => {
    const cur = new Cursor(fields);
    while (cur.peek() !== '') {
      const argStart = cur.pos;
      const argName = cur.match(IDENT);
      if (argName === undefined)
        throw new GrammarError(`expected an argument name, got ${cur.describeNext()}`, cur.pos);
      const spec = args[argName];
      if (spec === undefined) {
        const known = Object.keys(args);
        const near = known.find((k) => editDistance(k.toLowerCase(), argName.toLowerCase()) <= 2);
        throw new GrammarError(
          `unknown argument "${argName}"${near ? ` (did you mean "${near}"?)` : ''}; known: ${known.join(', ')}`,
          argStart,
        );
      }
      cur.expect('=', `"=" after ${argName}`);
      if (argName in out) throw new GrammarError(`argument "${argName}" given twice`, argStart);
      out[argName] = parseValue(cur, spec.type);
      if (cur.peek() === '') break;
      cur.expect(',', 'a comma between arguments');
    }
    return out;
  }, fieldsAt);
  const missing = Object.entries(args)
    .filter(([arg, spec]) => !spec.optional && !(arg in out))
    .map(([arg]) => arg);
  if (missing.length > 0) {
    throw new MarkerSyntaxError(`missing argument${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`, 0);
  }
  return out;
}

/** Levenshtein distance. */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      cur[j] = Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
    }
    prev = cur;
  }
  return prev[b.length] ?? 0;
}
