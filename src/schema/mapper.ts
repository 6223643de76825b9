/**
 * The type mapper: one TypeScript type -> one structural OpenAPI v3 schema (DESIGN §4). It maps the
 * checker's type, and consults the written type node where there is one for what the checker loses:
 * alias names (`int32`, a project's `type Name = string`), which resolve to known types or to cached
 * declarations, and the source order of unions. Each construct (`any`, functions, tuples, unions, arrays,
 * `Date`, recursion...) is handled here once, whether it was written or computed (a generic's type
 * argument, a property of `Partial<T>`). Objects are built from their properties in objects.ts.
 */
import { ts } from '../typescript/compiler.cjs';
import { applyMarkers } from './apply.js';
import type { MarkerIndex } from '../markers/marker-index.js';
import { computedObjectSchema, declaredObjectSchema, intersectionSchema } from './objects.js';
import type { Reporter } from './report.js';
import { isLibFile } from '../typescript/lib-subset.js';
import { declName, isDeclaration, referenceOf, type Decl, type Resolver } from './resolve.js';
import type { JSONSchemaProps } from './types.js';
import { unionSchema } from './unions.js';

/** What to map: a type, and where it was written if it was. */
export interface Subject {
  type: ts.Type;
  /** The written type, when there is one: it keeps the names and the order the checker loses. */
  node?: ts.TypeNode;
  /** Where a problem is reported: the written type, or the nearest written node above a computed one. */
  at: ts.Node;
  /** The property path, for messages: `Order.spec.lines[]`. */
  path: string;
  /** Whether the property is optional (`undefined` may then be written in its union). */
  optional?: boolean;
}

const IN_PROGRESS = Symbol('in progress');

/** A written type; its checker type is resolved when first needed (a name often says enough). */
class Written implements Subject {
  private resolved: ts.Type | undefined;

  constructor(
    private readonly checker: ts.TypeChecker,
    readonly node: ts.TypeNode,
    readonly path: string,
    readonly optional: boolean,
  ) {}

  get at(): ts.Node {
    return this.node;
  }

  get type(): ts.Type {
    return (this.resolved ??= this.checker.getTypeFromTypeNode(this.node));
  }
}

export class TypeMapper {
  /** Schemas of declarations, built once; a placeholder while one is being built reveals a cycle. */
  private readonly cache = new Map<Decl, JSONSchemaProps | typeof IN_PROGRESS>();
  /** Computed types being walked: the checker interns instantiations (Node<string> is one object). */
  private readonly typesInProgress = new Set<ts.Type>();
  /**
   * Schemas of named types (declarations, known types): markers on their uses combine with theirs. A Set,
   * not a WeakSet: it lives as long as the run's schemas, and adding to a Set costs less.
   */
  private readonly named = new Set<JSONSchemaProps>();
  readonly isNamed = (schema: JSONSchemaProps): boolean => this.named.has(schema);

  constructor(
    readonly checker: ts.TypeChecker,
    readonly index: MarkerIndex,
    readonly reporter: Reporter,
    readonly resolver: Resolver,
    /** Whether fields declared in a file are optional unless marked (the package's marker). */
    readonly optionalByDefault: (sf: ts.SourceFile) => boolean,
  ) {}

  /** The subject of a written type. */
  written(node: ts.TypeNode, path: string, optional = false): Subject {
    return new Written(this.checker, node, path, optional);
  }

  /** The schema of a type. */
  schemaOf(subject: Subject): JSONSchemaProps {
    let s = subject;
    // `(T)` and `readonly T[]` are T.
    while (
      s.node &&
      (ts.isParenthesizedTypeNode(s.node) ||
        (ts.isTypeOperatorNode(s.node) && s.node.operator === ts.SyntaxKind.ReadonlyKeyword))
    ) {
      s = this.written(s.node.type, s.path, s.optional);
    }
    return this.byName(s) ?? this.byStructure(s);
  }

