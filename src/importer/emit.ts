/**
 * A CRD version as TypeScript in kubesmith's marker dialect (docs/manifests.md), written so that
 * `kubesmith manifests` makes the same CRD again: each schema keyword becomes the type or the marker the
 * generator maps back, and a keyword nothing can say stops the import with its path (never dropped).
 *
 * - A property's keywords are markers on the property, its description its doc comment; an object with
 *   properties becomes an interface named after its path (`CertificateSpecKeystores`), which then carries
 *   no doc or marker of its own (a property's description and markers win over, and combine with, its
 *   type's).
 * - Array items and map values with keywords of their own become named declarations carrying them
 *   (`type CertificateSpecDnsNamesItem = string`), since only those can hold markers there.
 * - Strings in markers are JSON strings (the marker grammar reads JSON's escapes); descriptions escape what
 *   would end the comment (`*\/`) or read as a marker (a leading `\` before `+`, `TODO`, `---`), which the
 *   description reader undoes.
 */
import { KubesmithError } from '../errors.js';
import { QUANTITY_PATTERN, TYPE_META_DESCRIPTIONS } from '../schema/k8s-data.js';
import type { JSONSchemaProps, ValidationRule } from '../schema/types.js';
import type { Crd, CrdVersion } from './crd.js';

/** Names the emitted code uses besides the kind's own declarations. */
const RUNTIME_NAMES = ['IntOrString', 'ObjectMeta', 'Quantity', 'RawExtension', 'int32', 'int64'] as const;
type RuntimeName = (typeof RUNTIME_NAMES)[number];

/** Global types a declared name must not shadow (the emitted code or the generator reads them). */
const GLOBALS = new Set([
  'Array',
  'ReadonlyArray',
  'Record',
  'Partial',
  'Pick',
  'Omit',
  'Required',
  'Readonly',
  'Object',
  'String',
  'Number',
  'Boolean',
  'Date',
  'Function',
  'Symbol',
  'Promise',
  'Map',
  'Set',
  'Error',
  'RegExp',
  'JSON',
  'Math',
  'GroupVersion',
]);

const FALSE_AS_ABSENT = [
  'nullable',
  'uniqueItems',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-int-or-string',
  'x-kubernetes-preserve-unknown-fields',
] as const;

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/**
 * One CRD version as the content of its `<kind>.types.ts`, laid out as Prettier prints it with a new
 * project's settings and `printWidth` (format.ts says when Prettier must still run).
 */
export function emitVersion(crd: Crd, version: CrdVersion, header: string, printWidth = 110): string {
  return new VersionWriter(crd, version, printWidth).write(header);
}

/** The `group-version.ts` of a directory, as `create api` writes it. */
export function emitGroupVersion(group: string, version: string, header: string): string {
  return `${header}/**
 * Package ${version} contains API Schema definitions for the ${group} ${version} API group.
 * +groupName=${group}
 */
import { groupVersion } from '@kubesmith/runtime';

/** GroupVersion is the group and version of the kinds in this directory. */
export const GroupVersion = groupVersion('${group}', '${version}');
`;
}

interface Use {
  /** The TypeScript type. */
  type: string;
  /** Whether the type is a union (`A | B`), which needs parentheses as an array's items. */
  union: boolean;
  /** A union Prettier may break one member a line: its members (literals and keywords). */
  members?: string[];
  /** An array of such a union: the union's members. */
  items?: string[];
  /** Markers that may stand on a property or a type. */
  markers: string[];
  /** Markers that stand on properties only (default, example, Schemaless). */
  fieldMarkers: string[];
}

/** A string as a marker's value (JSON's escapes, which the marker grammar reads), safe in a comment. */
export function markerString(text: string): string {
  return commentSafe(JSON.stringify(text));
}

/** What a comment cannot hold: its end, and line separators JavaScript reads as line ends. */
function commentSafe(text: string): string {
  return text.replaceAll('*/', '*\\/').replaceAll('\u2028', '\\u2028').replaceAll('\u2029', '\\u2029');
}

/**
 * A string as a TypeScript string literal, in the quotes Prettier prints it in with `singleQuote`: single
 * ones unless the text holds more single than double quotes (then JSON's double-quoted form as it is).
 */
