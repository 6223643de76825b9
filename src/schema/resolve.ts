/**
 * What a type is by name: a known type (KNOWN_TYPES, keyed by `module#Export`, recognised by the package
 * its declaration belongs to, never by a path), a branded integer alias, or a declaration of the project.
 * Names are read from the written type where there is one: the checker erases aliases of primitives
 * (`type int32 = number` has no alias symbol), so only the written name keeps them.
 */
import { ts } from '../typescript/compiler.cjs';
import { isLibFile } from '../typescript/lib-subset.js';
import { packageNameFinder, type ReadFile } from './origin.js';
import { BRAND_PROPERTIES, BRANDS, clientNodeSchema, KNOWN_TYPES } from './known.js';
import type { Reporter } from './report.js';
import type { JSONSchemaProps } from './types.js';

export type Decl =
  ts.InterfaceDeclaration | ts.TypeAliasDeclaration | ts.ClassDeclaration | ts.EnumDeclaration;

const CLIENT_NODE = '@kubernetes/client-node';
const RUNTIME = '@kubesmith/runtime';

export function declName(decl: Decl): string {
  return decl.name?.text ?? 'default';
}

export function isDeclaration(node: ts.Node): node is Decl {
  return (
    ts.isInterfaceDeclaration(node) ||
    ts.isTypeAliasDeclaration(node) ||
    ts.isClassDeclaration(node) ||
    ts.isEnumDeclaration(node)
  );
}

/**
 * The schema of a branded integer (`number & { readonly __kubesmithType?: 'int32' }`, the runtime's int32
 * and int64), or undefined for any other type. The mapper maps a brand by it, and lib-subset.ts lets the
 * smaller library serve for exactly the intersections it maps.
 */
export function brandSchema(checker: ts.TypeChecker, type: ts.Type): JSONSchemaProps | undefined {
  if (!type.isIntersection()) return undefined;
  for (const name of BRAND_PROPERTIES) {
    const prop = type.getProperty(name);
    if (!prop) continue;
    const propType = checker.getNonNullableType(checker.getTypeOfSymbol(prop));
    if (propType.isStringLiteral()) return BRANDS[propType.value]?.();
  }
  return undefined;
}

/** The name a written type refers to (`Foo`, `k8s.Foo`, `extends Foo`), with its type arguments. */
export function referenceOf(
  node: ts.TypeNode,
): { name: ts.EntityName | ts.Expression; typeArguments: readonly ts.TypeNode[] } | undefined {
  if (ts.isTypeReferenceNode(node)) return { name: node.typeName, typeArguments: node.typeArguments ?? [] };
  if (ts.isExpressionWithTypeArguments(node))
    return { name: node.expression, typeArguments: node.typeArguments ?? [] };
  return undefined;
}

export class Resolver {
  private readonly packageNameOf: (fileName: string) => string | undefined;
  /**
   * The checker's symbol of each name asked about. The checker resolves a name again on every question,
   * and a written type's name is asked about two or three times (known type? declaration? library type?):
   * at 200 kinds, 6,200 questions about 3,600 names.
   */
  private readonly symbols = new Map<ts.Node, ts.Symbol | undefined>();

  constructor(
    private readonly checker: ts.TypeChecker,
    private readonly reporter: Reporter,
    readFile: ReadFile,
  ) {
    this.packageNameOf = packageNameFinder(readFile);
  }