  /**
   * The schema of a named type, with its description and type-level markers. Cached: each use gets its
   * own top-level object over the cached one's children, which are shared by every use and so never
   * changed in place (a use's markers replace a child rather than change it, apply.ts).
   */
  declarationSchema(decl: Decl, path: string, at: ts.Node = decl): JSONSchemaProps {
    const cached = this.cache.get(decl);
    if (cached === IN_PROGRESS) return this.reporter.recursive(at, declName(decl), path);
    if (cached) return this.markNamed({ ...cached });
    this.cache.set(decl, IN_PROGRESS);
    this.reportMerged(decl);
    let schema: JSONSchemaProps;
    if (ts.isInterfaceDeclaration(decl) || ts.isClassDeclaration(decl)) {
      schema = declaredObjectSchema(this, decl, path);
    } else if (ts.isEnumDeclaration(decl)) {
      schema = this.enumSchema(decl, path);
    } else if (decl.typeParameters && decl.typeParameters.length > 0) {
      schema = this.schemaOf({ type: this.checker.getTypeAtLocation(decl), at: decl, path });
    } else {
      schema = this.schemaOf(this.written(decl.type, path));
    }
    const description = this.index.descriptionOf(decl);
    if (description !== undefined) schema.description = description;
    applyMarkers(
      schema,
      this.index.markersOf(decl),
      `type ${declName(decl)}`,
      this.reporter.marker,
      this.isNamed,
    );
    this.cache.set(decl, schema);
    return this.markNamed({ ...schema });
  }

  /**
   * A type of the project declared more than once (two `interface Foo`, an interface and a class), which
   * TypeScript merges into one: its schema, description and markers are read from one declaration, so the
   * members of the others would be left out without a word. Declaration files are left alone (the lib's
   * interfaces are spread over several files).
   */
  private reportMerged(decl: Decl): void {
    if (decl.getSourceFile().isDeclarationFile || !decl.name) return;
    const others = this.checker
      .getSymbolAtLocation(decl.name)
      ?.declarations?.filter((d) => d !== decl && isDeclaration(d));
    const other = others?.[0];
    if (!other) return;
    const sf = other.getSourceFile();
    const line = sf.getLineAndCharacterOfPosition(other.getStart(sf)).line + 1;
    // The diagnostic's own file is shown as the command line shows paths; a path in the message cannot
    // follow it, so the common case, another declaration in the same file, is given by its line alone.
    const where =
      sf === decl.getSourceFile() ? `line ${line}` : `${this.reporter.displayPath(sf)}, line ${line}`;
    this.reporter.at(
      decl,
      'unsupported-type',
      `${declName(decl)} is declared ${others.length + 1} times (also at ${where}), which TypeScript merges into one type; kubesmith reads a type's schema, description and markers from one declaration`,
      'write the members of all of them in one declaration',
    );
  }

  /** A known type or a declaration, by the written name or else by the computed type's declaration. */
  private byName(s: Subject): JSONSchemaProps | undefined {
    const ref = s.node && referenceOf(s.node);
    if (ref) {
      const known = this.resolver.knownByName(ref.name);
      if (known) return this.markNamed(known);
      const decl = this.resolver.declarationOf(ref.name);
      if (decl === undefined && s.type.flags & (ts.TypeFlags.TypeParameter | ts.TypeFlags.Any)) {
        return this.reporter.unsupported(
          s.at,
          s.path,
          `the type ${s.node!.getText()} (unresolved)`,
          'import the type from a module the project can resolve',
        );
      }
      if (decl && ref.typeArguments.length === 0 && !isLibFile(decl.getSourceFile()))
        return this.declarationSchema(decl, s.path, s.at);
      return undefined;
    }
    if (s.node) return undefined;
    const known = this.resolver.knownByType(s.type, s.at);
    if (known) return this.markNamed(known);
    const decl = this.resolver.declarationOfType(s.type);
    if (decl && !hasTypeParameters(decl)) return this.declarationSchema(decl, s.path, s.at);
    return undefined;
  }

