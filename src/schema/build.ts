/**
 * TypeScript -> structural OpenAPI v3 (DESIGN §4), from the declared type nodes (which keep `int32` and
 * friends by name) with the type checker for resolving references. Schemas are built once per declaration
 * (a placeholder is stored before recursing, which is how cycles are found) and always inlined.
 * Problems become diagnostics naming the property path and the fix; a placeholder schema stands in.
 */
import { ts } from '../manifests/ts-morph.cjs';
import {
  collectFileMarkers,
  commentTextLines,
  type Diagnostic,
  type FileMarkers,
  type Marker,
  type MarkerRegistry,
} from '../markers/index.js';
import { applyMarkers } from './apply.js';
import { packageNameFinder, type ReadFile } from './origin.js';
import { BRAND_PROPERTIES, BRANDS, clientNodeSchema, KNOWN_TYPES } from './known.js';
import { TYPE_META_DESCRIPTIONS } from './k8s-data.js';
import { structuralProblems } from './structural.js';
import { clone, type JSONSchemaProps } from './types.js';

export interface SchemaBuilderOptions {
  checker: ts.TypeChecker;
  registry: MarkerRegistry;
  diagnostics: Diagnostic[];
  /** The path of a source file as shown in diagnostics (relative to the project root). */
  displayPath: (sf: ts.SourceFile) => string;
  /** Whether fields declared in `sf` are optional unless marked (`+kubebuilder:validation:Optional` on the package). */
  optionalByDefault?: (sf: ts.SourceFile) => boolean;
  /** Reads a package.json, to learn which package a declaration comes from. Default: from disk. */
  readFile?: ReadFile;
}

type Decl = ts.InterfaceDeclaration | ts.TypeAliasDeclaration | ts.ClassDeclaration | ts.EnumDeclaration;

const IN_PROGRESS = Symbol('in progress');
const CLIENT_NODE = '@kubernetes/client-node';
const RUNTIME = '@kubesmith/runtime';

export class SchemaBuilder {
  private readonly checker: ts.TypeChecker;
  private readonly files = new Map<ts.SourceFile, FileMarkers>();
  private readonly cache = new Map<ts.Node, JSONSchemaProps | typeof IN_PROGRESS>();
  private readonly typesInProgress = new Set<ts.Type>();
  /** Schemas of named types (declarations, known types): markers on their uses combine with theirs. */
  private readonly named = new WeakSet<JSONSchemaProps>();
  private readonly isNamed = (schema: JSONSchemaProps): boolean => this.named.has(schema);

  private readonly packageNameOf: (fileName: string) => string | undefined;

  constructor(private readonly options: SchemaBuilderOptions) {
    this.checker = options.checker;
    this.packageNameOf = packageNameFinder(options.readFile ?? ((f) => ts.sys.readFile(f)));
  }

  /** The parsed markers and docs of a file, collected once. */
  fileMarkers(sf: ts.SourceFile): FileMarkers {
    let markers = this.files.get(sf);
    if (!markers) {
      markers = collectFileMarkers(
        sf,
        this.options.registry,
        this.options.displayPath(sf),
        this.options.diagnostics,
      );
      this.files.set(sf, markers);
    }
    return markers;
  }

  markersOf(node: ts.Node): Marker[] {
    return this.fileMarkers(node.getSourceFile()).byNode.get(node) ?? [];
  }

  /** The description of a declaration: its JSDoc text without markers, TODO lines, or anything after `---`. */
  descriptionOf(node: ts.Node): string | undefined {
    const sf = node.getSourceFile();
    const range = this.fileMarkers(sf).docs.get(node);
    if (!range) return undefined;
    const out: string[] = [];
    let inCode = false;
    for (const line of commentTextLines(sf.getFullText(), range)) {
      const trimmed = line.trim();
      if (trimmed.startsWith('+')) continue;
      if (trimmed.startsWith('```') || trimmed.startsWith('~~~')) inCode = !inCode;
      if (!inCode) {
        if (trimmed.startsWith('TODO')) continue;
        if (trimmed.startsWith('---')) break;
      }
      out.push(line);
    }
    // Blank runs collapse to one, and leading and trailing blank lines go, as Go's comment text.
    const collapsed = out.filter(
      (line, i) => line.trim() !== '' || (i > 0 && (out[i - 1] ?? '').trim() !== ''),
    );
    const text = collapsed.join('\n').trim();
    return text === '' ? undefined : text;
  }

