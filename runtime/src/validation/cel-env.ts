/**
 * The CEL environment of CRD validation rules: @marcbachmann/cel-js's standard library with optional types,
 * plus what Kubernetes gives CRD rules (k8s.io/apiserver/pkg/cel/library and the cel-go extensions it
 * turns on): lists (isSorted, sum, min, max, indexOf, lastIndexOf), regex (find, findAll), the extended
 * strings (charAt, replace, strings.quote...), cel-go's list extensions (slice, flatten, sort, distinct...)
 * and two-variable comprehensions, sets, url(), quantity(), ip()/cidr(), format.named() and semver().
 * All of them run: the data manipulations here, the Kubernetes libraries in modules of their own written
 * after their Go sources (urls.ts, quantity.ts, ip.ts, formats.ts, string-format.ts); only
 * transformMapEntry is declared for the type checker and refuses to evaluate (a rule calling it is
 * skipped). One base environment is built per process; RuleTypes registers a run's object types
 * on a clone of it, and gives each shape of `self` an environment of its own.
 */
import { Environment, Optional } from '@marcbachmann/cel-js';
import type { DeclType } from './cel-types.js';
import { defineStandardGaps } from './cel-std.js';
import { re2js } from './re2.js';
import { NAMED_FORMATS, NamedFormat } from './formats.js';
import {
  cidrContainsCIDR,
  cidrContainsIP,
  cidrEqual,
  cidrMasked,
  cidrOf,
  CIDRPrefix,
  cidrString,
  IPAddr,
  ipEqual,
  ipFamily,
  ipIsCanonical,
  ipIsGlobalUnicast,
  ipIsLinkLocalMulticast,
  ipIsLinkLocalUnicast,
  ipIsLoopback,
  ipIsUnspecified,
  isCIDR,
  isIP,
  ipString,
  parseIP,
} from './ip.js';
import {
  addQuantities,
  compareQuantities,
  parseQuantity,
  Quantity,
  quantityAsFloat,
  quantityAsInt64,
  quantityOfInt,
  quantitySign,
  subtractQuantities,
} from './quantity.js';
import { compareSemver, parseSemver, Semver } from './semver.js';
import { format, formatCheckError, type StaticArg } from './string-format.js';
import { GO_ESCAPES } from './values.js';
import {
  isURL,
  ParsedURL,
  parseURL,
  urlEscapedPath,
  urlHost,
  urlHostname,
  urlPort,
  urlQuery,
  urlScheme,
  urlString,
} from './urls.js';

class SetsNamespace {}
class StringsNamespace {}
class FormatNamespace {}
class ListsNamespace {}
class IpNamespace {}

const notLocal = (what: string) => (): never => {
  throw new Error(`${what} is checked, not evaluated, by kubesmith`);
};

const DURATION = 'google.protobuf.Duration';
const TIMESTAMP = 'google.protobuf.Timestamp';
const ORDERED = ['int', 'uint', 'double', 'string', 'bool', 'bytes', DURATION, TIMESTAMP];
const NUMERIC = ['int', 'uint', 'double'];

type CelValue = unknown;

function equal(a: CelValue, b: CelValue): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) &&
      Array.isArray(b) &&
      a.length === b.length &&
      a.every((v, i) => equal(v, b[i] as CelValue))
    );
  }
  const entries = (v: object): [unknown, unknown][] =>
    v instanceof Map ? [...(v as Map<unknown, unknown>).entries()] : Object.entries(v);
  const left = entries(a);
  const right = new Map(entries(b));
  return left.length === right.size && left.every(([k, v]) => right.has(k) && equal(v, right.get(k)));
}

const compare = (a: CelValue, b: CelValue): number =>
  (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;

/** cel-go's strings.quote: Go's escapes, every other character as it is. */
function quote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    // A lone surrogate is no character: U+FFFD, as cel-go writes for invalid UTF-8.
    out += GO_ESCAPES[ch] ?? (cp >= 0xd800 && cp <= 0xdfff ? '\ufffd' : ch);
  }
  return `${out}"`;
}

