/**
 * A lower bound of the cost the API server estimates for a CRD rule (cel-go's checker.Cost with the
 * Kubernetes size estimator and library costs): 1 per variable, field selection, index and ordinary call;
 * a comprehension (all, exists, exists_one, map, filter) costs its body times the most elements its list
 * or map can hold (maxItems, maxProperties, else what a 3 MiB request can hold); regular expressions
 * (matches, find, findAll) cost a tenth of the string's largest size times a quarter of the pattern's, and
 * the other string functions that walk their string (lowerAscii, upperAscii, trim, substring, replace,
 * split) a tenth of its size, and so does `+` of strings or lists. What this does not know costs
 * nothing, so the estimate never exceeds the server's: a rule found over budget here is over budget there.
 */
import type { ASTNode } from '@marcbachmann/cel-js';
import type { DeclType } from '#validation/cel-types.js';

/** The API server's budget of one rule's estimated cost (times the times it can run). */
export const STATIC_ESTIMATED_COST_LIMIT = 10_000_000;
/** The API server's budget of all the rules of one CRD version's schema. */
export const STATIC_ESTIMATED_CRD_COST_LIMIT = 100_000_000;

const TRAVERSAL = 0.1;
const REGEX_LENGTH = 0.25;
const MACROS = new Set(['all', 'exists', 'exists_one', 'map', 'filter']);
/** Comprehensions with an index or key and a value (cel-go's two-variable comprehensions). */
const TWO_VARIABLE = new Set([
  'all',
  'exists',
  'existsOne',
  'transformList',
  'transformMap',
  'transformMapEntry',
]);
const REGEX = new Set(['matches', 'find', 'findAll']);
const WALKS_STRING = new Set(['lowerAscii', 'upperAscii', 'trim', 'substring', 'replace', 'split']);

/** Something whose missing bound makes a rule expensive: a list, map or string without a maximum. */
export interface Unbounded {
  /** Its path from the rule's node (`self.spec.items`). */
  path: string;
  /** The marker that would bound it. */
  marker: 'MaxItems' | 'MaxProperties' | 'MaxLength';
}

export interface CostEstimate {
  cost: number;
  /** The unbounded lists, maps and strings the estimate grew with, in the order met. */
  unbounded: Unbounded[];
  /** A string() conversion or a validate() list whose result the estimate had to walk: no marker bounds it. */
  unsizedConversion?: true;
}

/**
 * The size cel-go gives a value it cannot bound (math.MaxUint64): the result of string(), whose size it
 * takes from no schema (only bytes to string keeps the size of the bytes). Walking it, as `'x' +
 * string(self)` does, costs more than any budget: the API server refuses such a rule or messageExpression.
 */
const UNKNOWN_SIZE = Number.MAX_SAFE_INTEGER;

interface Value {
  cost: number;
  /** The declared type the value has, where it comes from the schema. */
  decl?: DeclType;
  /** The most elements (characters, items) it can have, where known. */
  size?: number;
}