  report(node: ts.Node, code: string, message: string, hint?: string): void {
    const sf = node.getSourceFile();
    const lc = sf.getLineAndCharacterOfPosition(node.getStart(sf));
    this.options.diagnostics.push({
      file: this.options.displayPath(sf),
      line: lc.line + 1,
      col: lc.character + 1,
      code,
      message,
      ...(hint ? { hint } : {}),
    });
  }

  private markerProblem = (marker: Marker, message: string, hint?: string): void => {
    this.options.diagnostics.push({
      file: marker.file,
      line: marker.line,
      col: marker.col,
      code: 'invalid-marker-use',
      message,
      ...(hint ? { hint } : {}),
    });
  };

  /** The schema of a kind's root type: `metadata` is `{type: object}`, apiVersion and kind documented. */
  rootSchema(decl: Decl): JSONSchemaProps {
    const schema = this.declarationSchema(decl, declName(decl)); // a copy of the cached schema
    const props = schema.properties ?? {};
    if (props['metadata']) props['metadata'] = { type: 'object' };
    // apiVersion and kind are plain strings whatever literal type they are written with (as TypeMeta).
    for (const key of ['apiVersion', 'kind'] as const) {
      const prop = props[key];
      if (prop) props[key] = { description: prop.description ?? TYPE_META_DESCRIPTIONS[key], type: 'string' };
    }
    // As Go's inlined TypeMeta and `metadata,omitempty`: never required.
    const required = (schema.required ?? []).filter(
      (r) => r !== 'apiVersion' && r !== 'kind' && r !== 'metadata',
    );
    if (required.length > 0) schema.required = required;
    else delete schema.required;
    return schema;
  }

  /** The schema of a named type, with its description and type-level markers. Cached. */
  declarationSchema(decl: Decl, path: string, at: ts.Node = decl): JSONSchemaProps {
    const cached = this.cache.get(decl);
    if (cached === IN_PROGRESS) {
      this.report(
        at,
        'recursive-type',
        `recursive type ${declName(decl)} at ${path}: CRD schemas cannot be recursive`,
        'mark the property where the cycle starts with +kubebuilder:validation:Schemaless and +kubebuilder:pruning:PreserveUnknownFields',
      );
      return { 'x-kubernetes-preserve-unknown-fields': true };
    }
    if (cached) return this.markNamed(clone(cached));
    this.cache.set(decl, IN_PROGRESS);
    let schema: JSONSchemaProps;
    if (ts.isInterfaceDeclaration(decl) || ts.isClassDeclaration(decl)) {
      schema = this.objectSchema(decl, path);
    } else if (ts.isEnumDeclaration(decl)) {
      schema = this.enumSchema(decl, path);
    } else if (decl.typeParameters && decl.typeParameters.length > 0) {
      schema = this.typeSchema(this.checker.getTypeAtLocation(decl), decl, path);
    } else {
      schema = this.typeNodeSchema(decl.type, path);
    }
    const description = this.descriptionOf(decl);
    if (description !== undefined) schema.description = description;
    applyMarkers(schema, this.markersOf(decl), `type ${declName(decl)}`, this.markerProblem, this.isNamed);
    this.cache.set(decl, schema);
    return this.markNamed(clone(schema));
  }

