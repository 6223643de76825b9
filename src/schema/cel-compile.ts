/**
 * Compiles every CEL rule of a CRD version's schema as the API server does when the CRD is created
 * (k8s.io/apiextensions-apiserver: the rule parses and type-checks against `self` and `oldSelf` of the
 * node's declared type, yields a bool, its messageExpression a string; `oldSelf` only where the value can
 * be correlated with the stored one; optionalOldSelf only with `oldSelf`; the estimated cost, times the
 * times the rule can run, within the per-rule budget, and all rules within the per-CRD one). Loaded only
 * when a CRD has rules: the CEL implementation is not part of a cold start without them.
 */
import type { ASTNode } from '@marcbachmann/cel-js';
import { RuleTypes, wordsOf } from '#validation/cel-env.js';
import { declType, unboundedCardinality, type DeclType } from '#validation/cel-types.js';
import {
  estimateCost,
  STATIC_ESTIMATED_COST_LIMIT,
  STATIC_ESTIMATED_CRD_COST_LIMIT,
  type Unbounded,
} from './cel-cost.js';
import type { JSONSchemaProps, ValidationRule } from './types.js';

export { STATIC_ESTIMATED_COST_LIMIT, STATIC_ESTIMATED_CRD_COST_LIMIT };

export interface RuleProblem {
  rule: ValidationRule;
  /** The schema path of the node the rule stands on (`.spec.ports[]`; `` for the root). */
  path: string;
  /** Which part of the rule is wrong. */
  part: 'rule' | 'messageExpression' | 'optionalOldSelf' | 'fieldPath';
  message: string;
  hint: string;
  /** Where in the expression (0-based), when the problem is at a character of it. */
  offset?: number;
  /** A cost over budget (rather than a rule that does not compile). */
  cost?: true;
}

const CEL_HINT = 'fix the CEL expression (https://kubernetes.io/docs/reference/using-api/cel/)';
/** The API server cannot bound the size of string()'s result, so a rule may compare it but not walk it. */
const UNSIZED_HINT =
  "the API server cannot bound the size of string()'s result, nor of the list a format's validate() returns: compare it (string(self.x) == '1', validate(self).hasValue()), or give the text in message rather than messageExpression";

interface Context {
  /** The product of the maxItems/maxProperties above, or undefined where one of them is missing. */
  cardinality: number | undefined;
  /** The innermost list above whose items the API server cannot correlate with the stored object's. */
  uncorrelatable: string | undefined;
}

interface Checked {
  ast: ASTNode;
  type: string | undefined;
  /** A field selection cel-js let through that cel-go refuses (unknownFieldIn). */
  unknownField: ASTNode | undefined;
  usesOldSelf: boolean;
}

type CelEnvironment = ReturnType<RuleTypes['environment']>;

/** The first line of a cel-js error, without its source excerpt, in cel-go's words where they differ. */
const firstLine = (message: string): string =>
  message
    .split('\n')[0]!
    .trim()
    .replace(/^No such key: (.*)$/, "undefined field '$1'");

const typeName = (node: ASTNode): string | undefined =>
  (node as unknown as { checkedType?: { name?: string } }).checkedType?.name;

/** Every node under `node`, depth first. */
function nodesOf(node: ASTNode, out: ASTNode[] = []): ASTNode[] {
  out.push(node);
  const args: unknown = node.args;
  const children = Array.isArray(args) ? args.flat(2) : [args];
  for (const child of children)
    if (child && typeof child === 'object' && 'op' in child) nodesOf(child as ASTNode, out);
  return out;
}

/**
 * A field selection cel-js leaves unchecked and cel-go refuses: `has(self.x)` and `self.?x` of a field the
 * object type lacks.
 */
function unknownFieldIn(ast: ASTNode, types: RuleTypes): ASTNode | undefined {
  for (const node of nodesOf(ast)) {
    if (node.op === 'call' && node.args[0] === 'has') {
      let arg = node.args[1][0];
      const chain: ASTNode[] = [];
      while (arg && (arg.op === '.' || arg.op === '.?')) {
        chain.unshift(arg);
        arg = arg.args[0];
      }
      let type = arg ? typeName(arg) : undefined;
      for (const step of chain) {
        const fields = type === undefined ? undefined : types.fields.get(type);
        const name = (step.args as [ASTNode, string])[1];
        if (fields && !fields.has(name)) return step;
        type = fields?.get(name);
      }
    }
    if (node.op === '.?') {
      const type = typeName(node.args[0]);
      const fields = type === undefined ? undefined : types.fields.get(type);
      if (fields && !fields.has(node.args[1])) return node;
    }
  }
  return undefined;
}

type CheckResult = Checked | { error: Error } | { unknown: true };