  /** The schema of a type by what it is made of. */
  private byStructure(s: Subject): JSONSchemaProps {
    const { node, at, path } = s;
    const checker = this.checker;
    // Written unions keep their source order (an enum's values) and may say `undefined`.
    if (node && ts.isUnionTypeNode(node)) return this.union(s);
    // What is plain from the written type needs no checker type.
    if (node && ts.isTypeLiteralNode(node)) return declaredObjectSchema(this, node, path);
    if (node && ts.isArrayTypeNode(node))
      return { type: 'array', items: this.schemaOf(this.elementOf(s, node.elementType)) };
    const written = node && ts.isLiteralTypeNode(node) ? literalOf(node) : undefined;
    if (written) return this.literal(written.value, at, path);
    const ref = node && referenceOf(node);
    const lib = ref && this.resolver.libraryName(ref.name);
    const [first, second] = ref?.typeArguments ?? [];
    if ((lib === 'Array' || lib === 'ReadonlyArray') && first)
      return { type: 'array', items: this.schemaOf(this.elementOf(s, first)) };
    if (lib === 'Record' && first?.kind === ts.SyntaxKind.StringKeyword && second)
      return { type: 'object', additionalProperties: this.schemaOf(this.written(second, `${path}[key]`)) };
    const type = s.type;
    const brand = this.resolver.brandOf(type);
    if (brand) return brand;
    if (node && ts.isIntersectionTypeNode(node)) return intersectionSchema(this, node, path);
    const F = ts.TypeFlags;
    if (type.flags & F.Any)
      return this.reporter.unsupported(
        at,
        path,
        '`any`',
        'use `unknown` for free-form data, or a precise type',
      );
    if (type.flags & F.Unknown) return { 'x-kubernetes-preserve-unknown-fields': true };
    if (type.flags & (F.BigInt | F.BigIntLiteral))
      return this.reporter.unsupported(at, path, '`bigint`', 'use int64 from @kubesmith/runtime');
    if (type.flags & (F.ESSymbol | F.UniqueESSymbol))
      return this.reporter.unsupported(at, path, '`symbol`', 'use a string');
    if (type.flags & F.NonPrimitive)
      return this.reporter.unsupported(at, path, '`object`', 'use Record<string, T> or an interface');
    if (type.flags & F.Boolean) return { type: 'boolean' };
    if (type.isStringLiteral()) return this.literal(type.value, at, path);
    if (type.isNumberLiteral()) return this.literal(type.value, at, path);
    if (type.flags & F.BooleanLiteral) return this.literal(checker.typeToString(type) === 'true', at, path);
    if (type.flags & F.Null) return this.literal(null, at, path);
    if (type.flags & F.StringLike && !type.isUnion()) return { type: 'string' };
    if (type.flags & F.NumberLike && !type.isUnion()) return { type: 'number' };
    if (type.isUnion()) return this.union(s);
    if (checker.isTupleType(type))
      return this.reporter.unsupported(
        at,
        path,
        'a tuple',
        'use an array T[] or an object with named properties',
      );
    if (checker.isArrayType(type)) return { type: 'array', items: this.schemaOf(this.elementOf(s)) };
    if (type.getCallSignatures().length > 0 || type.getConstructSignatures().length > 0)
      return this.reporter.unsupported(
        at,
        path,
        'a function type',
        'API types hold data only; remove the property',
      );
    if (type.flags & F.Object || type.isIntersection()) return this.computedObject(s);
    return this.reporter.unsupported(
      at,
      path,
      `the type ${checker.typeToString(type)}`,
      'use a supported type (DESIGN §4)',
    );
  }

  /** A literal type: an enum of one value. */
  private literal(value: string | number | boolean | null, at: ts.Node, path: string): JSONSchemaProps {
    if (value === null)
      return this.reporter.unsupported(at, path, 'a `null` type alone', 'use T | null for a nullable field');
    return { type: typeof value, enum: [value] };
  }