/** Code points, as CEL strings index them. */
const codePoints = (s: string): string[] => [...s];

function defineLibrary(env: Environment): void {
  const fn = (signature: string, handler: (...args: never[]) => unknown) =>
    env.registerFunction(signature, handler as never);
  // Lists (k8s.io/apiserver/pkg/cel/library/lists.go).
  for (const t of ORDERED) {
    fn(`list<${t}>.isSorted(): bool`, (l: CelValue[]) =>
      l.every((v, i) => i === 0 || compare(l[i - 1], v) <= 0),
    );
    fn(`list<${t}>.min(): ${t}`, (l: CelValue[]) => {
      if (l.length === 0) throw new Error('min called on empty list');
      return l.reduce((a, b) => (compare(b, a) < 0 ? b : a));
    });
    fn(`list<${t}>.max(): ${t}`, (l: CelValue[]) => {
      if (l.length === 0) throw new Error('max called on empty list');
      return l.reduce((a, b) => (compare(b, a) > 0 ? b : a));
    });
  }
  for (const t of NUMERIC) {
    const zero = t === 'double' ? 0 : 0n;
    fn(`list<${t}>.sum(): ${t}`, (l: never[]) =>
      l.reduce((a: never, b: never) => (a + b) as never, zero as never),
    );
  }
  fn('list<A>.indexOf(A): int', (l: CelValue[], v: CelValue) => BigInt(l.findIndex((x) => equal(x, v))));
  fn('list<A>.lastIndexOf(A): int', (l: CelValue[], v: CelValue) => {
    for (let i = l.length - 1; i >= 0; i--) if (equal(l[i], v)) return BigInt(i);
    return -1n;
  });
  // cel-go's ext.Lists.
  fn('list<A>.slice(int, int): list<A>', (l: CelValue[], a: bigint, b: bigint) =>
    l.slice(Number(a), Number(b)),
  );
  fn('list<list<A>>.flatten(): list<A>', (l: CelValue[][]) => l.flat());
  fn('list.flatten(int): list<dyn>', (l: CelValue[], depth: bigint) => l.flat(Number(depth)));
  for (const t of ORDERED) fn(`list<${t}>.sort(): list<${t}>`, (l: CelValue[]) => [...l].sort(compare));
  fn('list<A>.distinct(): list<A>', (l: CelValue[]) =>
    l.filter((v, i) => l.findIndex((x) => equal(x, v)) === i),
  );
  fn('list<A>.reverse(): list<A>', (l: CelValue[]) => [...l].reverse());
  fn('list<A>.first(): optional<A>', (l: CelValue[]) => (l.length ? Optional.of(l[0]) : Optional.none()));
  fn('list<A>.last(): optional<A>', (l: CelValue[]) =>
    l.length ? Optional.of(l[l.length - 1]) : Optional.none(),
  );
  env.registerType('ListsNamespace', ListsNamespace);
  env.registerConstant('lists', 'ListsNamespace', new ListsNamespace());
  fn('ListsNamespace.range(int): list<int>', (_: unknown, n: bigint) =>
    Array.from({ length: Number(n) }, (_v, i) => BigInt(i)),
  );
  // sortBy(x, key): the items, stably sorted by the key each gives (cel-go's @sortByAssociatedKeys).
  env.registerFunction('list.sortBy(ast, ast): list<dyn>', ((call: MacroCall) => {
    const [variable, key] = call.args;
    if (variable?.op !== 'id' || !key) throw new Error('sortBy(x, key) needs a variable name and a key');
    const name = variable.args as string;
    let itemType: CelType | undefined;
    return {
      typeCheck(checker: Checker, _m: unknown, ctx: Scope) {
        const list = checker.check(call.receiver, ctx);
        itemType = list.valueType ?? checker.getType('dyn');
        checker.check(key, ctx.forkWithVariable(name, itemType));
        return list;
      },
      evaluate(ev: Evaluator, _m: unknown, ctx: RunScope) {
        if (!itemType) throw new Error('sortBy() ran before its type check');
        const items = ev.run(call.receiver, ctx) as CelValue[];
        const keyed = items.map((item) => ({
          item,
          key: ev.run(key, ctx.forkWithVariable(name, itemType!).setIterValue(item, ev)) as CelValue,
        }));
        return keyed.sort((a, b) => compare(a.key, b.key)).map((k) => k.item);
      },
    };
  }) as never);
  // Regex (library/regex.go), with RE2 semantics.
  const compile = (pattern: string) => re2js().RE2JS.compile(pattern);
  fn('string.find(string): string', (s: string, p: string) => {
    const m = compile(p).matcher(s);
    return m.find() ? m.group() : '';
  });
  const findAll = (s: string, p: string, limit: number): string[] => {
    const out: string[] = [];
    const m = compile(p).matcher(s);
    while ((limit < 0 || out.length < limit) && m.find()) out.push(m.group() ?? '');
    return out;
  };
  fn('string.findAll(string): list<string>', (s: string, p: string) => findAll(s, p, -1));
  fn('string.findAll(string, int): list<string>', (s: string, p: string, n: bigint) =>
    findAll(s, p, Number(n)),
  );
  // Extended strings (cel-go ext.Strings, the version Kubernetes turns on).
  fn('string.charAt(int): string', (s: string, i: bigint) => {
    const chars = codePoints(s);
    // As cel-go: the index just past the end gives '', one beyond it is an error.
    if (i < 0n || i > BigInt(chars.length)) throw new Error(`index out of range: ${i}`);
    return chars[Number(i)] ?? '';
  });
  fn('string.replace(string, string): string', (s: string, a: string, b: string) => s.replaceAll(a, b));
  fn('string.replace(string, string, int): string', (s: string, a: string, b: string, n: bigint) => {
    let out = s;
    let from = 0;
    for (let i = 0n; n < 0n || i < n; i++) {
      const at = out.indexOf(a, from);
      if (at < 0) break;
      out = out.slice(0, at) + b + out.slice(at + a.length);
      from = at + b.length;
    }
    return out;
  });
  defineStringFormat(env);
  env.registerType('StringsNamespace', StringsNamespace);
  env.registerConstant('strings', 'StringsNamespace', new StringsNamespace());
  fn('StringsNamespace.quote(string): string', (_: unknown, s: string) => quote(s));
  // Sets (cel-go ext.Sets).
  env.registerType('SetsNamespace', SetsNamespace);
  env.registerConstant('sets', 'SetsNamespace', new SetsNamespace());
  const has = (l: CelValue[], v: CelValue) => l.some((x) => equal(x, v));
  fn('SetsNamespace.contains(list<A>, list<A>): bool', (_: unknown, a: CelValue[], b: CelValue[]) =>
    b.every((v) => has(a, v)),
  );
  fn('SetsNamespace.intersects(list<A>, list<A>): bool', (_: unknown, a: CelValue[], b: CelValue[]) =>
    b.some((v) => has(a, v)),
  );
  fn(
    'SetsNamespace.equivalent(list<A>, list<A>): bool',
    (_: unknown, a: CelValue[], b: CelValue[]) => b.every((v) => has(a, v)) && a.every((v) => has(b, v)),
  );
  // URLs (library/urls.go).
  env.registerType('URL', ParsedURL);
  fn('url(string): URL', (s: string) => parseURL(s));
  fn('isURL(string): bool', (s: string) => isURL(s));
  fn('URL.getScheme(): string', urlScheme);
  fn('URL.getHost(): string', urlHost);
  fn('URL.getHostname(): string', urlHostname);
  fn('URL.getPort(): string', urlPort);
  fn('URL.getEscapedPath(): string', urlEscapedPath);
  fn('URL.getQuery(): map<string, list<string>>', urlQuery);
  env.registerOperator('URL == URL', (a: ParsedURL, b: ParsedURL) => urlString(a) === urlString(b));
  // Quantities (library/quantity.go).
  env.registerType('Quantity', Quantity);
  fn('quantity(string): Quantity', (s: string) => {
    const q = parseQuantity(s);
    if (typeof q === 'string') throw new Error(q);
    return q;
  });
  fn('isQuantity(string): bool', (s: string) => typeof parseQuantity(s) !== 'string');
  // Declared as a function, not a method (the library's documentation says otherwise).
  fn('sign(Quantity): int', quantitySign);
  fn('Quantity.isInteger(): bool', (q: Quantity) => quantityAsInt64(q) !== undefined);
  fn('Quantity.asInteger(): int', (q: Quantity) => {
    const v = quantityAsInt64(q);
    if (v === undefined) throw new Error('cannot convert value to integer');
    return v;
  });
  fn('Quantity.asApproximateFloat(): double', quantityAsFloat);
  fn('Quantity.add(Quantity): Quantity', addQuantities);
  fn('Quantity.add(int): Quantity', (q: Quantity, i: bigint) => addQuantities(q, quantityOfInt(i)));
  fn('Quantity.sub(Quantity): Quantity', subtractQuantities);
  fn('Quantity.sub(int): Quantity', (q: Quantity, i: bigint) => subtractQuantities(q, quantityOfInt(i)));
  fn('Quantity.isGreaterThan(Quantity): bool', (a: Quantity, b: Quantity) => compareQuantities(a, b) === 1);
  fn('Quantity.isLessThan(Quantity): bool', (a: Quantity, b: Quantity) => compareQuantities(a, b) === -1);
  fn('Quantity.compareTo(Quantity): int', (a: Quantity, b: Quantity) => BigInt(compareQuantities(a, b)));
  env.registerOperator('Quantity == Quantity', (a: Quantity, b: Quantity) => compareQuantities(a, b) === 0);
  // IP addresses and CIDRs (library/ip.go, library/cidr.go).
  env.registerType('IP', IPAddr);
  env.registerType('CIDR', CIDRPrefix);
  fn('ip(string): IP', parseIP);
  env.registerType('IpNamespace', IpNamespace);
  env.registerConstant('ip', 'IpNamespace', new IpNamespace());
  fn('IpNamespace.isCanonical(string): bool', (_: unknown, s: string) => ipIsCanonical(s));
  fn('isIP(string): bool', isIP);
  fn('string(IP): string', ipString);
  fn('IP.family(): int', ipFamily);
  fn('IP.isUnspecified(): bool', ipIsUnspecified);
  fn('IP.isLoopback(): bool', ipIsLoopback);
  fn('IP.isLinkLocalMulticast(): bool', ipIsLinkLocalMulticast);
  fn('IP.isLinkLocalUnicast(): bool', ipIsLinkLocalUnicast);
  fn('IP.isGlobalUnicast(): bool', ipIsGlobalUnicast);
  env.registerOperator('IP == IP', ipEqual);
  fn('cidr(string): CIDR', cidrOf);
  fn('isCIDR(string): bool', isCIDR);
  fn('string(CIDR): string', cidrString);
  // A string that is not an IP: the library passes its error where an IP belongs, which is no overload.
  fn('CIDR.containsIP(string): bool', (c: CIDRPrefix, s: string) => {
    if (!isIP(s)) throw new Error('no such overload');
    return cidrContainsIP(c, parseIP(s));
  });
  fn('CIDR.containsIP(IP): bool', cidrContainsIP);
  fn('CIDR.containsCIDR(string): bool', (c: CIDRPrefix, s: string) => cidrContainsCIDR(c, cidrOf(s)));
  fn('CIDR.containsCIDR(CIDR): bool', cidrContainsCIDR);
  fn('CIDR.ip(): IP', (c: CIDRPrefix) => c.addr);
  fn('CIDR.masked(): CIDR', cidrMasked);
  fn('CIDR.prefixLength(): int', (c: CIDRPrefix) => BigInt(c.length));
  env.registerOperator('CIDR == CIDR', cidrEqual);
  // Named formats (library/format.go).
  env.registerType('Format', NamedFormat);
  env.registerType('FormatNamespace', FormatNamespace);
  env.registerConstant('format', 'FormatNamespace', new FormatNamespace());
  fn('FormatNamespace.named(string): optional<Format>', (_: unknown, name: string) =>
    Object.hasOwn(NAMED_FORMATS, name) ? Optional.of(NAMED_FORMATS[name]) : Optional.none(),
  );
  for (const [name, format] of Object.entries(NAMED_FORMATS))
    fn(`FormatNamespace.${name}(): Format`, () => format);
  fn('Format.validate(string): optional<list<string>>', (f: NamedFormat, s: string) => {
    const messages = f.validate(s);
    return messages.length === 0 ? Optional.none() : Optional.of(messages);
  });
  defineTwoVariableComprehensions(env);
  defineStandardGaps(env, equal);
  // Semantic versions (library/semverlib.go).
  env.registerType('Semver', Semver);
  const semver = (text: string, normalize = false) => {
    const v = parseSemver(text, normalize);
    if (!v) throw new Error(`could not parse ${JSON.stringify(text)} as semver`);
    return v;
  };
  fn('semver(string): Semver', (s: string) => semver(s));
  fn('semver(string, bool): Semver', (s: string, n: boolean) => semver(s, n));
  fn('isSemver(string): bool', (s: string) => parseSemver(s) !== undefined);
  fn('isSemver(string, bool): bool', (s: string, n: boolean) => parseSemver(s, n) !== undefined);
  for (const m of ['major', 'minor', 'patch'] as const) fn(`Semver.${m}(): int`, (v: Semver) => v[m]);
  fn('Semver.isGreaterThan(Semver): bool', (a: Semver, b: Semver) => compareSemver(a, b) > 0n);
  fn('Semver.isLessThan(Semver): bool', (a: Semver, b: Semver) => compareSemver(a, b) < 0n);
  fn('Semver.compareTo(Semver): int', (a: Semver, b: Semver) => compareSemver(a, b));
  env.registerOperator('Semver == Semver', (a: Semver, b: Semver) => compareSemver(a, b) === 0n);
}