  /** A known type (int32, Time, Condition...) by the module a written name is imported from. */
  knownByName(nameNode: ts.Node): JSONSchemaProps | undefined {
    const id = ts.isQualifiedName(nameNode)
      ? nameNode.right
      : ts.isPropertyAccessExpression(nameNode)
        ? nameNode.name
        : nameNode;
    let symbol = this.symbolAt(id);
    if (ts.isQualifiedName(nameNode) && ts.isIdentifier(nameNode.left)) {
      // `k8s.V1PodTemplateSpec` with `import * as k8s from '...'`: look at the namespace import.
      const left = this.symbolAt(nameNode.left);
      const leftDecl = left?.declarations?.[0];
      if (leftDecl && ts.isNamespaceImport(leftDecl)) symbol = left;
    }
    for (let depth = 0; symbol && depth < 10; depth++) {
      const decl = symbol.declarations?.[0];
      let origin: { module: string; exported: string } | undefined;
      if (decl && ts.isImportSpecifier(decl)) {
        origin = {
          module: (decl.parent.parent.parent.moduleSpecifier as ts.StringLiteral).text,
          exported: (decl.propertyName ?? decl.name).text,
        };
      } else if (decl && ts.isNamespaceImport(decl) && ts.isQualifiedName(nameNode)) {
        origin = {
          module: (decl.parent.parent.moduleSpecifier as ts.StringLiteral).text,
          exported: id.getText(),
        };
      }
      if (origin) {
        const known = this.moduleSchema(origin.module, origin.exported, nameNode);
        if (known) return known;
      }
      if (!(symbol.flags & ts.SymbolFlags.Alias)) {
        // Declared, not imported (re-exported through the project's own modules, or used inside the
        // runtime's declarations): the package the declaration's file belongs to says what it is.
        const pkg = decl && this.packageNameOf(decl.getSourceFile().fileName);
        if (pkg === RUNTIME || pkg === CLIENT_NODE) return this.moduleSchema(pkg, symbol.name, nameNode);
        if (symbol.name === 'Date' && decl && isLibFile(decl.getSourceFile()))
          return KNOWN_TYPES['#Date']?.();
        return undefined;
      }
      symbol = this.checker.getImmediateAliasedSymbol(symbol);
    }
    return undefined;
  }

  /**
   * A known type by the declaration of a computed type (a type argument, a mapped property): the runtime's
   * and client-node's named types, and `Date`.
   */
  knownByType(type: ts.Type, at: ts.Node): JSONSchemaProps | undefined {
    const symbol = type.aliasSymbol ?? type.getSymbol();
    const decl = symbol?.declarations?.find(isDeclaration);
    if (!symbol || !decl) return undefined;
    if (ts.isTypeAliasDeclaration(decl) && (decl.typeParameters || type.aliasTypeArguments)) return undefined;
    const sf = decl.getSourceFile();
    if (symbol.name === 'Date' && isLibFile(sf)) return KNOWN_TYPES['#Date']?.();
    const pkg = this.packageNameOf(sf.fileName);
    if (pkg === RUNTIME || pkg === CLIENT_NODE) return this.moduleSchema(pkg, symbol.name, at);
    return undefined;
  }

  /** `number & { readonly __kubesmithType?: 'int32' }`: the branded integer aliases of @kubesmith/runtime. */
  brandOf(type: ts.Type): JSONSchemaProps | undefined {
    return brandSchema(this.checker, type);
  }

  /** The interface, type alias, class or enum a written name refers to (a library's too). */
  declarationOf(nameNode: ts.Node): Decl | undefined {
    let symbol = this.symbolAt(ts.isQualifiedName(nameNode) ? nameNode.right : nameNode);
    if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = this.checker.getAliasedSymbol(symbol);
    return symbol?.declarations?.find(isDeclaration);
  }

  /** The name of the TypeScript library type a written name refers to (`Array`, `Record`...), if it does. */
  libraryName(nameNode: ts.Node): string | undefined {
    const decl = this.declarationOf(nameNode);
    return decl && isLibFile(decl.getSourceFile()) ? decl.name?.text : undefined;
  }

  /** The project's own interface, class, type alias or enum a computed type was declared as, if any. */
  declarationOfType(type: ts.Type): Decl | undefined {
    const symbol = type.aliasSymbol ?? type.getSymbol();
    const decl = symbol?.declarations?.find(isDeclaration);
    if (!decl || isLibFile(decl.getSourceFile()) || decl.getSourceFile().isDeclarationFile) return undefined;
    return decl;
  }

  private symbolAt(node: ts.Node): ts.Symbol | undefined {
    if (this.symbols.has(node)) return this.symbols.get(node);
    const symbol = this.checker.getSymbolAtLocation(node);
    this.symbols.set(node, symbol);
    return symbol;
  }

  /** The fixed schema of `exported` from `module`, if it is a known type; client-node types must be. */
  private moduleSchema(module: string, exported: string, at: ts.Node): JSONSchemaProps | undefined {
    const known = KNOWN_TYPES[`${module}#${exported}`];
    if (known) return known();
    if (module !== CLIENT_NODE) return undefined;
    // The client-node declarations lose formats, enums and int-or-string: never read them.
    const schema = clientNodeSchema(exported);
    if (schema) return schema;
    this.reporter.at(
      at,
      'unknown-k8s-type',
      `no schema data for ${exported} from ${CLIENT_NODE}`,
      'add the type to test/fixtures/k8s-types/go (the catalog) and regenerate src/schema/k8s-types.data.ts (docs/manifests.md)',
    );
    return { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  }
}
