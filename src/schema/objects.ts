/**
 * Object schemas from properties: the members an interface, class or type literal declares (with
 * `extends` merged in first), the parts of an intersection, or the properties the checker computed for a
 * generic's instantiation or a mapped type (`Partial<T>`). Each property's schema is its type's (from the
 * mapper), its description and its markers; required lists are sorted, and immutable optional fields add
 * their once-set rule to the object.
 */
import { ts } from '../typescript/compiler.cjs';
import type { Marker } from '../markers/index.js';
import { applyMarkers } from './apply.js';
import type { Subject, TypeMapper } from './mapper.js';
import { declName, type Decl } from './resolve.js';
import { structuralProblems } from './structural.js';
import type { JSONSchemaProps } from './types.js';

type Member = ts.PropertySignature | ts.PropertyDeclaration;

/** Properties of an interface, class or type literal, with `extends` merged in first. */
export function declaredObjectSchema(
  m: TypeMapper,
  decl: ts.InterfaceDeclaration | ts.ClassDeclaration | ts.TypeLiteralNode,
  path: string,
): JSONSchemaProps {
  const schema: JSONSchemaProps = { type: 'object', properties: {} };
  const required = new Set<string>();
  const immutable: string[] = [];
  if (!ts.isTypeLiteralNode(decl)) {
    for (const clause of decl.heritageClauses ?? []) {
      if (clause.token !== ts.SyntaxKind.ExtendsKeyword) continue;
      for (const base of clause.types)
        mergeObject(m, schema, required, m.schemaOf(m.written(base, path)), base, path);
    }
  }
  for (const member of decl.members) {
    if (ts.isPropertySignature(member) || ts.isPropertyDeclaration(member)) {
      if (ts.isPropertyDeclaration(member)) {
        const mods = ts.getCombinedModifierFlags(member);
        if (mods & (ts.ModifierFlags.Static | ts.ModifierFlags.Private | ts.ModifierFlags.Protected))
          continue;
      }
      const name = propertyName(m, member.name, path);
      if (name === undefined) continue;
      const propPath = `${path}.${name}`;
      const subject = member.type && m.written(member.type, propPath, member.questionToken !== undefined);
      const markers = m.index.markersOf(member);
      const prop = propertySchema(m, member, markers, subject, propPath);
      schema.properties![name] = prop;
      if (isRequired(m, member, markers)) required.add(name);
      else required.delete(name);
      if (isImmutable(markers)) immutable.push(name);
    } else if (ts.isIndexSignatureDeclaration(member)) {
      const param = member.parameters[0];
      if (!param?.type || param.type.kind !== ts.SyntaxKind.StringKeyword) {
        m.reporter.at(
          member,
          'unsupported-type',
          `index signature at ${path} must have string keys`,
          'use { [key: string]: T }',
        );
        continue;
      }
      schema.additionalProperties = m.schemaOf(m.written(member.type, `${path}[key]`));
    } else if (ts.isConstructorDeclaration(member)) {
      // `constructor(public crew: number)` declares a property too, which its class's schema, read from
      // property declarations, would leave out without a word.
      for (const param of member.parameters) {
        if (!ts.isParameterPropertyDeclaration(param, member)) continue;
        const flags = ts.getCombinedModifierFlags(param);
        if (flags & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) continue;
        const name = param.name.getText();
        m.reporter.at(
          param,
          'unsupported-type',
          `${path}.${name} is declared as a constructor parameter; a class's schema is read from its property declarations`,
          `declare ${name} as a property of the class, and assign it in the constructor`,
        );
      }
    } else if (
      ts.isMethodSignature(member) ||
      ts.isMethodDeclaration(member) ||
      ts.isCallSignatureDeclaration(member) ||
      ts.isConstructSignatureDeclaration(member) ||
      ts.isGetAccessor(member) ||
      ts.isSetAccessor(member)
    ) {
      if (ts.isClassDeclaration(decl)) continue;
      m.reporter.at(
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
    m.reporter.at(
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

/** `A & B`: the parts' properties merged into one object. */
export function intersectionSchema(
  m: TypeMapper,
  node: ts.IntersectionTypeNode,
  path: string,
): JSONSchemaProps {
  const schema: JSONSchemaProps = { type: 'object', properties: {} };
  const required = new Set<string>();
  for (const part of node.types)
    mergeObject(m, schema, required, m.schemaOf(m.written(part, path)), part, path);
  if (required.size > 0) schema.required = [...required].sort();
  return schema;
}

/**
 * The properties of an object type the checker computed (generic instantiations, mapped types...). A
 * property's written type is used unless it depends on type parameters; `named` is the generic
 * declaration instantiated, whose description and type markers the result carries.
 */
export function computedObjectSchema(m: TypeMapper, s: Subject, named: Decl | undefined): JSONSchemaProps {
  const checker = m.checker;
  const schema: JSONSchemaProps = { type: 'object', properties: {} };
  const required: string[] = [];
  const immutable: string[] = [];
  for (const prop of checker.getPropertiesOfType(s.type)) {
    const propPath = `${s.path}.${prop.name}`;
    const declaration = prop.valueDeclaration ?? prop.declarations?.[0];
    const member =
      declaration && (ts.isPropertySignature(declaration) || ts.isPropertyDeclaration(declaration))
        ? declaration
        : undefined;
    const optional = (prop.flags & ts.SymbolFlags.Optional) !== 0;
    // Prefer the written type (it keeps int32 and friends) unless it depends on type parameters.
    const subject: Subject =
      member?.type && !mentionsTypeParameter(m, member.type)
        ? m.written(member.type, propPath, member.questionToken !== undefined)
        : {
            // `undefined` (an optional property's) is dropped by the union mapping; `null` stays nullable.
            type: checker.getTypeOfSymbolAtLocation(prop, s.at),
            at: s.at,
            path: propPath,
          };
    const markers = member ? m.index.markersOf(member) : [];
    schema.properties![prop.name] = propertySchema(m, member, markers, subject, propPath);
    // Partial<T> and Required<T> change a property's optionality: then the mapped type decides.
    const transformed = member !== undefined && (member.questionToken !== undefined) !== optional;
    if (member && !transformed ? isRequired(m, member, markers) : !optional) required.push(prop.name);
    if (member && isImmutable(markers)) immutable.push(prop.name);
  }
  const index = s.type.getStringIndexType();
  if (index) {
    if (Object.keys(schema.properties!).length === 0) delete schema.properties;
    schema.additionalProperties = m.schemaOf({ type: index, at: s.at, path: `${s.path}[key]` });
  }
  if (required.length > 0) schema.required = required.sort();
  addImmutableOnceSetRules(schema, immutable);
  if (named) {
    const description = m.index.descriptionOf(named);
    if (description !== undefined) schema.description = description;
    applyMarkers(schema, m.index.markersOf(named), `type ${declName(named)}`, m.reporter.marker);
  }
  return schema;
}

/**
 * A property's schema: its type's (none with `+kubebuilder:validation:Schemaless`), its description, its
 * markers, and the structural rules a property can break by itself.
 */
function propertySchema(
  m: TypeMapper,
  member: Member | undefined,
  markers: readonly Marker[],
  subject: Subject | undefined,
  path: string,
): JSONSchemaProps {
  let schema: JSONSchemaProps = {};
  if (markers.some(isSchemaless)) {
    // No schema: the marker's point.
  } else if (subject) {
    schema = m.schemaOf(subject);
  } else if (member) {
    m.reporter.at(
      member,
      'unsupported-type',
      `${path} has no declared type`,
      'write the property type explicitly',
    );
  }
  if (!member) return schema;
  const description = m.index.descriptionOf(member);
  if (description !== undefined) schema.description = description;
  applyMarkers(schema, markers, path, m.reporter.marker, m.isNamed);
  for (const problem of structuralProblems(schema))
    m.reporter.at(member, 'not-structural', `${path}: ${problem.message}`, problem.hint);
  return schema;
}

/** Merges a base's or an intersected part's object schema into `target`. */
function mergeObject(
  m: TypeMapper,
  target: JSONSchemaProps,
  required: Set<string>,
  source: JSONSchemaProps,
  node: ts.Node,
  path: string,
): void {
  if (source.type !== 'object' || (!source.properties && source.additionalProperties === undefined)) {
    if (source['x-kubernetes-preserve-unknown-fields']) return;
    m.reporter.at(
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

function propertyName(m: TypeMapper, name: ts.PropertyName, path: string): string | undefined {
  if (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name)) return name.text;
  m.reporter.at(name, 'unsupported-type', `computed property name at ${path}`, 'use a plain property name');
  return undefined;
}

/** Required unless optional: by the marker of highest precedence, then `?`, then the package's default. */
function isRequired(m: TypeMapper, member: Member, markers: readonly Marker[]): boolean {
  let decided: { value: boolean; precedence: number } | undefined;
  for (const marker of markers) {
    const required = marker.definition.field?.required;
    if (required && (!decided || required.precedence > decided.precedence)) decided = required;
  }
  if (decided) return decided.value;
  if (member.questionToken !== undefined) return false;
  return !m.optionalByDefault(member.getSourceFile());
}

function isImmutable(markers: readonly Marker[]): boolean {
  return markers.some(isImmutableMarker);
}

const isImmutableMarker = (marker: Marker) => marker.definition.field?.immutable === true;
const isSchemaless = (marker: Marker) => marker.definition.field?.schemaless === true;

function mentionsTypeParameter(m: TypeMapper, node: ts.TypeNode): boolean {
  let found = false;
  const visit = (n: ts.Node): void => {
    if (found) return;
    if (ts.isTypeReferenceNode(n) && m.checker.getTypeFromTypeNode(n).flags & ts.TypeFlags.TypeParameter)
      found = true;
    ts.forEachChild(n, visit);
  };
  visit(node);
  return found;
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