/**
 * `string.format(list)` (cel-go ext.Strings): evaluated by string-format.ts. Its type check is cel-go's:
 * a list or map literal anywhere in the arguments may mix types (ext.Strings exempts `format` from the
 * homogeneous-literal rule), and a constant format string with a list literal is checked clause by
 * clause at compile time, as cel-go's string.format validator does.
 */
function defineStringFormat(env: Environment): void {
  const staticArg = (checker: Checker, node: AstNode, ctx: Scope): StaticArg => {
    const name = checker.check(node, ctx).name ?? 'dyn';
    const base = name.replace(/<.*$/, '');
    const type = base === 'null' ? 'null_type' : base;
    if (node.op === 'list')
      return { type, parts: (node.args as AstNode[]).map((n) => staticArg(checker, n, ctx)) };
    if (node.op === 'map')
      return { type, parts: (node.args as AstNode[][]).flat().map((n) => staticArg(checker, n, ctx)) };
    return { type };
  };
  env.registerFunction('string.format(ast): string', ((call: MacroCall) => {
    const [list] = call.args as unknown as AstNode[];
    return {
      typeCheck(checker: Checker, _m: unknown, ctx: Scope) {
        const text = checker.check(call.receiver, ctx);
        const opts = checker.opts;
        checker.opts = { ...opts, homogeneousAggregateLiterals: false };
        let args: CelType;
        try {
          args = checker.check(list, ctx);
        } finally {
          checker.opts = opts;
        }
        if (text.name !== 'string' && text.kind !== 'dyn')
          throw checker.createError(
            'no_matching_overload',
            `found no matching overload for '${text.name}.format(${args.name})'`,
            call,
          );
        if (args.kind !== 'list' && args.kind !== 'dyn')
          throw checker.createError(
            'no_matching_overload',
            `found no matching overload for 'string.format(${args.name})'`,
            call,
          );
        const receiver = call.receiver as AstNode;
        if (receiver.op === 'value' && typeof receiver.args === 'string' && list?.op === 'list') {
          const problem = formatCheckError(
            receiver.args,
            (list.args as AstNode[]).map((n) => staticArg(checker, n, ctx)),
          );
          if (problem) throw checker.createError('invalid_format', problem, call);
        }
        return checker.getType('string');
      },
      evaluate(ev: Evaluator, _m: unknown, ctx: RunScope) {
        return format(ev.run(call.receiver, ctx) as string, ev.run(list, ctx) as unknown[]);
      },
    };
  }) as never);
}