export function tsString(text: string): string {
  const json = JSON.stringify(text);
  let singles = 0;
  let doubles = 0;
  for (const char of text) {
    if (char === "'") singles++;
    else if (char === '"') doubles++;
  }
  if (singles > doubles) return json;
  // JSON's escapes but for `\"`, which single quotes do not need, and `'`, which they do.
  const inner = json
    .slice(1, -1)
    .replace(/\\(.)|'/gs, (match, escaped: string | undefined) =>
      escaped === undefined ? "\\'" : escaped === '"' ? '"' : match,
    );
  return `'${inner}'`;
}

function markerJson(value: unknown): string {
  return commentSafe(JSON.stringify(value));
}

/** The doc comment lines of a description (docs/manifests.md, "Descriptions"). */
export function descriptionLines(description: string): string[] {
  return description
    .replaceAll('\r\n', '\n')
    .split(/\n|\r|\u2028|\u2029/)
    .map((line) => {
      const escaped = line.replaceAll('*/', '*\\/');
      return /^\s*(\+|TODO|---|\\)/.test(escaped) ? escaped.replace(/^(\s*)/, '$1\\') : escaped;
    });
}

/**
 * A doc comment as Prettier prints it: on one line when it has one, else one ` * ` line each, without
 * white space at their ends (Prettier trims a multi-line comment's lines).
 */
function docComment(lines: readonly string[], indent = ''): string {
  if (lines.length === 0) return '';
  if (lines.length === 1 && lines[0] !== '') return `${indent}/** ${lines[0]} */\n`;
  const body = lines.map((line) => {
    const text = line.trimEnd();
    return `${indent} *${text === '' ? '' : ` ${text}`}`;
  });
  return `${indent}/**\n${body.join('\n')}\n${indent} */\n`;
}

const pascal = (name: string): string => {
  const words = name.split(/[^A-Za-z0-9]+/).filter((w) => w !== '');
  const joined = words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
  return /^[A-Za-z]/.test(joined) ? joined : `X${joined}`;
};

/**
 * `head type tail` as Prettier lays it out in `width` columns: on one line when it fits; else a union on
 * the next line, or one member a line when it does not fit there either (inside parentheses for an
 * array of a union); a type alias's named type on the next line. Any other type that does not fit stays
 * on one long line, for Prettier to lay out (format.ts).
 */
function laidOut(
  head: string,
  use: Pick<Use, 'type' | 'members' | 'items'>,
  tail: string,
  indent: string,
  width: number,
): string {
  const line = `${head} ${use.type}${tail}`;
  if (line.length <= width) return line;
  const inner = `${indent}  `;
  const each = (members: readonly string[]) => members.map((m) => `${inner}| ${m}`).join('\n');
  if (use.members) {
    const flat = `${inner}${use.members.join(' | ')}${tail}`;
    return flat.length <= width ? `${head}\n${flat}` : `${head}\n${each(use.members)}${tail}`;
  }
  if (use.items) {
    const flat = `${inner}${use.items.join(' | ')}`;
    return `${head} (\n${flat.length <= width ? flat : each(use.items)}\n${indent})[]${tail}`;
  }
  // A type alias whose name leaves no room: a named type (or an array of it, or it or null) goes to the
  // next line.
  const next = `${inner}${use.type}${tail}`;
  if (head.endsWith(' =') && /^[\w$]+(\[\])*( \| null)?$/.test(use.type) && next.length <= width)
    return `${head}\n${next}`;
  return line;
}

/** An interface as Prettier prints it: `{}` when it has no members. */
const interfaceDeclaration = (name: string, members: readonly string[]): string =>
  members.length === 0
    ? `export interface ${name} {}`
    : `export interface ${name} {\n${members.join('\n')}\n}`;

const propertyKey = (name: string): string => (IDENTIFIER.test(name) ? name : tsString(name));

function isIntOrStringPair(branches: JSONSchemaProps[] | undefined): boolean {
  return (
    branches !== undefined &&
    branches.length === 2 &&
    JSON.stringify(branches[0]) === '{"type":"integer"}' &&
    JSON.stringify(branches[1]) === '{"type":"string"}'
  );
}

class VersionWriter {
  /** Declarations in the order they are written; `made`: an interface made for one node. */
  private readonly declarations: { name: string; doc: string[]; body: string; made: boolean }[] = [];
  private readonly names = new Set<string>();
  private readonly runtime = new Map<RuntimeName, string>();