  /** A union: its members in source order when written, `null` as nullable, `undefined` as optional. */
  private union(s: Subject): JSONSchemaProps {
    let nullable = false;
    const members: Subject[] = [];
    if (s.node && ts.isUnionTypeNode(s.node)) {
      const flatten = (t: ts.TypeNode): void => {
        if (ts.isParenthesizedTypeNode(t)) return flatten(t.type);
        if (ts.isUnionTypeNode(t)) return t.types.forEach(flatten);
        if (ts.isLiteralTypeNode(t) && t.literal.kind === ts.SyntaxKind.NullKeyword) nullable = true;
        else if (t.kind === ts.SyntaxKind.UndefinedKeyword) {
          if (!s.optional) {
            this.reporter.at(
              t,
              'unsupported-type',
              `${s.path}: \`undefined\` in a required property`,
              'make the property optional: name?: T',
            );
          }
        } else members.push(this.written(t, s.path));
      };
      flatten(s.node);
    } else if (s.type.isUnion()) {
      for (const t of s.type.types) {
        if (t.flags & ts.TypeFlags.Null) nullable = true;
        else if (!(t.flags & ts.TypeFlags.Undefined)) members.push({ type: t, at: s.at, path: s.path });
      }
    }
    const schema =
      members.length === 1 && members[0]
        ? this.schemaOf(members[0])
        : unionSchema(
            members.map((m) => this.schemaOf(m)),
            s.at,
            s.path,
            this.reporter,
          );
    if (nullable) schema.nullable = true;
    return schema;
  }

  /** The items of an array: as written (`T[]`, `Array<T>`), or the checker's element type. */
  private elementOf(s: Subject, written?: ts.TypeNode): Subject {
    const path = `${s.path}[]`;
    if (written) return this.written(written, path);
    const [element] = this.checker.getTypeArguments(s.type as ts.TypeReference);
    return { type: element ?? this.checker.getUnknownType(), at: s.at, path };
  }

  /** An object type the checker computed: a generic's instantiation, a mapped type, `Partial<T>`... */
  private computedObject(s: Subject): JSONSchemaProps {
    const named = this.resolver.declarationOfType(s.type);
    // A project type reached through a computed one (NonNullable<T>) is that declaration's schema.
    if (named && !hasTypeParameters(named) && this.cache.get(named) !== IN_PROGRESS)
      return this.declarationSchema(named, s.path, s.at);
    if (this.typesInProgress.has(s.type))
      return this.reporter.recursive(s.at, this.checker.typeToString(s.type), s.path);
    this.typesInProgress.add(s.type);
    try {
      return computedObjectSchema(this, s, named && hasTypeParameters(named) ? named : undefined);
    } finally {
      this.typesInProgress.delete(s.type);
    }
  }

  private enumSchema(decl: ts.EnumDeclaration, path: string): JSONSchemaProps {
    const values: string[] = [];
    for (const member of decl.members) {
      const value = this.checker.getConstantValue(member);
      if (typeof value !== 'string') {
        this.reporter.at(
          member,
          'unsupported-type',
          `enum ${declName(decl)} (at ${path}) has a non-string member ${member.name.getText()}`,
          'give every member a string value: Member = "Member"',
        );
        continue;
      }
      values.push(value);
    }
    return { type: 'string', enum: values };
  }

  private markNamed(schema: JSONSchemaProps): JSONSchemaProps {
    this.named.add(schema);
    return schema;
  }
}

/** The value of a written literal type (`'a'`, `1`, `-1`, `true`, `null`). */
function literalOf(node: ts.LiteralTypeNode): { value: string | number | boolean | null } | undefined {
  const lit = node.literal;
  if (ts.isStringLiteral(lit) || ts.isNoSubstitutionTemplateLiteral(lit)) return { value: lit.text };
  if (ts.isNumericLiteral(lit)) return { value: Number(lit.text) };
  if (lit.kind === ts.SyntaxKind.TrueKeyword) return { value: true };
  if (lit.kind === ts.SyntaxKind.FalseKeyword) return { value: false };
  if (lit.kind === ts.SyntaxKind.NullKeyword) return { value: null };
  return undefined; // -1 and the like: the checker's literal type
}

function hasTypeParameters(decl: Decl): boolean {
  return !ts.isEnumDeclaration(decl) && (decl.typeParameters?.length ?? 0) > 0;
}