/** What cel-js hands a macro's type check: its checker, and a scope that can bind a variable. */
interface CelType {
  kind: string;
  name?: string;
  keyType?: CelType;
  valueType?: CelType;
}
interface Checker {
  check(node: unknown, ctx: Scope): CelType;
  opts: object;
  createError(code: string, message: string, node: unknown): Error;
  getType(name: string): CelType;
  registry: { getListType(t: CelType): CelType; getMapType(k: CelType, v: CelType): CelType };
}
interface Scope {
  forkWithVariable(name: string, type: CelType): Scope;
  getVariable(name: string): { type: CelType };
}
/** What cel-js hands a macro's evaluation: its evaluator, and a scope that binds a variable's value. */
interface Evaluator {
  run(node: unknown, ctx: RunScope): unknown;
}
interface RunScope {
  forkWithVariable(name: string, type: CelType): RunScope;
  setIterValue(value: unknown, ev: Evaluator): RunScope;
}
/** Runs a comprehension's body (0: the first after the two variables) for one key (index) and value. */
type Run = (body: number, k: unknown, v: unknown) => unknown;
/** A node of cel-js's syntax tree. */
interface AstNode {
  op: string;
  args: unknown;
}
interface MacroCall {
  args: { op: string; args: unknown }[];
  receiver: unknown;
}