  constructor(
    private readonly crd: Crd,
    private readonly version: CrdVersion,
    private readonly printWidth: number,
  ) {
    this.names.add(crd.kind);
    this.names.add(`${crd.kind}Kind`);
    // A kind named like a runtime type gets that type under another name.
    for (const name of RUNTIME_NAMES) this.runtime.set(name, name === crd.kind ? `${name}Type` : name);
    for (const alias of this.runtime.values()) this.names.add(alias);
    // And a kind named GroupVersion gets the directory's GroupVersion under another name.
    this.groupVersion = crd.kind === 'GroupVersion' ? 'GroupVersionOfKinds' : 'GroupVersion';
    this.names.add(this.groupVersion);
  }

  private readonly groupVersion: string;

  private fail(path: string, message: string): never {
    throw new KubesmithError(`${this.crd.origin}: version ${this.version.name}: ${path || '.'}: ${message}`, {
      hint: 'kubesmith import crd cannot express this yet; edit the CRD or leave the kind out (nothing was written)',
    });
  }

  private use(name: RuntimeName): string {
    return this.runtime.get(name)!;
  }

  private readonly used = new Set<RuntimeName>();

  private runtimeType(name: RuntimeName): string {
    this.used.add(name);
    return this.use(name);
  }

  /** A declaration name not yet taken in this file, from a path. */
  private nameFor(hint: string): string {
    let name = hint;
    for (
      let n = 2;
      this.names.has(name) || GLOBALS.has(name) || RUNTIME_NAMES.includes(name as RuntimeName);
      n++
    )
      name = `${hint}${n}`;
    this.names.add(name);
    return name;
  }

  write(header: string): string {
    const { crd, version } = this;
    const root = version.schema;
    const body = this.rootInterface(root);
    const imports = [...this.used].map((name) =>
      this.use(name) === name ? name : `${name} as ${this.use(name)}`,
    );
    const importLine =
      imports.length > 0 ? `import type { ${imports.sort().join(', ')} } from '@kubesmith/runtime';\n` : '';
    const constant = `/** ${crd.kind}Kind names the ${crd.plural} resource for the client and the controller builder. */
export const ${crd.kind}Kind = ${this.groupVersion}.kind<${crd.kind}>('${crd.kind}', {
  plural: '${crd.plural}',
  namespaced: ${crd.scope === 'Namespaced'},
});
`;
    // An object without properties is an empty interface, which typescript-eslint's recommended rules
    // (a new project's lint) refuse unless told.
    const empty =
      /^export interface \w+ \{\}$/m.test(body) ||
      this.declarations.some((d) => /^export interface \w+ \{\}$/.test(d.body));
    const lint = empty ? '/* eslint-disable @typescript-eslint/no-empty-object-type */\n' : '';
    return `${header}// Imported by kubesmith import crd from the CRD ${crd.plural}.${crd.group}: regenerate rather than edit.
${lint}${importLine}import { ${this.groupVersion === 'GroupVersion' ? 'GroupVersion' : `GroupVersion as ${this.groupVersion}`} } from './group-version.js';

${[...this.declarations.map((d) => `${docComment(d.doc)}${d.body}\n`), body].join('\n')}
${constant}`;
  }

  private kindMarkers(): string[] {
    const { crd, version } = this;
    const resource = [`path=${crd.plural}`, `singular=${crd.singular}`, `scope=${crd.scope}`];
    if (crd.shortNames.length > 0) resource.push(`shortName=${crd.shortNames.join(';')}`);
    if (crd.categories.length > 0) resource.push(`categories=${crd.categories.join(';')}`);
    const markers = ['+kubebuilder:object:root=true', `+kubebuilder:resource:${resource.join(',')}`];
    if (version.storage && crd.versions.length > 1) markers.push('+kubebuilder:storageversion');
    if (!version.served) markers.push('+kubebuilder:unservedversion');
    if (version.deprecated) {
      markers.push(
        version.deprecationWarning !== undefined
          ? `+kubebuilder:deprecatedversion:warning=${markerString(version.deprecationWarning)}`
          : '+kubebuilder:deprecatedversion',
      );
    }
    const sub = version.subresources ?? {};
    if (sub.status) markers.push('+kubebuilder:subresource:status');
    if (sub.scale) {
      const args = [
        `specpath=${markerString(sub.scale.specReplicasPath)}`,
        `statuspath=${markerString(sub.scale.statusReplicasPath)}`,
      ];
      if (sub.scale.labelSelectorPath !== undefined)
        args.push(`selectorpath=${markerString(sub.scale.labelSelectorPath)}`);
      markers.push(`+kubebuilder:subresource:scale:${args.join(',')}`);
    }
    for (const c of version.additionalPrinterColumns ?? []) {
      const args = [
        `name=${markerString(c.name)}`,
        `type=${markerString(c.type)}`,
        `JSONPath=${markerString(c.jsonPath)}`,
      ];
      if (c.description !== undefined) args.push(`description=${markerString(c.description)}`);
      if (c.format !== undefined) args.push(`format=${markerString(c.format)}`);
      if (c.priority !== undefined && c.priority !== 0) args.push(`priority=${c.priority}`);
      markers.push(`+kubebuilder:printcolumn:${args.join(',')}`);
    }
    for (const f of version.selectableFields ?? [])
      markers.push(`+kubebuilder:selectablefield:JSONPath=${markerString(f.jsonPath)}`);
    const annotations = Object.entries(crd.annotations).map(([k, v]) => `${k}=${v}`);
    if (annotations.length > 0)
      markers.push(`+kubebuilder:metadata:annotations=${annotations.map(markerString).join(';')}`);
    return markers;
  }