/**
 * What cel-js refuses and cel-go, so the API server, accepts: kubesmith cannot tell whether such an
 * expression compiles, so it accepts it (the API server judges). `has(self.items[0].name)`: cel-go's
 * has() takes a field selection on any expression, cel-js's only on a name or a selection (Gateway API's
 * HTTPRoute has such rules).
 */
const LIBRARY_GAPS: readonly RegExp[] = [/^has\(\) invalid argument/];
const beyondLibrary = (failure: Error): boolean => LIBRARY_GAPS.some((gap) => gap.test(failure.message));

/**
 * Checks of expressions already met, by the environment's self type and the text: the same rule on many
 * kinds (`self == oldSelf`) is parsed and checked once.
 */
const checkCache = new WeakMap<CelEnvironment, Map<string, CheckResult>>();

function check(env: CelEnvironment, expression: string, types: RuleTypes): CheckResult {
  let byText = checkCache.get(env);
  if (!byText) checkCache.set(env, (byText = new Map()));
  let result = byText.get(expression);
  if (!result) byText.set(expression, (result = checkOnce(env, expression, types)));
  return result;
}

function checkOnce(env: CelEnvironment, expression: string, types: RuleTypes): CheckResult {
  try {
    const parsed = env.parse(expression);
    const result = parsed.check();
    if (!result.valid) {
      const failure = result.error ?? new Error('does not type-check');
      return beyondLibrary(failure) ? { unknown: true } : { error: failure };
    }
    // cel-js knows cel.bind; the API server does not give CRD rules cel-go's bindings extension.
    const bind = nodesOf(parsed.ast).find(
      (n) => n.op === 'rcall' && n.args[0] === 'bind' && n.args[1].op === 'id' && n.args[1].args === 'cel',
    );
    if (bind)
      return { error: Object.assign(new Error("undeclared reference to 'cel'"), { range: bind.range }) };
    return {
      ast: parsed.ast,
      type: result.type,
      unknownField: unknownFieldIn(parsed.ast, types),
      usesOldSelf: usesOldSelf(parsed.ast),
    };
  } catch (error) {
    const failure = error instanceof Error ? error : new Error(String(error));
    return beyondLibrary(failure) ? { unknown: true } : { error: failure };
  }
}

const offsetOf = (error: Error): number | undefined => {
  const e = error as { range?: { start: number }; node?: { pos?: number } };
  return e.range?.start ?? e.node?.pos;
};

const usesOldSelf = (ast: ASTNode): boolean =>
  nodesOf(ast).some((node) => node.op === 'id' && node.args === 'oldSelf');

/**
 * Why a rule's fieldPath does not name a field under the node, as the API server reads it (`.name` and
 * `['key']` steps through properties and map values); undefined where it does, or where kubesmith cannot
 * tell (list indexes, text it does not parse).
 */
function fieldPathProblem(node: JSONSchemaProps, fieldPath: string): string | undefined {
  const steps = /^(?:\.[^.[\]]+|\['(?:[^'\\]|\\.)*'\])+$/.test(fieldPath)
    ? [...fieldPath.matchAll(/\.([^.[\]]+)|\['((?:[^'\\]|\\.)*)'\]/g)].map((m) => m[1] ?? m[2]!)
    : undefined;
  if (!steps) return undefined;
  let at: JSONSchemaProps | undefined = node;
  for (const step of steps) {
    if (!at) return undefined;
    if (at.properties && Object.keys(at.properties).length > 0) {
      at = at.properties[step];
      if (!at) return `fieldPath ${fieldPath} does not refer to a valid field (no ${step})`;
    } else if (typeof at.additionalProperties === 'object') {
      at = at.additionalProperties;
    } else if (at.type !== undefined && at.type !== 'object') {
      return `fieldPath ${fieldPath} does not refer to a valid field (${step} is under a ${at.type})`;
    } else {
      return undefined;
    }
  }
  return undefined;
}

/** A schema node that carries rules, with what compiling them needs. */
interface RuleNode {
  schema: JSONSchemaProps;
  path: string;
  /** Its declared type; undefined where the API server exposes none. */
  decl: DeclType | undefined;
  ctx: Context;
}

/**
 * The nodes of one version's schema that carry rules, each with its declared type as the API server
 * derives it for the node (only there: most of a schema has no rules, and its types are not needed).
 */