/**
 * cel-go's two-variable comprehensions (ext.TwoVarComprehensions, which Kubernetes gives CRD rules):
 * `all`, `exists`, `existsOne` with (index, value) or (key, value), `transformList`, `transformMap` and
 * `transformMapEntry`. All but `transformMapEntry` are evaluated too.
 */
function defineTwoVariableComprehensions(env: Environment): void {
  const variables = (
    checker: Checker,
    receiver: unknown,
    ctx: Scope,
    first: string,
    second: string,
  ): Scope => {
    const type = checker.check(receiver, ctx);
    const dyn = checker.getType('dyn');
    const key =
      type.kind === 'list' ? checker.getType('int') : type.kind === 'map' ? (type.keyType ?? dyn) : dyn;
    const value = type.kind === 'list' || type.kind === 'map' ? (type.valueType ?? dyn) : dyn;
    return ctx.forkWithVariable(first, key).forkWithVariable(second, value);
  };
  const names = (call: MacroCall): [string, string] => {
    const [a, b] = call.args;
    if (a?.op !== 'id' || b?.op !== 'id') throw new Error('the first two arguments must be variable names');
    return [a.args as string, b.args as string];
  };
  const macro =
    (
      result: (checker: Checker, receiver: CelType, body: CelType[]) => CelType,
      evaluate: (pairs: [unknown, unknown][], run: Run) => unknown,
    ) =>
    (call: MacroCall) => {
      const [first, second] = names(call);
      let types: [CelType, CelType] | undefined;
      return {
        typeCheck(checker: Checker, _m: unknown, ctx: Scope) {
          const inner = variables(checker, call.receiver, ctx, first, second);
          types = [inner.getVariable(first).type, inner.getVariable(second).type];
          const body = call.args.slice(2).map((n) => checker.check(n, inner));
          return result(checker, checker.check(call.receiver, ctx), body);
        },
        evaluate(ev: Evaluator, _m: unknown, ctx: RunScope) {
          if (!types) throw new Error('a two-variable comprehension ran before its type check');
          const [keyType, valueType] = types;
          const receiver = ev.run(call.receiver, ctx);
          const pairs: [unknown, unknown][] = Array.isArray(receiver)
            ? receiver.map((v, i) => [BigInt(i), v])
            : receiver instanceof Map
              ? [...receiver]
              : Object.entries(receiver as object);
          return evaluate(pairs, (body, k, v) => {
            const inner = ctx
              .forkWithVariable(first, keyType)
              .setIterValue(k, ev)
              .forkWithVariable(second, valueType)
              .setIterValue(v, ev);
            return ev.run(call.args[2 + body], inner);
          });
        },
      };
    };
  // As cel-go's all and exists: a false (true) decides, else the first error is the result.
  const quantifier = (decisive: boolean) => (pairs: [unknown, unknown][], run: Run) => {
    let failure: unknown;
    for (const [k, v] of pairs) {
      try {
        if (run(0, k, v) === decisive) return decisive;
      } catch (error) {
        failure ??= error;
      }
    }
    if (failure !== undefined) throw failure;
    return !decisive;
  };
  const bool = (evaluate: (pairs: [unknown, unknown][], run: Run) => unknown) =>
    macro((checker) => checker.getType('bool'), evaluate);
  const quantifiers: Record<string, (pairs: [unknown, unknown][], run: Run) => unknown> = {
    all: quantifier(false),
    exists: quantifier(true),
    existsOne: (pairs, run) => pairs.filter(([k, v]) => run(0, k, v) === true).length === 1,
  };
  for (const [name, evaluate] of Object.entries(quantifiers)) {
    env.registerFunction(`list.${name}(ast, ast, ast): bool`, bool(evaluate) as never);
    env.registerFunction(`map.${name}(ast, ast, ast): bool`, bool(evaluate) as never);
  }
  // transform*(k, v, [filter,] value): the filter is the first body, the value the last.
  const kept = (pairs: [unknown, unknown][], run: Run, filtered: boolean) =>
    filtered ? pairs.filter(([k, v]) => run(0, k, v) === true) : pairs;
  const toList = (filtered: boolean) => (pairs: [unknown, unknown][], run: Run) =>
    kept(pairs, run, filtered).map(([k, v]) => run(filtered ? 1 : 0, k, v));
  const toMap = (filtered: boolean) => (pairs: [unknown, unknown][], run: Run) =>
    new Map(kept(pairs, run, filtered).map(([k, v]) => [k, run(filtered ? 1 : 0, k, v)]));
  const list = (filtered: boolean) =>
    macro((checker, _r, body) => checker.registry.getListType(body[body.length - 1]!), toList(filtered));
  const map = (filtered: boolean) =>
    macro(
      (checker, receiver, body) =>
        checker.registry.getMapType(
          receiver.kind === 'map' ? (receiver.keyType ?? checker.getType('dyn')) : checker.getType('int'),
          body[body.length - 1]!,
        ),
      toMap(filtered),
    );
  for (const receiver of ['list', 'map']) {
    env.registerFunction(`${receiver}.transformList(ast, ast, ast): list<dyn>`, list(false) as never);
    env.registerFunction(`${receiver}.transformList(ast, ast, ast, ast): list<dyn>`, list(true) as never);
    env.registerFunction(`${receiver}.transformMap(ast, ast, ast): map<dyn, dyn>`, map(false) as never);
    env.registerFunction(`${receiver}.transformMap(ast, ast, ast, ast): map<dyn, dyn>`, map(true) as never);
    env.registerFunction(`${receiver}.transformMapEntry(ast, ast, ast): map<dyn, dyn>`, (() => ({
      typeCheck: (checker: Checker) => checker.getType('map'),
      evaluate: notLocal('transformMapEntry'),
    })) as never);
  }
}

