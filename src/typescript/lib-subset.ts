/**
 * A smaller `lib.es5.d.ts` for the generator's program, and when it may serve.
 *
 * ES5's library is the biggest file a generator run parses and binds (about 35 ms of a 0.42 s cold run
 * at 50 kinds), and most of it is methods: `String.prototype.slice`, `Array.prototype.map`...
 * API types hold data, and what the generator asks of the checker (the declared properties of the
 * project's types, what a written name refers to) never reaches those methods, save in a few ways a
 * file's syntax shows. So the program is first built with the library less its interfaces' methods and
 * call and construct signatures (`subsetLibText`); every name it declares is still declared, with every
 * property and index signature. If a file of the program could observe a member it lacks (`libBlocker`),
 * the program is built again with the full library, reusing the parsed and bound project files.
 *
 * What could observe one, and so blocks the subset:
 * - a type operator that reads the members of any type: `keyof`, `T[K]`, `typeof x`, a conditional type
 *   (assignability), `infer`, a mapped type;
 * - a reference to a library type other than Array, ReadonlyArray, Record and Date (an `Error` field, an
 *   interface that extends `Error`), or to Partial, Required, Readonly, Pick and Omit over anything but a
 *   type literal or a project interface or class without type parameters (`Omit<string, 'x'>` lists
 *   String's members);
 * - an intersection that is not a known brand (int32) nor of type literals and project interfaces and
 *   classes (`string & { tag?: 'x' }` is an object with String's members);
 * - a class property, parameter or accessor whose type is inferred from an expression;
 * - a global or module augmentation, and a JavaScript file.
 * `lib-subset.test.ts` checks each against a program with the full library, and every fixture of
 * test/fixtures generates the same output with either.
 */
import { ts } from './compiler.cjs';

/** The library file this module makes smaller. */
export const SUBSET_LIB = 'lib.es5.d.ts';

/** Library types a project file may name without blocking the subset (the mapper knows each by name). */
const FREE = new Set(['Array', 'ReadonlyArray', 'Record', 'Date']);
/** Mapped-type aliases that only copy the properties of their first argument. */
const MAPPING = new Set(['Partial', 'Required', 'Readonly', 'Pick', 'Omit']);
// Read once: the bundle's `ts.SyntaxKind` is a getter, and the walk below switches on every node's kind.
const Kind = ts.SyntaxKind;
const GLOBAL_AUGMENTATION = ts.NodeFlags.GlobalAugmentation;
/** Per node kind: 1 when `blocker` has something to say about it, 2 when its subtree holds no type. */
const WALK = new Uint8Array(Kind.Count);
for (const kind of [
  Kind.TypeQuery,
  Kind.IndexedAccessType,
  Kind.ConditionalType,
  Kind.InferType,
  Kind.MappedType,
  Kind.TypeOperator,
  Kind.TypeReference,
  Kind.ExpressionWithTypeArguments,
  Kind.IntersectionType,
  Kind.PropertyDeclaration,
  Kind.GetAccessor,
  Kind.Parameter,
  Kind.ModuleDeclaration,
])
  WALK[kind] = 1;
for (const kind of [Kind.ImportDeclaration, Kind.ExportDeclaration, Kind.Identifier, Kind.StringLiteral])
  WALK[kind] = 2;

/**
 * `lib.es5.d.ts` (or any declaration file) without the method, call and construct signatures of its
 * interfaces, at any depth (`declare namespace Intl` too). Everything else stays as written, the
 * `/// <reference lib>` lines included.
 */
export function subsetLibText(text: string): string {
  const sf = ts.createSourceFile(SUBSET_LIB, text, ts.ScriptTarget.Latest, false);
  const cuts: [number, number][] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isInterfaceDeclaration(node)) {
      for (const member of node.members) {
        if (
          ts.isMethodSignature(member) ||
          ts.isCallSignatureDeclaration(member) ||
          ts.isConstructSignatureDeclaration(member)
        )
          cuts.push([member.pos, member.end]);
      }
      return;
    }
    if (ts.isModuleDeclaration(node) || ts.isModuleBlock(node)) ts.forEachChild(node, visit);
  };
  sf.statements.forEach(visit);
  let out = '';
  let at = 0;
  for (const [pos, end] of cuts) {
    out += text.slice(at, pos);
    at = end;
  }
  return out + text.slice(at);
}

/**
 * Whether a file is one of TypeScript's own libraries (lib.es5.d.ts...): each of them says
 * `/// <reference no-default-lib="true"/>`. Not by its name: a project's own lib.calendar.d.ts is the
 * project's.
 */
export function isLibFile(sf: ts.SourceFile): boolean {
  return sf.hasNoDefaultLib;
}

/**
 * Whether an intersection type is one the schema mapper maps as a brand (the runtime's int32), without
 * reading its members: the schema layer's answer (src/schema/resolve.ts), handed down by whoever builds
 * the program.
 */
export type IsBrand = (checker: ts.TypeChecker, type: ts.Type) => boolean;

/**
 * Why the program's files need the full library, as `file:line: what`, or undefined when the subset
 * serves. `program` must have been built with the subset library.
 */