function ruleNodes(root: JSONSchemaProps): RuleNode[] {
  const out: RuleNode[] = [];
  const visit = (s: JSONSchemaProps, path: string, isRoot: boolean, ctx: Context): void => {
    if ((s['x-kubernetes-validations'] ?? []).length > 0) {
      const decl = declType(s, isRoot || s['x-kubernetes-embedded-resource'] === true);
      out.push({ schema: s, path, decl, ctx });
    }
    const times = (n: number | undefined): number | undefined =>
      ctx.cardinality === undefined || n === undefined ? undefined : ctx.cardinality * Math.max(0, n);
    for (const [name, child] of Object.entries(s.properties ?? {})) {
      if (isRoot && name === 'metadata') continue;
      visit(child, `${path}.${name}`, false, ctx);
    }
    if (s.items) {
      visit(s.items, `${path}[]`, false, {
        cardinality: times(s.maxItems),
        uncorrelatable:
          s['x-kubernetes-list-type'] === 'map' ? ctx.uncorrelatable : (ctx.uncorrelatable ?? path),
      });
    }
    if (typeof s.additionalProperties === 'object') {
      visit(s.additionalProperties, `${path}[*]`, false, { ...ctx, cardinality: times(s.maxProperties) });
    }
  };
  visit(root, '', true, { cardinality: 1, uncorrelatable: undefined });
  return out;
}

const unboundedText = (list: readonly Unbounded[]): string =>
  list.map((u) => `${u.path} (+kubebuilder:validation:${u.marker})`).join(', ');

function costMessage(what: string, cost: number, limit: number): string {
  const factor = cost / limit;
  const times = factor > 100 ? 'more than 100x' : `${factor.toFixed(1)}x`;
  return `${what} exceeds the API server's budget by a factor of ${times}`;
}

/** The problems of every rule of one CRD version's schema (root: its openAPIV3Schema). */
export function compileRules(root: JSONSchemaProps): RuleProblem[] {
  return compileAll([root])[0]!;
}

/**
 * The problems of the rules of several CRD versions' schemas, one list each. Their types are registered
 * together, once: the costly part of the compilation.
 */
export function compileAll(roots: readonly JSONSchemaProps[]): RuleProblem[][] {
  const nodes = roots.map(ruleNodes);
  const words = wordsOf(
    nodes
      .flat()
      .flatMap((n) =>
        (n.schema['x-kubernetes-validations'] ?? []).flatMap((r) => [r.rule, r.messageExpression ?? '']),
      ),
  );
  const types = new RuleTypes(words);
  const selfTypes = nodes.map((list) => list.map((n) => (n.decl ? types.nameOf(n.decl) : undefined)));
  return nodes.map((list, i) => compileVersion(list, selfTypes[i]!, types));
}