  private rootInterface(root: JSONSchemaProps): string {
    const { crd, version } = this;
    const { properties = {}, required = [], description, type, ...rest } = root;
    if (type !== 'object') this.fail('', 'the root schema is not an object');
    const requiredSet = new Set(required);
    const rootMarkers: string[] = [];
    const keptRequired = ['apiVersion', 'kind', 'metadata'].filter((n) => requiredSet.has(n));
    if (keptRequired.length > 0) rootMarkers.push(`+kubesmith:root:required=${keptRequired.join(';')}`);
    const typeMeta = ['apiVersion', 'kind'].filter((n) => n in properties);
    const undocumented = typeMeta.filter((n) => properties[n]?.description === undefined);
    if (undocumented.length > 0) {
      // The marker drops both standard descriptions: the other one, if any, is written out.
      rootMarkers.push('+kubesmith:root:typeMetaDescriptions=false');
    }
    const members: string[] = [];
    for (const [name, prop] of Object.entries(properties)) {
      if (name === 'apiVersion' || name === 'kind') {
        const { description: d, type: t, ...other } = prop;
        if (t !== 'string' || Object.keys(other).length > 0)
          this.fail(`.${name}`, `${name} is not a plain string`);
        const literal = name === 'kind' ? crd.kind : `${crd.group}/${version.name}`;
        const standard = d === TYPE_META_DESCRIPTIONS[name] && undocumented.length === 0;
        const doc = d === undefined || standard ? '' : docComment(descriptionLines(d), '  ');
        // Never optional to TypeScript (a client sends them); +kubesmith:root:required says what the schema requires.
        members.push(`${doc}  ${name}: '${literal}';`);
        continue;
      }
      if (name === 'metadata') {
        const { type: t, ...other } = prop;
        if (t !== 'object' || Object.keys(other).length > 0)
          this.fail('.metadata', 'metadata is more than {type: object}');
        members.push(`  metadata?: ${this.runtimeType('ObjectMeta')};`);
        continue;
      }
      members.push(this.property(name, prop, requiredSet.has(name), `${crd.kind}`, `.${name}`));
    }
    for (const name of requiredSet) {
      if (!(name in properties))
        this.fail('.required', `${JSON.stringify(name)} is required but not a property`);
    }
    const use: Use = { type: 'object', union: false, markers: [], fieldMarkers: [] };
    this.keywordMarkers(rest, use, '');
    if (use.fieldMarkers.length > 0) this.fail('', 'a keyword only a property can carry stands on the root');
    const doc = [
      ...(description !== undefined ? descriptionLines(description) : []),
      ...this.kindMarkers(),
      ...rootMarkers,
      ...use.markers,
    ];
    return `${docComment(doc)}${interfaceDeclaration(crd.kind, members)}\n`;
  }

  /** A property of an interface: its doc comment, markers and declaration. */
  private property(
    name: string,
    schema: JSONSchemaProps,
    required: boolean,
    parent: string,
    path: string,
  ): string {
    const use = this.schemaUse(schema, `${parent}${pascal(name)}`, path);
    const lines = [
      ...(schema.description !== undefined ? descriptionLines(schema.description) : []),
      ...use.markers,
      ...use.fieldMarkers,
    ];
    const head = `  ${propertyKey(name)}${required ? '' : '?'}:`;
    return `${docComment(lines, '  ')}${laidOut(head, use, ';', '  ', this.printWidth)}`;
  }