const bases = new Map<boolean, Environment>();

/**
 * The environment every run starts from (built once per process and purpose; cloning freezes it).
 * `homogeneousLiterals` is the API server's compile-time rule (a list or map literal holds one type);
 * evaluation turns it off: there `self` is `dyn`, so `[self, [0]]` would look mixed when it is not, and
 * the rule was checked with the real types already.
 */
function baseEnvironment(homogeneousLiterals: boolean): Environment {
  let env = bases.get(homogeneousLiterals);
  if (!env) {
    env = new Environment({ enableOptionalTypes: true, homogeneousAggregateLiterals: homogeneousLiterals });
    defineLibrary(env);
    bases.set(homogeneousLiterals, env);
  }
  return env;
}

/**
 * The declared types of the schema nodes that carry rules, registered once for a whole run: each object
 * type as a named type with all its fields (so that a field the schema lacks is an error), compared by
 * value. Registering a type is the costly step of cel-js, so an object gets its own type only where a
 * rule can reach it: through a field whose name appears in some rule of the run (`names`); a field that
 * no rule names keeps its name but the type `dyn`, which no rule can tell apart.
 */
export class RuleTypes {
  private readonly env: Environment;
  private readonly names = new Map<DeclType, string>();
  private readonly byShape = new Map<string, string>();
  private readonly environments = new Map<string, Environment>();
  /** The fields of each registered object type, by type name. */
  readonly fields = new Map<string, ReadonlyMap<string, string>>();