export function libBlocker(program: ts.Program, isBrandType: IsBrand): string | undefined {
  const checker = program.getTypeChecker();
  // The names the library declares at its top level: a project reference to any other name cannot reach it.
  const libNames = new Set<string>();
  for (const sf of program.getSourceFiles()) {
    if (!isLibFile(sf)) continue;
    for (const stmt of sf.statements) {
      if (ts.isVariableStatement(stmt)) {
        for (const d of stmt.declarationList.declarations)
          if (ts.isIdentifier(d.name)) libNames.add(d.name.text);
      } else if (
        (ts.isInterfaceDeclaration(stmt) ||
          ts.isTypeAliasDeclaration(stmt) ||
          ts.isFunctionDeclaration(stmt) ||
          ts.isClassDeclaration(stmt) ||
          ts.isModuleDeclaration(stmt)) &&
        stmt.name &&
        ts.isIdentifier(stmt.name)
      ) {
        libNames.add(stmt.name.text);
      }
    }
  }

  /** The declarations a written name refers to, aliases followed; undefined when it refers to nothing. */
  const declarationsOf = (name: ts.Node): readonly ts.Declaration[] | undefined => {
    let symbol = checker.getSymbolAtLocation(name);
    if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
    return symbol?.declarations;
  };
  const inLib = (decls: readonly ts.Declaration[]) => decls.some((d) => isLibFile(d.getSourceFile()));
  /**
   * A type literal, a project interface or class without type parameters, or a mapping alias over one
   * (`Required<Pick<Spec, 'a'>>`): its properties are written ones.
   */
  const isProjectObject = (node: ts.TypeNode): boolean => {
    if (ts.isTypeLiteralNode(node)) return true;
    if (!ts.isTypeReferenceNode(node)) return false;
    const decls = declarationsOf(node.typeName);
    if (decls === undefined || decls.length === 0) return false;
    if (inLib(decls)) {
      const [first] = node.typeArguments ?? [];
      return (
        ts.isIdentifier(node.typeName) && MAPPING.has(node.typeName.text) && !!first && isProjectObject(first)
      );
    }
    return (
      !node.typeArguments &&
      decls.every((d) => (ts.isInterfaceDeclaration(d) || ts.isClassDeclaration(d)) && !d.typeParameters)
    );
  };
  // The intersections the mapper maps as a brand, by the same function: their members are not read.
  const isBrand = (node: ts.IntersectionTypeNode): boolean =>
    isBrandType(checker, checker.getTypeFromTypeNode(node));
  /** What in `node` could read a member the subset lacks, or undefined. */
  const reference = (
    name: ts.EntityName | ts.Expression,
    args: readonly ts.TypeNode[],
  ): string | undefined => {
    let left: ts.Node = name;
    while (ts.isQualifiedName(left) || ts.isPropertyAccessExpression(left))
      left = ts.isQualifiedName(left) ? left.left : left.expression;
    if (!ts.isIdentifier(left) || !libNames.has(left.text)) return undefined;
    const decls = declarationsOf(ts.isQualifiedName(name) ? name.right : name);
    if (decls === undefined || decls.length === 0) return `${left.text} does not resolve`;
    if (!inLib(decls)) return undefined; // the project's own type of that name
    const libName = left.text;
    if (FREE.has(libName) && name === left) return undefined;
    if (MAPPING.has(libName) && name === left && args[0] && isProjectObject(args[0])) return undefined;
    return `the library type ${libName}`;
  };
  const blocker = (node: ts.Node): string | undefined => {
    switch (node.kind) {
      case Kind.TypeQuery:
        return '`typeof` in a type';
      case Kind.IndexedAccessType:
        return 'an indexed access type';
      case Kind.ConditionalType:
        return 'a conditional type';
      case Kind.InferType:
        return '`infer`';
      case Kind.MappedType:
        return 'a mapped type';
      case Kind.TypeOperator:
        return (node as ts.TypeOperatorNode).operator === Kind.KeyOfKeyword ? '`keyof`' : undefined;
      case Kind.TypeReference: {
        const ref = node as ts.TypeReferenceNode;
        return reference(ref.typeName, ref.typeArguments ?? []);
      }
      case Kind.ExpressionWithTypeArguments: {
        const ref = node as ts.ExpressionWithTypeArguments;
        return reference(ref.expression, ref.typeArguments ?? []);
      }
      case Kind.IntersectionType: {
        const types = (node as ts.IntersectionTypeNode).types;
        if (types.every(isProjectObject) || isBrand(node as ts.IntersectionTypeNode)) return undefined;
        return 'an intersection with a type other than an object literal or a project interface';
      }
      case Kind.PropertyDeclaration:
      case Kind.GetAccessor:
        return (node as ts.PropertyDeclaration).type === undefined && ts.isClassLike(node.parent)
          ? 'a class member whose type is inferred'
          : undefined;
      case Kind.Parameter:
        return (node as ts.ParameterDeclaration).type === undefined &&
          ts.isConstructorDeclaration(node.parent)
          ? 'a constructor parameter whose type is inferred'
          : undefined;
      case Kind.ModuleDeclaration:
        return ts.isStringLiteral((node as ts.ModuleDeclaration).name) ||
          (node.flags & GLOBAL_AUGMENTATION) !== 0
          ? 'a module or global augmentation'
          : undefined;
      default:
        return undefined;
    }
  };

  for (const sf of program.getSourceFiles()) {
    if (isLibFile(sf)) continue;
    if (/\.[cm]?jsx?$/.test(sf.fileName)) return `${sf.fileName}: a JavaScript file`;
    let found: string | undefined;
    const visit = (node: ts.Node): void => {
      const walk = WALK[node.kind];
      if (found || walk === 2) return;
      const why = walk === 1 ? blocker(node) : undefined;
      if (why) {
        const { line } = sf.getLineAndCharacterOfPosition(node.getStart(sf));
        found = `${sf.fileName}:${line + 1}: ${why}`;
        return;
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
    if (found) return found;
  }
  return undefined;
}