  /**
   * The type of a node that is not a property (array items, map values): inline when it needs no doc or
   * marker, else a named declaration that carries them (the interface made for it, or an alias).
   */
  private typePosition(
    schema: JSONSchemaProps,
    hint: string,
    path: string,
  ): Pick<Use, 'type' | 'union' | 'members'> {
    const use = this.schemaUse(schema, hint, path, true);
    if (use.fieldMarkers.length > 0) {
      this.fail(path, `${use.fieldMarkers.join(', ')} cannot stand on array items or map values`);
    }
    const doc = [
      ...(schema.description !== undefined ? descriptionLines(schema.description) : []),
      ...use.markers,
    ];
    if (doc.length === 0) return use;
    const made = this.declarations.find((d) => d.name === use.type && d.made);
    if (made) {
      made.doc = doc;
      return use;
    }
    const name = this.nameFor(hint);
    const body = laidOut(`export type ${name} =`, use, ';', '', this.printWidth);
    this.declarations.push({ name, doc, body, made: false });
    return { type: name, union: false };
  }

  /** An interface for an object's properties, declared after the types of its members. */
  private interfaceFor(schema: JSONSchemaProps, hint: string, path: string): string {
    const name = this.nameFor(hint);
    const required = new Set(schema.required ?? []);
    for (const r of required) {
      if (!(r in (schema.properties ?? {})))
        this.fail(`${path}.required`, `${JSON.stringify(r)} is required but not a property`);
    }
    const members = Object.entries(schema.properties ?? {}).map(([prop, s]) =>
      this.property(prop, s, required.has(prop), name, `${path}.${prop}`),
    );
    this.declarations.push({
      name,
      doc: [],
      body: interfaceDeclaration(name, members),
      made: true,
    });
    return name;
  }