/** The estimated cost of a checked rule whose `self` (and `oldSelf`) has the type `root`. */
export function estimateCost(ast: ASTNode, root: DeclType, rootPath: string): CostEstimate {
  const paths = new Map<DeclType, string>();
  const unbounded: Unbounded[] = [];
  const note = (decl: DeclType): void => {
    const path = paths.get(decl);
    if (path === undefined || unbounded.some((u) => u.path === path)) return;
    const s = decl.schema;
    if (decl.kind === 'list' && s.maxItems === undefined) unbounded.push({ path, marker: 'MaxItems' });
    else if (decl.kind === 'map' && s.maxProperties === undefined)
      unbounded.push({ path, marker: 'MaxProperties' });
    else if (decl.kind === 'scalar' && s.maxLength === undefined && !s.enum)
      unbounded.push({ path, marker: 'MaxLength' });
  };
  const withPath = (decl: DeclType | undefined, path: string): DeclType | undefined => {
    if (decl && !paths.has(decl)) paths.set(decl, path);
    return decl;
  };
  withPath(root, rootPath);
  const sizeOf = (v: Value): number => v.size ?? (v.decl ? v.decl.maxElements : 0);

  const visit = (node: ASTNode, scope: ReadonlyMap<string, DeclType | undefined>): Value => {
    switch (node.op) {
      case 'value':
        return {
          cost: 0,
          ...(typeof node.args === 'string' ? { size: node.args.length } : {}),
          ...(node.args instanceof Uint8Array ? { size: node.args.length } : {}),
        };
      case 'id': {
        const decl = scope.get(node.args);
        return { cost: 1, ...(decl ? { decl } : {}) };
      }
      case '.':
      case '.?': {
        const operand = visit(node.args[0], scope);
        const parent = operand.decl;
        const field = parent?.kind === 'object' ? parent.fields.get(node.args[1]) : undefined;
        const decl = withPath(field, `${paths.get(parent!) ?? ''}.${node.args[1]}`);
        return { cost: operand.cost + 1, ...(decl ? { decl } : {}) };
      }
      case '[]':
      case '[?]': {
        const operand = visit(node.args[0], scope);
        const index = visit(node.args[1], scope);
        const parent = operand.decl;
        const elem = parent?.kind === 'list' || parent?.kind === 'map' ? parent.elem : undefined;
        const decl = withPath(elem, `${paths.get(parent!) ?? ''}[]`);
        return { cost: operand.cost + index.cost + 1, ...(decl ? { decl } : {}) };
      }
      case 'list': {
        const items = node.args.map((n) => visit(n, scope));
        return { cost: items.reduce((a, v) => a + v.cost, 0), size: items.length };
      }
      case 'map':
        return { cost: node.args.reduce((a, [k, v]) => a + visit(k, scope).cost + visit(v, scope).cost, 0) };
      case '?:': {
        const [cond, then, otherwise] = node.args.map((n) => visit(n, scope)) as [Value, Value, Value];
        return { cost: cond.cost + Math.max(then.cost, otherwise.cost) };
      }
      case '&&':
      case '||':
        return { cost: visit(node.args[0], scope).cost + visit(node.args[1], scope).cost };
      case '!_':
      case '-_':
        return { cost: visit(node.args, scope).cost + 1 };
      case 'call': {
        const [name, args] = node.args;
        if (name === 'has') return { cost: args.reduce((a, n) => a + visit(n, scope).cost, 0) };
        const values = args.map((n) => visit(n, scope));
        const cost = values.reduce((a, v) => a + v.cost, 0) + 1;
        if (name === 'string' && values.length === 1) {
          const arg = values[0]!;
          const bytes = arg.decl?.kind === 'scalar' && arg.decl.cel === 'bytes';
          return { cost, size: bytes ? sizeOf(arg) : UNKNOWN_SIZE };
        }
        return { cost };
      }
      case 'rcall':
        return visitMethod(node.args[0], node.args[1], node.args[2], scope);
      default: {
        // A binary operator; `+` of strings or lists walks both (a tenth of their sizes).
        const [leftNode, rightNode] = node.args as [ASTNode, ASTNode];
        const left = visit(leftNode, scope);
        const right = visit(rightNode, scope);
        const sized = (v: Value) =>
          v.size !== undefined ||
          v.decl?.kind === 'list' ||
          (v.decl?.kind === 'scalar' && (v.decl.cel === 'string' || v.decl.cel === 'bytes'));
        if (node.op === '+' && (sized(left) || sized(right))) {
          const size = sizeOf(left) + sizeOf(right);
          for (const v of [left, right]) if (v.decl?.kind === 'scalar') note(v.decl);
          return { cost: left.cost + right.cost + Math.ceil(size * TRAVERSAL), size };
        }
        return { cost: left.cost + right.cost + 1 };
      }
    }
  };

  const visitMethod = (
    name: string,
    receiverNode: ASTNode,
    argNodes: ASTNode[],
    scope: ReadonlyMap<string, DeclType | undefined>,
  ): Value => {
    const receiver = visit(receiverNode, scope);
    const variable = argNodes[0];
    const second = argNodes[1];
    const twoVariables =
      TWO_VARIABLE.has(name) && argNodes.length >= 3 && second?.op === 'id' && variable?.op === 'id';
    if ((MACROS.has(name) || twoVariables) && variable?.op === 'id' && argNodes.length >= 2) {
      const range = receiver.decl;
      const iterations = sizeOf(receiver);
      if (range && (range.kind === 'list' || range.kind === 'map')) note(range);
      // A list's variable is an item, a map's a key (whose size is not known here); with two variables,
      // the second is the item or the value.
      const elem = withPath(
        range?.kind === 'list' || range?.kind === 'map' ? range.elem : undefined,
        `${paths.get(range!) ?? ''}[]`,
      );
      const inner = new Map(scope);
      if (twoVariables) inner.set(variable.args as string, undefined).set(second.args as string, elem);
      else inner.set(variable.args as string, range?.kind === 'list' ? elem : undefined);
      const body = argNodes.slice(twoVariables ? 2 : 1).reduce((a, n) => a + visit(n, inner).cost, 0);
      return {
        cost: receiver.cost + iterations * Math.max(body, 1),
        ...(name === 'filter' && range ? { decl: range } : {}),
        ...(name === 'map' || name.startsWith('transform') ? { size: iterations } : {}),
      };
    }
    const args = argNodes.map((n) => visit(n, scope));
    const argCost = args.reduce((a, v) => a + v.cost, 0);
    let own = 1;
    if (REGEX.has(name) && args[0]) {
      own = Math.ceil(sizeOf(receiver) * TRAVERSAL) * Math.ceil(sizeOf(args[0]) * REGEX_LENGTH);
      if (receiver.decl) note(receiver.decl);
    } else if (WALKS_STRING.has(name) && receiver.decl?.kind === 'scalar' && receiver.decl.cel === 'string') {
      own = Math.max(1, Math.ceil(sizeOf(receiver) * TRAVERSAL));
      note(receiver.decl);
    }
    // A list whose size cel-go cannot bound (format's validate() returns one, optional) stays unbounded
    // through orValue()/value(), and join() walks it: over any budget, as the API server finds.
    if (name === 'join' && receiver.size === UNKNOWN_SIZE) own = Math.ceil(UNKNOWN_SIZE * TRAVERSAL);
    const size =
      name === 'validate' ? UNKNOWN_SIZE : name === 'orValue' || name === 'value' ? receiver.size : undefined;
    return { cost: receiver.cost + argCost + own, ...(size !== undefined ? { size } : {}) };
  };

  const scope = new Map<string, DeclType | undefined>([
    ['self', root],
    ['oldSelf', root],
  ]);
  const { cost } = visit(ast, scope);
  return { cost, unbounded, ...(cost >= UNKNOWN_SIZE * TRAVERSAL ? { unsizedConversion: true } : {}) };
}