  private enumSchema(decl: ts.EnumDeclaration, path: string): JSONSchemaProps {
    const values: string[] = [];
    for (const member of decl.members) {
      const value = this.checker.getConstantValue(member);
      if (typeof value !== 'string') {
        this.report(
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

  /** Properties of an interface, class or type literal, with `extends` merged in first. */
  private objectSchema(
    decl: ts.InterfaceDeclaration | ts.ClassDeclaration | ts.TypeLiteralNode,
    path: string,
  ): JSONSchemaProps {
    const schema: JSONSchemaProps = { type: 'object', properties: {} };
    const required = new Set<string>();
    const immutable: string[] = [];
    if (!ts.isTypeLiteralNode(decl)) {
      for (const clause of decl.heritageClauses ?? []) {
        if (clause.token !== ts.SyntaxKind.ExtendsKeyword) continue;
        for (const base of clause.types) {
          const baseSchema = this.expressionWithTypeArgumentsSchema(base, path);
          this.mergeObject(schema, required, baseSchema, base, path);
        }
      }
    }
    for (const member of decl.members) {
      if (ts.isPropertySignature(member) || ts.isPropertyDeclaration(member)) {
        if (ts.isPropertyDeclaration(member)) {
          const mods = ts.getCombinedModifierFlags(member);
          if (mods & (ts.ModifierFlags.Static | ts.ModifierFlags.Private | ts.ModifierFlags.Protected))
            continue;
        }
        const name = this.propertyName(member.name, path);
        if (name === undefined) continue;
        const propPath = `${path}.${name}`;
        const prop = this.propertySchema(member, propPath);
        schema.properties![name] = prop;
        if (this.isRequired(member)) required.add(name);
        else required.delete(name);
        if (this.isImmutable(member)) immutable.push(name);
      } else if (ts.isIndexSignatureDeclaration(member)) {
        const param = member.parameters[0];
        if (!param?.type || param.type.kind !== ts.SyntaxKind.StringKeyword) {
          this.report(
            member,
            'unsupported-type',
            `index signature at ${path} must have string keys`,
            'use { [key: string]: T }',
          );
          continue;
        }
        schema.additionalProperties = this.typeNodeSchema(member.type, `${path}[key]`);
      } else if (
        ts.isMethodSignature(member) ||
        ts.isMethodDeclaration(member) ||
        ts.isCallSignatureDeclaration(member) ||
        ts.isConstructSignatureDeclaration(member) ||
        ts.isGetAccessor(member) ||
        ts.isSetAccessor(member)
      ) {
        if (ts.isClassDeclaration(decl)) continue;
        this.report(
          member,
          'unsupported-type',
          `${path} declares a method or call signature; API types hold data only`,
          'remove the method or move it out of the API type',
        );
      }
    }
    if (Object.keys(schema.properties!).length === 0 && schema.additionalProperties !== undefined) {
      delete schema.properties;
    } else if (schema.additionalProperties !== undefined) {
      this.report(
        decl,
        'unsupported-type',
        `${path} has both properties and an index signature, which a structural schema cannot express`,
        'move the free-form keys into a property of type Record<string, T>',
      );
      delete schema.additionalProperties;
    }
    if (required.size > 0) schema.required = [...required].sort();
    addImmutableOnceSetRules(schema, immutable);
    return schema;
  }

  private isImmutable(member: ts.PropertySignature | ts.PropertyDeclaration): boolean {
    return this.markersOf(member).some((m) => m.name === 'k8s:immutable');
  }

  private mergeObject(
    target: JSONSchemaProps,
    required: Set<string>,
    source: JSONSchemaProps,
    node: ts.Node,
    path: string,
  ): void {
    if (source.type !== 'object' || (!source.properties && source.additionalProperties === undefined)) {
      if (source['x-kubernetes-preserve-unknown-fields']) return;
      this.report(
        node,
        'unsupported-type',
        `${path} extends or intersects a type that is not an object`,
        'combine object types only',
      );
      return;
    }
    Object.assign(target.properties!, source.properties ?? {});
    for (const r of source.required ?? []) required.add(r);
    // As controller-gen flattens embedded structs: the last one's rules first, the type's own last.
    const rules = source['x-kubernetes-validations'];
    if (rules) target['x-kubernetes-validations'] = [...rules, ...(target['x-kubernetes-validations'] ?? [])];
    if (source.additionalProperties !== undefined) target.additionalProperties = source.additionalProperties;
  }

  private expressionWithTypeArgumentsSchema(
    base: ts.ExpressionWithTypeArguments,
    path: string,
  ): JSONSchemaProps {
    const known = this.knownSchema(base.expression);
    if (known) return known;
    const decl = this.resolveDeclaration(base.expression);
    if (decl && !base.typeArguments?.length && !ts.isEnumDeclaration(decl))
      return this.declarationSchema(decl, path);
    return this.typeSchema(this.checker.getTypeAtLocation(base), base, path);
  }

  private propertyName(name: ts.PropertyName, path: string): string | undefined {
    if (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name)) return name.text;
    this.report(name, 'unsupported-type', `computed property name at ${path}`, 'use a plain property name');
    return undefined;
  }

  private isRequired(member: ts.PropertySignature | ts.PropertyDeclaration): boolean {
    const names = new Set(this.markersOf(member).map((m) => m.name));
    if (names.has('kubebuilder:validation:Optional')) return false;
    if (names.has('kubebuilder:validation:Required')) return true;
    if (names.has('optional') || names.has('k8s:optional')) return false;
    if (names.has('required') || names.has('k8s:required')) return true;
    if (member.questionToken !== undefined) return false;
    return !(this.options.optionalByDefault?.(member.getSourceFile()) ?? false);
  }

  private propertySchema(
    member: ts.PropertySignature | ts.PropertyDeclaration,
    path: string,
  ): JSONSchemaProps {
    const markers = this.markersOf(member);
    let schema: JSONSchemaProps;
    if (markers.some((m) => m.name === 'kubebuilder:validation:Schemaless')) {
      schema = {};
    } else if (member.type) {
      schema = this.typeNodeSchema(member.type, path, member.questionToken !== undefined);
    } else {
      this.report(
        member,
        'unsupported-type',
        `${path} has no declared type`,
        'write the property type explicitly',
      );
      schema = {};
    }
    const description = this.descriptionOf(member);
    if (description !== undefined) schema.description = description;
    applyMarkers(schema, markers, path, this.markerProblem, this.isNamed);
    for (const problem of structuralProblems(schema)) {
      this.report(member, 'not-structural', `${path}: ${problem.message}`, problem.hint);
    }
    return schema;
  }

  /** The schema of a written type. */
  typeNodeSchema(node: ts.TypeNode, path: string, optional = false): JSONSchemaProps {
    switch (node.kind) {
      case ts.SyntaxKind.StringKeyword:
        return { type: 'string' };
      case ts.SyntaxKind.NumberKeyword:
        return { type: 'number' };
      case ts.SyntaxKind.BooleanKeyword:
        return { type: 'boolean' };
      case ts.SyntaxKind.UnknownKeyword:
        return { 'x-kubernetes-preserve-unknown-fields': true };
      case ts.SyntaxKind.AnyKeyword:
        return this.unsupported(node, path, '`any`', 'use `unknown` for free-form data, or a precise type');
      case ts.SyntaxKind.BigIntKeyword:
        return this.unsupported(node, path, '`bigint`', 'use int64 from @kubesmith/runtime');
      case ts.SyntaxKind.SymbolKeyword:
        return this.unsupported(node, path, '`symbol`', 'use a string');
      case ts.SyntaxKind.ObjectKeyword:
        return this.unsupported(node, path, '`object`', 'use Record<string, T> or an interface');
    }
    if (ts.isParenthesizedTypeNode(node)) return this.typeNodeSchema(node.type, path, optional);
    if (ts.isTypeOperatorNode(node) && node.operator === ts.SyntaxKind.ReadonlyKeyword) {
      return this.typeNodeSchema(node.type, path, optional);
    }
    if (ts.isArrayTypeNode(node))
      return { type: 'array', items: this.typeNodeSchema(node.elementType, `${path}[]`) };
    if (ts.isLiteralTypeNode(node)) return this.literalSchema(node, path);
    if (ts.isUnionTypeNode(node)) return this.unionSchema(node, path, optional);
    if (ts.isTypeLiteralNode(node)) return this.objectSchema(node, path);
    if (ts.isIntersectionTypeNode(node)) return this.intersectionSchema(node, path);
    if (ts.isFunctionTypeNode(node) || ts.isConstructorTypeNode(node)) {
      return this.unsupported(node, path, 'a function type', 'API types hold data only; remove the property');
    }
    if (ts.isTupleTypeNode(node)) {
      return this.unsupported(node, path, 'a tuple', 'use an array T[] or an object with named properties');
    }
    if (ts.isTypeReferenceNode(node)) return this.referenceSchema(node, path);
    return this.typeSchema(this.checker.getTypeFromTypeNode(node), node, path);
  }

  private unsupported(node: ts.Node, path: string, what: string, fix: string): JSONSchemaProps {
    this.report(node, 'unsupported-type', `${path}: ${what} has no CRD schema`, fix);
    return { 'x-kubernetes-preserve-unknown-fields': true };
  }

  private literalSchema(node: ts.LiteralTypeNode, path: string): JSONSchemaProps {
    const lit = node.literal;
    if (ts.isStringLiteral(lit) || ts.isNoSubstitutionTemplateLiteral(lit))
      return { type: 'string', enum: [lit.text] };
    if (ts.isNumericLiteral(lit)) return { type: 'number', enum: [Number(lit.text)] };
    if (lit.kind === ts.SyntaxKind.TrueKeyword) return { type: 'boolean', enum: [true] };
    if (lit.kind === ts.SyntaxKind.FalseKeyword) return { type: 'boolean', enum: [false] };
    return this.unsupported(node, path, 'a `null` type alone', 'use T | null for a nullable field');
  }

  private unionSchema(node: ts.UnionTypeNode, path: string, optional: boolean): JSONSchemaProps {
    let nullable = false;
    const members: ts.TypeNode[] = [];
    const flatten = (t: ts.TypeNode): void => {
      if (ts.isParenthesizedTypeNode(t)) return flatten(t.type);
      if (ts.isUnionTypeNode(t)) return t.types.forEach(flatten);
      if (ts.isLiteralTypeNode(t) && t.literal.kind === ts.SyntaxKind.NullKeyword) nullable = true;
      else if (t.kind === ts.SyntaxKind.UndefinedKeyword) {
        if (!optional) {
          this.report(
            t,
            'unsupported-type',
            `${path}: \`undefined\` in a required property`,
            'make the property optional: name?: T',
          );
        }
      } else members.push(t);
    };
    flatten(node);
    let schema: JSONSchemaProps;
    if (members.length === 1 && members[0]) {
      schema = this.typeNodeSchema(members[0], path);
    } else {
      const parts = members.map((m) => this.typeNodeSchema(m, path));
      const scalarType = parts[0]?.type;
      if (
        parts.length > 0 &&
        parts.every((p) => p.enum !== undefined && p.type === scalarType && !p.properties && !p.format)
      ) {
        const values: unknown[] = [];
        for (const p of parts) for (const v of p.enum ?? []) if (!values.includes(v)) values.push(v);
        schema =
          scalarType === 'boolean' && values.length === 2
            ? { type: 'boolean' }
            : { type: scalarType, enum: values };
      } else if (parts.length > 0 && parts.every((p) => p.type === 'object' && p.properties)) {
        schema = this.taggedUnion(node, members, parts, path);
      } else {
        schema = this.unsupported(
          node,
          path,
          'a union of different types',
          'use one type, a union of string literals, or a union of objects tagged by a literal property',
        );
      }
    }
    if (nullable) schema.nullable = true;
    return schema;
  }

  /** A discriminated union: one object with every variant's properties, the tag an enum, oneOf per variant. */
  private taggedUnion(
    node: ts.Node,
    _members: ts.TypeNode[],
    parts: JSONSchemaProps[],
    path: string,
  ): JSONSchemaProps {
    const first = parts[0]!;
    const tag = Object.keys(first.properties ?? {}).find((key) =>
      parts.every((p) => {
        const prop = p.properties?.[key];
        return prop?.type === 'string' && prop.enum?.length === 1 && (p.required ?? []).includes(key);
      }),
    );
    if (tag === undefined) {
      return this.unsupported(
        node,
        path,
        'an untagged union of object types',
        'add a string-literal tag property to every variant (kind: "A"), or merge the variants into one type',
      );
    }
    const merged: JSONSchemaProps = { type: 'object', properties: {} };
    const tagValues: unknown[] = [];
    const oneOf: JSONSchemaProps[] = [];
    for (const part of parts) {
      for (const [key, prop] of Object.entries(part.properties ?? {})) {
        if (key === tag) continue;
        merged.properties![key] ??= prop;
      }
      const value = part.properties?.[tag]?.enum?.[0];
      tagValues.push(value);
      oneOf.push({
        properties: { [tag]: { enum: [value] } },
        required: [...(part.required ?? [])].sort(),
      });
    }
    const tagSchema: JSONSchemaProps = { type: 'string', enum: tagValues };
    const tagDescription = first.properties?.[tag]?.description;
    if (tagDescription) tagSchema.description = tagDescription;
    merged.properties![tag] = tagSchema;
    merged.required = [tag];
    merged.oneOf = oneOf;
    return merged;
  }

  private intersectionSchema(node: ts.IntersectionTypeNode, path: string): JSONSchemaProps {
    const brand = this.brandOf(this.checker.getTypeFromTypeNode(node));
    if (brand) return brand;
    const schema: JSONSchemaProps = { type: 'object', properties: {} };
    const required = new Set<string>();
    for (const part of node.types)
      this.mergeObject(schema, required, this.typeNodeSchema(part, path), part, path);
    if (required.size > 0) schema.required = [...required].sort();
    return schema;
  }

  /** `number & { readonly __kubesmithType?: 'int32' }`: the branded integer aliases of @kubesmith/runtime. */
  private brandOf(type: ts.Type): JSONSchemaProps | undefined {
    if (!type.isIntersection()) return undefined;
    for (const name of BRAND_PROPERTIES) {
      const prop = type.getProperty(name);
      if (!prop) continue;
      const propType = this.checker.getNonNullableType(this.checker.getTypeOfSymbol(prop));
      if (propType.isStringLiteral()) return BRANDS[propType.value]?.();
    }
    return undefined;
  }

  /** A known type (int32, Time, Condition...) by the module it is imported from and its exported name. */
  private knownSchema(nameNode: ts.Node): JSONSchemaProps | undefined {
    const id = ts.isQualifiedName(nameNode)
      ? nameNode.right
      : ts.isPropertyAccessExpression(nameNode)
        ? nameNode.name
        : nameNode;
    let symbol = this.checker.getSymbolAtLocation(id);
    if (ts.isQualifiedName(nameNode) && ts.isIdentifier(nameNode.left)) {
      // `k8s.V1PodTemplateSpec` with `import * as k8s from '...'`: look at the namespace import.
      const left = this.checker.getSymbolAtLocation(nameNode.left)?.declarations?.[0];
      if (left && ts.isNamespaceImport(left)) symbol = this.checker.getSymbolAtLocation(nameNode.left);
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
        if (symbol.name === 'Date' && decl && this.isLibFile(decl.getSourceFile()))
          return KNOWN_TYPES['#Date']?.();
        return undefined;
      }
      symbol = this.checker.getImmediateAliasedSymbol(symbol);
    }
    return undefined;
  }

  /** The fixed schema of `exported` from `module`, if it is a known type; client-node types must be. */
  private moduleSchema(module: string, exported: string, nameNode: ts.Node): JSONSchemaProps | undefined {
    const known = KNOWN_TYPES[`${module}#${exported}`];
    if (known) return known();
    if (module !== CLIENT_NODE) return undefined;
    // The client-node declarations lose formats, enums and int-or-string: never read them.
    const schema = clientNodeSchema(exported);
    if (schema) return schema;
    this.report(
      nameNode,
      'unknown-k8s-type',
      `no schema data for ${exported} from ${CLIENT_NODE}`,
      'add the type to test/fixtures/k8s-types/go (the catalog) and regenerate src/schema/k8s-types.data.ts (docs/manifests.md)',
    );
    return { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  }

  private isLibFile(sf: ts.SourceFile): boolean {
    return /[\\/]lib\.[^\\/]*\.d\.ts$/.test(sf.fileName) || sf.hasNoDefaultLib;
  }

  private resolveDeclaration(nameNode: ts.Node): Decl | undefined {
    let symbol = this.checker.getSymbolAtLocation(ts.isQualifiedName(nameNode) ? nameNode.right : nameNode);
    if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = this.checker.getAliasedSymbol(symbol);
    const decl = symbol?.declarations?.find(
      (d) =>
        ts.isInterfaceDeclaration(d) ||
        ts.isTypeAliasDeclaration(d) ||
        ts.isClassDeclaration(d) ||
        ts.isEnumDeclaration(d),
    );
    return decl as Decl | undefined;
  }

  private markNamed(schema: JSONSchemaProps): JSONSchemaProps {
    this.named.add(schema);
    return schema;
  }

  private referenceSchema(node: ts.TypeReferenceNode, path: string): JSONSchemaProps {
    const known = this.knownSchema(node.typeName);
    if (known) return this.markNamed(known);
    const name = ts.isIdentifier(node.typeName) ? node.typeName.text : node.typeName.right.text;
    const args = node.typeArguments ?? [];
    const decl = this.resolveDeclaration(node.typeName);
    const isLib = decl === undefined || this.isLibFile(decl.getSourceFile());
    if (isLib && (name === 'Array' || name === 'ReadonlyArray') && args[0]) {
      return { type: 'array', items: this.typeNodeSchema(args[0], `${path}[]`) };
    }
    if (isLib && name === 'Record' && args[0] && args[1]) {
      if (args[0].kind === ts.SyntaxKind.StringKeyword) {
        return { type: 'object', additionalProperties: this.typeNodeSchema(args[1], `${path}[key]`) };
      }
      return this.typeSchema(this.checker.getTypeFromTypeNode(node), node, path);
    }
    if (decl === undefined) {
      const type = this.checker.getTypeFromTypeNode(node);
      if (type.flags & ts.TypeFlags.TypeParameter || type.flags & ts.TypeFlags.Any) {
        return this.unsupported(
          node,
          path,
          `the type ${node.getText()} (unresolved)`,
          'import the type from a module the project can resolve',
        );
      }
      return this.typeSchema(type, node, path);
    }
    if (args.length > 0 || isLib) return this.typeSchema(this.checker.getTypeFromTypeNode(node), node, path);
    return this.declarationSchema(decl, path, node);
  }

  /** The schema of a checker type: for generics, mapped types and other computed types. */
  typeSchema(type: ts.Type, at: ts.Node, path: string): JSONSchemaProps {
    const checker = this.checker;
    const brand = this.brandOf(type);
    if (brand) return brand;
    const alias = type.aliasSymbol?.declarations?.[0];
    if (
      alias &&
      ts.isTypeAliasDeclaration(alias) &&
      !alias.typeParameters &&
      type.aliasTypeArguments === undefined
    ) {
      const known = KNOWN_TYPES[`${RUNTIME}#${type.aliasSymbol?.name ?? ''}`];
      if (known && this.packageNameOf(alias.getSourceFile().fileName) === RUNTIME) return known();
    }
    if (type.flags & ts.TypeFlags.Any)
      return this.unsupported(at, path, '`any`', 'use `unknown` for free-form data, or a precise type');
    if (type.flags & ts.TypeFlags.Unknown) return { 'x-kubernetes-preserve-unknown-fields': true };
    if (type.flags & ts.TypeFlags.StringLike && !type.isStringLiteral() && !type.isUnion())
      return { type: 'string' };
    if (type.flags & ts.TypeFlags.NumberLike && !type.isNumberLiteral() && !type.isUnion())
      return { type: 'number' };
    if (type.flags & ts.TypeFlags.Boolean) return { type: 'boolean' };
    if (type.isStringLiteral()) return { type: 'string', enum: [type.value] };
    if (type.isUnion()) {
      const parts = type.types.filter((t) => !(t.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Null)));
      const nullable = type.types.some((t) => t.flags & ts.TypeFlags.Null);
      let schema: JSONSchemaProps;
      if (parts.every((t) => t.isStringLiteral())) {
        schema = { type: 'string', enum: parts.map((t) => (t as ts.StringLiteralType).value) };
      } else if (parts.every((t) => t.flags & ts.TypeFlags.BooleanLiteral)) {
        schema = { type: 'boolean' };
      } else if (parts.length === 1 && parts[0]) {
        schema = this.typeSchema(parts[0], at, path);
      } else {
        schema = this.unsupported(
          at,
          path,
          'a union of different types',
          'use one type or a union of string literals',
        );
      }
      if (nullable) schema.nullable = true;
      return schema;
    }
    if (checker.isArrayType(type) || checker.isTupleType(type)) {
      if (checker.isTupleType(type)) return this.unsupported(at, path, 'a tuple', 'use an array T[]');
      const [element] = checker.getTypeArguments(type as ts.TypeReference);
      return { type: 'array', items: element ? this.typeSchema(element, at, `${path}[]`) : {} };
    }
    if (type.getCallSignatures().length > 0) {
      return this.unsupported(at, path, 'a function type', 'API types hold data only; remove the property');
    }
    if (type.flags & ts.TypeFlags.Object || type.isIntersection()) {
      const symbol = type.getSymbol();
      const decl = symbol?.declarations?.[0];
      if (decl && symbol?.name === 'Date' && this.isLibFile(decl.getSourceFile()))
        return { type: 'string', format: 'date-time' };
      // A project type reached through a type argument (Step<Ingredient>, T[] with T = Ingredient) is
      // that declaration's schema; an instantiated generic keeps its declaration's doc and type markers.
      const named = this.namedDeclaration(type);
      if (named && !named.typeParameters?.length) return this.declarationSchema(named, path, at);
      // The checker interns instantiations (Node<string> is one type object), which is how cycles show.
      if (this.typesInProgress.has(type)) {
        const name = checker.typeToString(type);
        this.report(
          at,
          'recursive-type',
          `recursive type ${name} at ${path}: CRD schemas cannot be recursive`,
          'mark the property where the cycle starts with +kubebuilder:validation:Schemaless and +kubebuilder:pruning:PreserveUnknownFields',
        );
        return { 'x-kubernetes-preserve-unknown-fields': true };
      }
      this.typesInProgress.add(type);
      try {
        return this.objectTypeSchema(type, at, path, named);
      } finally {
        this.typesInProgress.delete(type);
      }
    }
    return this.unsupported(
      at,
      path,
      `the type ${checker.typeToString(type)}`,
      'use a supported type (DESIGN §4)',
    );
  }

  /** The properties of an object type the checker computed (generic instantiations, mapped types...). */
  private objectTypeSchema(
    type: ts.Type,
    at: ts.Node,
    path: string,
    named: ts.InterfaceDeclaration | ts.ClassDeclaration | ts.TypeAliasDeclaration | undefined,
  ): JSONSchemaProps {
    const checker = this.checker;
    const schema: JSONSchemaProps = { type: 'object', properties: {} };
    const required: string[] = [];
    const immutable: string[] = [];
    for (const prop of checker.getPropertiesOfType(type)) {
      const propPath = `${path}.${prop.name}`;
      const declaration = prop.valueDeclaration ?? prop.declarations?.[0];
      const propType = checker.getTypeOfSymbolAtLocation(prop, at);
      let propSchema: JSONSchemaProps;
      const member =
        declaration && (ts.isPropertySignature(declaration) || ts.isPropertyDeclaration(declaration))
          ? declaration
          : undefined;
      // Prefer the written type (it keeps int32 and friends) unless it depends on type parameters.
      const optional = (prop.flags & ts.SymbolFlags.Optional) !== 0;
      if (member?.type && !this.mentionsTypeParameter(member.type)) {
        propSchema = this.propertySchema(member, propPath);
      } else {
        propSchema = this.typeSchema(checker.getNonNullableType(propType), at, propPath);
        if (member) {
          const description = this.descriptionOf(member);
          if (description !== undefined) propSchema.description = description;
          applyMarkers(propSchema, this.markersOf(member), propPath, this.markerProblem, this.isNamed);
        }
      }
      schema.properties![prop.name] = propSchema;
      // Partial<T> and Required<T> change a property's optionality: then the mapped type decides.
      const transformed = member !== undefined && (member.questionToken !== undefined) !== optional;
      const isRequired = member && !transformed ? this.isRequired(member) : !optional;
      if (isRequired) required.push(prop.name);
      if (member && this.isImmutable(member)) immutable.push(prop.name);
    }
    const index = type.getStringIndexType();
    if (index) {
      if (Object.keys(schema.properties!).length === 0) delete schema.properties;
      schema.additionalProperties = this.typeSchema(index, at, `${path}[key]`);
    }
    if (required.length > 0) schema.required = required.sort();
    addImmutableOnceSetRules(schema, immutable);
    if (named) {
      const description = this.descriptionOf(named);
      if (description !== undefined) schema.description = description;
      applyMarkers(schema, this.markersOf(named), `type ${declName(named)}`, this.markerProblem);
    }
    return schema;
  }

  /** The project's own interface, class or type alias a checker type was declared as, if any. */
  private namedDeclaration(
    type: ts.Type,
  ): ts.InterfaceDeclaration | ts.ClassDeclaration | ts.TypeAliasDeclaration | undefined {
    const symbol = type.aliasSymbol ?? type.getSymbol();
    const decl = symbol?.declarations?.find(
      (d): d is ts.InterfaceDeclaration | ts.ClassDeclaration | ts.TypeAliasDeclaration =>
        ts.isInterfaceDeclaration(d) || ts.isClassDeclaration(d) || ts.isTypeAliasDeclaration(d),
    );
    if (!decl || this.isLibFile(decl.getSourceFile()) || decl.getSourceFile().isDeclarationFile)
      return undefined;
    return decl;
  }

  private mentionsTypeParameter(node: ts.TypeNode): boolean {
    let found = false;
    const visit = (n: ts.Node): void => {
      if (found) return;
      if (ts.isTypeReferenceNode(n)) {
        const type = this.checker.getTypeFromTypeNode(n);
        if (type.flags & ts.TypeFlags.TypeParameter) found = true;
      }
      ts.forEachChild(n, visit);
    };
    visit(node);
    return found;
  }
}

/**
 * `self == oldSelf` on an immutable field does not run when an update removes the field, so its object
 * also refuses that, as controller-gen does: a rule per optional immutable field, in field order.
 */
function addImmutableOnceSetRules(schema: JSONSchemaProps, fields: readonly string[]): void {
  for (const field of fields) {
    if (schema.required?.includes(field)) continue;
    schema['x-kubernetes-validations'] = [
      ...(schema['x-kubernetes-validations'] ?? []),
      {
        rule: `!has(oldSelf.${field}) || has(self.${field})`,
        message: `field ${field} is immutable once set`,
      },
    ];
  }
}

function declName(decl: Decl): string {
  return decl.name?.text ?? 'default';
}