  /** The type and markers of a node. */
  private schemaUse(schema: JSONSchemaProps, hint: string, path: string, typePosition = false): Use {
    const use: Use = { type: '', union: false, markers: [], fieldMarkers: [] };
    // The keywords the type says are set to undefined, not deleted: deleting turns the copy into a slow
    // dictionary object (keywordMarkers reads only the keywords with a value).
    const rest: JSONSchemaProps = { ...schema };
    rest.description = undefined;
    // A flag set to false says what its absence says (the API server's defaults): nothing to write.
    for (const flag of FALSE_AS_ABSENT) if (rest[flag] === false) rest[flag] = undefined;
    let schemaless = false;
    if (rest['x-kubernetes-int-or-string'] === true && rest.type === undefined) {
      rest['x-kubernetes-int-or-string'] = undefined;
      if (isIntOrStringPair(rest.anyOf)) {
        rest.anyOf = undefined;
        if (rest.pattern === QUANTITY_PATTERN) {
          rest.pattern = undefined;
          use.type = this.runtimeType('Quantity');
        } else use.type = this.runtimeType('IntOrString');
      } else {
        schemaless = true;
        use.type = 'unknown';
        use.markers.push('+kubebuilder:validation:XIntOrString');
      }
    } else if (rest.type === undefined) {
      if (rest['x-kubernetes-preserve-unknown-fields'] === true) {
        rest['x-kubernetes-preserve-unknown-fields'] = undefined;
        use.type = 'unknown';
      } else {
        schemaless = true;
        use.type = 'unknown';
      }
    } else if (rest.type === 'string') {
      if (rest.enum && rest.enum.length > 0 && rest.enum.every((v) => typeof v === 'string')) {
        const literals = rest.enum.map((v) => tsString(v as string));
        use.type = literals.join(' | ');
        use.union = literals.length > 1;
        if (use.union) use.members = literals;
        rest.enum = undefined;
      } else use.type = 'string';
      rest.type = undefined;
    } else if (rest.type === 'integer') {
      if (rest.format === 'int32' || rest.format === 'int64') {
        use.type = this.runtimeType(rest.format);
        rest.format = undefined;
      } else {
        use.type = 'number';
        use.markers.push('+kubebuilder:validation:Type=integer');
      }
      rest.type = undefined;
    } else if (rest.type === 'number') {
      use.type = 'number';
      rest.type = undefined;
    } else if (rest.type === 'boolean') {
      use.type = 'boolean';
      rest.type = undefined;
    } else if (rest.type === 'array') {
      rest.type = undefined;
      if (rest.items === undefined) {
        schemaless = true;
        use.type = 'unknown';
        use.markers.push('+kubebuilder:validation:Type=array');
      } else {
        const item = this.typePosition(rest.items, `${hint}Item`, `${path}[]`);
        use.type = item.union ? `(${item.type})[]` : `${item.type}[]`;
        if (item.members) use.items = item.members;
        rest.items = undefined;
      }
    } else if (rest.type === 'object') {
      rest.type = undefined;
      if (rest.properties !== undefined) {
        if (rest.additionalProperties !== undefined)
          this.fail(path, 'both properties and additionalProperties');
        use.type = this.interfaceFor(
          { properties: rest.properties, ...(rest.required ? { required: rest.required } : {}) },
          hint,
          path,
        );
        rest.properties = undefined;
        rest.required = undefined;
        if (rest['x-kubernetes-map-type'] !== undefined) {
          use.markers.push(`+structType=${markerString(rest['x-kubernetes-map-type'])}`);
          rest['x-kubernetes-map-type'] = undefined;
        }
      } else if (typeof rest.additionalProperties === 'object') {
        const value = this.typePosition(rest.additionalProperties, `${hint}Value`, `${path}[*]`);
        use.type = `{ [key: string]: ${value.type} }`;
        rest.additionalProperties = undefined;
      } else if (rest.additionalProperties !== undefined) {
        this.fail(path, `additionalProperties: ${String(rest.additionalProperties)}`);
      } else if (rest['x-kubernetes-preserve-unknown-fields'] === true) {
        // RawExtension is exactly {type: object, x-kubernetes-preserve-unknown-fields: true}.
        rest['x-kubernetes-preserve-unknown-fields'] = undefined;
        use.type = this.runtimeType('RawExtension');
      } else {
        schemaless = true;
        use.type = 'unknown';
        use.markers.push('+kubebuilder:validation:Type=object');
      }
      if (rest.required !== undefined) this.fail(`${path}.required`, 'required without properties');
    } else {
      this.fail(`${path}.type`, `unknown type ${JSON.stringify(rest.type)}`);
    }
    if (rest.nullable === true) {
      // A keyword or a literal and null Prettier breaks like any union; a named type and null it keeps
      // on one line (and an array or a map and null this does not lay out: format.ts has Prettier do it).
      if (use.members) use.members.push('null');
      else if (/^(string|number|boolean|unknown|'[^'\\]*')$/.test(use.type)) use.members = [use.type, 'null'];
      use.items = undefined;
      use.type = `${use.type} | null`;
      use.union = true;
      rest.nullable = undefined;
    }
    if (schemaless) {
      if (typePosition)
        this.fail(path, 'a node without a type the TypeScript says as array items or map values');
      use.fieldMarkers.unshift('+kubebuilder:validation:Schemaless');
    }
    this.keywordMarkers(rest, use, path);
    return use;
  }

  /** The markers of the keywords the type did not say. */
  private keywordMarkers(rest: JSONSchemaProps, use: Use, path: string): void {
    const V = '+kubebuilder:validation:';
    const m = use.markers;
    const take = <K extends (typeof SAID_BY_MARKERS)[number]>(key: K): JSONSchemaProps[K] => rest[key];
    const num = (
      key:
        | 'maximum'
        | 'minimum'
        | 'multipleOf'
        | 'maxLength'
        | 'minLength'
        | 'maxItems'
        | 'minItems'
        | 'maxProperties'
        | 'minProperties',
      marker: string,
    ) => {
      const value = take(key);
      if (value !== undefined) m.push(`${V}${marker}=${value}`);
    };
    const format = take('format');
    if (format !== undefined) m.push(`${V}Format=${markerString(format)}`);
    const title = take('title');
    if (title !== undefined) m.push(`+kubebuilder:title=${markerString(title)}`);
    num('maximum', 'Maximum');
    num('minimum', 'Minimum');
    if (take('exclusiveMaximum') === true) m.push(`${V}ExclusiveMaximum=true`);
    if (take('exclusiveMinimum') === true) m.push(`${V}ExclusiveMinimum=true`);
    num('multipleOf', 'MultipleOf');
    num('maxLength', 'MaxLength');
    num('minLength', 'MinLength');
    const pattern = take('pattern');
    if (pattern !== undefined) m.push(`${V}Pattern=${markerString(pattern)}`);
    num('maxItems', 'MaxItems');
    num('minItems', 'MinItems');
    if (take('uniqueItems') === true) m.push(`${V}UniqueItems=true`);
    num('maxProperties', 'MaxProperties');
    num('minProperties', 'MinProperties');
    const values = take('enum');
    if (values !== undefined) {
      if (values.some((v) => typeof v === 'object' && v !== null))
        this.fail(`${path}.enum`, 'an enum of objects or lists');
      m.push(
        `${V}Enum=${values.map((v) => (typeof v === 'string' ? markerString(v) : String(v))).join(';')}`,
      );
    }
    if (take('x-kubernetes-embedded-resource') === true) m.push(`${V}XEmbeddedResource`);
    if (take('x-kubernetes-preserve-unknown-fields') === true)
      m.push('+kubebuilder:pruning:PreserveUnknownFields');
    if (take('x-kubernetes-int-or-string') === true) m.push(`${V}XIntOrString`);
    const listType = take('x-kubernetes-list-type');
    if (listType !== undefined) m.push(`+listType=${markerString(listType)}`);
    for (const key of take('x-kubernetes-list-map-keys') ?? []) m.push(`+listMapKey=${markerString(key)}`);
    const mapType = take('x-kubernetes-map-type');
    if (mapType !== undefined) m.push(`+mapType=${markerString(mapType)}`);
    for (const rule of take('x-kubernetes-validations') ?? []) m.push(validationMarker(rule));
    const docs = take('externalDocs');
    if (docs !== undefined) {
      m.push(
        `+kubebuilder:externalDocs:url=${markerString(docs.url)}${docs.description !== undefined ? `,description=${markerString(docs.description)}` : ''}`,
      );
    }
    for (const key of ['allOf', 'anyOf', 'oneOf', 'not'] as const) {
      const value = (rest as Record<string, unknown>)[key];
      if (value === undefined) continue;
      m.push(`+kubesmith:validation:${key}=${markerJson(value)}`);
    }
    const defaultValue = take('default');
    if (defaultValue !== undefined) use.fieldMarkers.push(`+default=${markerJson(defaultValue)}`);
    const example = take('example');
    if (example !== undefined) use.fieldMarkers.push(`+kubesmith:example=${markerJson(example)}`);
    // `type` left over: an object's own keywords were taken by the type.
    const unknown = Object.keys(rest).filter(
      (key) => !SAID.has(key) && (rest as Record<string, unknown>)[key] !== undefined,
    );
    if (unknown.length > 0)
      this.fail(path, `unsupported keyword${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}`);
  }
}

/**
 * The keywords keywordMarkers says (take() accepts only these, so that a keyword it learns to say is added
 * here), and `type`, which the type said: any other keyword left in a node is unsupported. A constant, as
 * keeping a set per node cost a tenth of the emitter.
 */
const SAID_BY_MARKERS = [
  'format',
  'title',
  'maximum',
  'minimum',
  'exclusiveMaximum',
  'exclusiveMinimum',
  'multipleOf',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'maxProperties',
  'minProperties',
  'enum',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-int-or-string',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
  'x-kubernetes-validations',
  'externalDocs',
  'allOf',
  'anyOf',
  'oneOf',
  'not',
  'default',
  'example',
] as const satisfies readonly (keyof JSONSchemaProps)[];
const SAID = new Set<string>([...SAID_BY_MARKERS, 'type']);

function validationMarker(rule: ValidationRule): string {
  const args = [`rule=${markerString(rule.rule)}`];
  if (rule.message !== undefined) args.push(`message=${markerString(rule.message)}`);
  if (rule.messageExpression !== undefined)
    args.push(`messageExpression=${markerString(rule.messageExpression)}`);
  if (rule.reason !== undefined) args.push(`reason=${markerString(rule.reason)}`);
  if (rule.fieldPath !== undefined) args.push(`fieldPath=${markerString(rule.fieldPath)}`);
  if (rule.optionalOldSelf !== undefined) args.push(`optionalOldSelf=${rule.optionalOldSelf === true}`);
  return `+kubebuilder:validation:XValidation:${args.join(',')}`;
}