function compileVersion(
  nodes: readonly RuleNode[],
  selfTypes: readonly (string | undefined)[],
  types: RuleTypes,
): RuleProblem[] {
  const problems: RuleProblem[] = [];
  let total = 0;
  let costliest: { rule: ValidationRule; path: string; unbounded: Unbounded[] } | undefined;
  let costliestCost = -1;

  nodes.forEach(({ schema: s, path, decl, ctx }, index) => {
    const rules = s['x-kubernetes-validations'] ?? [];
    const where = path === '' ? 'the root' : path;
    const selfType = selfTypes[index];
    if (!decl || selfType === undefined) {
      for (const rule of rules)
        problems.push({
          rule,
          path,
          part: 'rule',
          message: `${where} has no type CEL rules can see (it has none, or preserves unknown fields without one), so the API server refuses rules on it`,
          hint: 'move the rule to a typed field or to the object that holds this one',
        });
      return;
    }
    const cardinality = ctx.cardinality ?? unboundedCardinality(decl);
    for (const rule of rules) {
      if (rule.rule.trim() === '') continue;
      const env = types.environment(selfType, rule.optionalOldSelf === true);
      const badPath = rule.fieldPath === undefined ? undefined : fieldPathProblem(s, rule.fieldPath);
      if (badPath)
        problems.push({
          rule,
          path,
          part: 'fieldPath',
          message: `rule on ${where}: ${badPath}`,
          hint: `name a field under ${where} (.field, or ['key'] for a map), as JSON names it`,
        });
      const checked = check(env, rule.rule, types);
      // Beyond what cel-js can check (LIBRARY_GAPS): neither refused nor costed here.
      if ('unknown' in checked) continue;
      if ('error' in checked) {
        const offset = offsetOf(checked.error);
        problems.push({
          rule,
          path,
          part: 'rule',
          message: `rule on ${where} does not compile: ${firstLine(checked.error.message)}`,
          hint: CEL_HINT,
          ...(offset !== undefined ? { offset } : {}),
        });
        continue;
      }
      const unknown = checked.unknownField;
      if (unknown) {
        problems.push({
          rule,
          path,
          part: 'rule',
          message: `rule on ${where} does not compile: undefined field '${(unknown.args as [ASTNode, string])[1]}'`,
          hint: CEL_HINT,
          offset: unknown.range.start,
        });
        continue;
      }
      if (checked.type !== 'bool' && checked.type !== 'dyn') {
        problems.push({
          rule,
          path,
          part: 'rule',
          message: `rule on ${where} yields ${checked.type ?? 'no value'}, not a bool`,
          hint: 'a rule must evaluate to true or false',
        });
        continue;
      }
      const oldSelf = checked.usesOldSelf;
      if (oldSelf && ctx.uncorrelatable !== undefined) {
        problems.push({
          rule,
          path,
          part: 'rule',
          message: `rule on ${where} uses oldSelf, which the API server cannot correlate within the list ${ctx.uncorrelatable}`,
          hint: `make ${ctx.uncorrelatable} a map list (+listType=map with +listMapKey), or move the rule above the list`,
        });
      } else if (!oldSelf && rule.optionalOldSelf !== undefined) {
        problems.push({
          rule,
          path,
          part: 'optionalOldSelf',
          message: `rule on ${where} sets optionalOldSelf but does not use oldSelf`,
          hint: 'drop optionalOldSelf, or use oldSelf in the rule',
        });
      }
      const estimate = estimateCost(checked.ast, decl, path);
      const cost = estimate.cost * cardinality;
      if (cost > STATIC_ESTIMATED_COST_LIMIT) {
        const bounds =
          estimate.unbounded.length > 0
            ? `bound ${unboundedText(estimate.unbounded)}`
            : estimate.unsizedConversion
              ? UNSIZED_HINT
              : 'simplify the rule, or bound the lists, maps and strings it walks';
        problems.push({
          rule,
          path,
          part: 'rule',
          cost: true,
          message: `${costMessage(`the estimated cost of the rule on ${where}`, cost, STATIC_ESTIMATED_COST_LIMIT)} (${STATIC_ESTIMATED_COST_LIMIT} per rule)`,
          hint:
            ctx.cardinality === undefined && estimate.unbounded.length === 0
              ? `the rule runs for each of up to ${cardinality} values: bound the lists and maps above ${where} with +kubebuilder:validation:MaxItems/MaxProperties`
              : bounds,
        });
      }
      total += cost;
      if (cost > costliestCost) {
        costliestCost = cost;
        costliest = { rule, path, unbounded: estimate.unbounded };
      }
      if (rule.messageExpression !== undefined && rule.messageExpression.trim() !== '') {
        const message = check(env, rule.messageExpression, types);
        if ('unknown' in message) {
          // Beyond what cel-js can check (LIBRARY_GAPS).
        } else if ('error' in message) {
          const offset = offsetOf(message.error);
          problems.push({
            rule,
            path,
            part: 'messageExpression',
            message: `messageExpression on ${where} does not compile: ${firstLine(message.error.message)}`,
            hint: CEL_HINT,
            ...(offset !== undefined ? { offset } : {}),
          });
        } else if (message.type !== 'string' && message.type !== 'dyn') {
          problems.push({
            rule,
            path,
            part: 'messageExpression',
            message: `messageExpression on ${where} yields ${message.type ?? 'no value'}, not a string`,
            hint: "make the messageExpression a string, e.g. self.name + ' is taken' (not 'x' + string(self): the API server finds its cost over budget)",
          });
        } else {
          // Like the rule, times the times it can run.
          const estimate = estimateCost(message.ast, decl, path);
          const messageCost = estimate.cost * cardinality;
          total += messageCost;
          if (messageCost > STATIC_ESTIMATED_COST_LIMIT) {
            problems.push({
              rule,
              path,
              part: 'messageExpression',
              cost: true,
              message: `${costMessage(`the estimated cost of the messageExpression on ${where}`, messageCost, STATIC_ESTIMATED_COST_LIMIT)} (${STATIC_ESTIMATED_COST_LIMIT} per expression)`,
              hint:
                estimate.unbounded.length > 0
                  ? `bound ${unboundedText(estimate.unbounded)}`
                  : estimate.unsizedConversion
                    ? UNSIZED_HINT
                    : 'simplify the messageExpression',
            });
          }
        }
      }
    }
  });

  // The per-CRD budget, when no rule is over its own (that error already says what to bound).
  if (total > STATIC_ESTIMATED_CRD_COST_LIMIT && costliest && !problems.some((p) => p.cost)) {
    problems.push({
      rule: costliest.rule,
      path: costliest.path,
      part: 'rule',
      cost: true,
      message: `${costMessage('the estimated cost of all the rules of the schema', total, STATIC_ESTIMATED_CRD_COST_LIMIT)} (${STATIC_ESTIMATED_CRD_COST_LIMIT} per CRD version); this rule costs the most`,
      hint:
        costliest.unbounded.length > 0
          ? `bound ${unboundedText(costliest.unbounded)}`
          : 'bound the lists and maps the rules stand under or walk, with +kubebuilder:validation:MaxItems/MaxProperties',
    });
  }
  return problems;
}