  /** `forEvaluation`: for rules already type-checked, run against `dyn` (see baseEnvironment). */
  constructor(
    private readonly usedNames: ReadonlySet<string>,
    { forEvaluation = false }: { forEvaluation?: boolean } = {},
  ) {
    this.env = baseEnvironment(!forEvaluation).clone();
  }

  /** The cel-js type name of `t`, registering the object types it reaches. */
  nameOf(t: DeclType): string {
    switch (t.kind) {
      case 'scalar':
        return t.cel;
      case 'dyn':
        return 'dyn';
      case 'list':
        return `list<${this.nameOf(t.elem)}>`;
      case 'map':
        return `map<string, ${this.nameOf(t.elem)}>`;
      case 'object': {
        const known = this.names.get(t);
        if (known) return known;
        const fields = new Map<string, string>();
        for (const [field, type] of t.fields)
          fields.set(field, this.usedNames.has(field) ? this.nameOf(type) : 'dyn');
        // Objects of the same shape (the same type used by several kinds) share one registered type.
        const shape = JSON.stringify([...fields]);
        let name = this.byShape.get(shape);
        if (name === undefined) {
          name = `Object${this.byShape.size}`;
          this.byShape.set(shape, name);
          this.fields.set(name, fields);
          this.env.registerType(name, { fields: Object.fromEntries(fields) });
          this.env.registerOperator(`${name} == ${name}`, equal);
          // An object, as a message in cel-go, may be compared with null.
          // (cel-js registers the reversed operands too.)
          this.env.registerOperator(`${name} == null`, (a: unknown, b: unknown) => a === b);
        }
        this.names.set(t, name);
        return name;
      }
    }
  }

  /**
   * An environment for the rules of one node: `self` and `oldSelf` of its type (an optional of it where
   * the rule sets optionalOldSelf). Call after every node's type was named: cloning freezes the types.
   */
  environment(selfType: string, optionalOldSelf: boolean): Environment {
    // Nodes of the same shape share one: a new environment costs more than checking a rule.
    const key = `${selfType}|${optionalOldSelf}`;
    let env = this.environments.get(key);
    if (!env) {
      env = this.env.clone();
      env.registerVariable('self', selfType);
      env.registerVariable('oldSelf', optionalOldSelf ? `optional<${selfType}>` : selfType);
      this.environments.set(key, env);
    }
    return env;
  }
}

/** Every word of the expressions: a superset of the field names they select. */
export function wordsOf(expressions: Iterable<string>): Set<string> {
  const words = new Set<string>();
  for (const expression of expressions)
    for (const [word] of expression.matchAll(/[A-Za-z_][A-Za-z0-9_]*/g)) words.add(word);
  return words;
}
