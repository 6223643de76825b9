/**
 * Named formats as CRD rules see them (k8s.io/apiserver/pkg/cel/library/format.go): `format.named(n)`
 * and `format.<name>()` give a format whose `validate(s)` is none when the string is valid, else the
 * list of the Go validator's messages, word for word (k8s.io/apimachinery's validation and content
 * packages, and strfmt's checks for uuid, byte, date and datetime).
 */
import { re2Matches } from './re2.js';
import { requestURIError } from './urls.js';

/** A named format: the validator gives its messages, none when the string is valid. */
export class NamedFormat {
  constructor(
    readonly name: string,
    readonly validate: (s: string) => string[],
  ) {}
}

const maxLenError = (n: number) => `must be no more than ${n} bytes`;
const regexError = (msg: string, re: string, ...examples: string[]) =>
  examples.length === 0
    ? `${msg} (regex used for validation is '${re}')`
    : `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${re}')`;
/** Go's len(): bytes, not characters. */
const byteLength = (s: string) => new TextEncoder().encode(s).length;

const DNS1123_LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN = `${DNS1123_LABEL}(\\.${DNS1123_LABEL})*`;
const DNS1035_LABEL = '[a-z]([-a-z0-9]*[a-z0-9])?';
const LABEL_KEY = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_VALUE = `(${LABEL_KEY})?`;
/** A Go regexp.MatchString of `^re$`: RE2, linear in the text (JavaScript's RegExp backtracks on these). */
const whole = (re: string) => ({ test: (s: string) => re2Matches(`^${re}$`, s) === true });
const dns1123Label = whole(DNS1123_LABEL);
const dns1123Subdomain = whole(DNS1123_SUBDOMAIN);
const dns1035Label = whole(DNS1035_LABEL);
const labelKey = whole(LABEL_KEY);
const labelValue = whole(LABEL_VALUE);

function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 63) errs.push(maxLenError(63));
  if (!dns1123Label.test(value)) {
    if (dns1123Subdomain.test(value)) errs.push('must not contain dots');
    else
      errs.push(
        regexError(
          "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
          DNS1123_LABEL,
          'my-name',
          '123-abc',
        ),
      );
  }
  return errs;
}

function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 253) errs.push(maxLenError(253));
  if (!dns1123Subdomain.test(value))
    errs.push(
      regexError(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        DNS1123_SUBDOMAIN,
        'example.com',
      ),
    );
  return errs;
}

function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 63) errs.push(maxLenError(63));
  if (!dns1035Label.test(value))
    errs.push(
      regexError(
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
        DNS1035_LABEL,
        'my-name',
        'abc-123',
      ),
    );
  return errs;
}

const LABEL_KEY_MESSAGE =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/** content.IsLabelKey, which IsQualifiedName is. */
function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) name = parts[0]!;
  else if (parts.length === 2) {
    const prefix = parts[0]!;
    name = parts[1]!;
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else errs.push(...isDNS1123Subdomain(prefix).map((m) => `prefix part ${m}`));
  } else
    return [
      `a valid label key ${regexError(LABEL_KEY_MESSAGE, LABEL_KEY, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (byteLength(name) > 63) errs.push(`name part ${maxLenError(63)}`);
  if (!labelKey.test(name))
    errs.push(`name part ${regexError(LABEL_KEY_MESSAGE, LABEL_KEY, 'MyName', 'my.name', '123-abc')}`);
  return errs;
}

function isLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 63) errs.push(maxLenError(63));
  if (!labelValue.test(value))
    errs.push(
      regexError(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        LABEL_VALUE,
        'MyValue',
        'my_value',
        '12345',
      ),
    );
  return errs;
}

/** generic.go's maskTrailingDash, as it is: it drops the last two bytes and adds an "a". */
const maskTrailingDash = (name: string) =>
  name.length > 1 && name.endsWith('-') ? `${name.slice(0, -2)}a` : name;

const uri = (s: string): string[] => {
  const error = requestURIError(s);
  return error === undefined ? [] : [error];
};

/** Whether a YYYY-MM-DD names a day of the calendar (Go's time.Parse refuses February 30). */
export function isCalendarDate(s: string): boolean {
  const [y, m, d] = s.split('-').map(Number) as [number, number, number];
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1];
  return days !== undefined && d >= 1 && d <= days;
}

/** kube-openapi's strfmt checks (as the schema's `format` uses them). */
const STRFMT: Record<string, (s: string) => boolean> = {
  uuid: (s) => /^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/.test(s),
  byte: (s) => /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s),
  date: (s) => /^\d{4}-\d{2}-\d{2}$/.test(s) && isCalendarDate(s),
  datetime: (s) =>
    /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/.test(s) &&
    isCalendarDate(s.slice(0, 10)) &&
    !Number.isNaN(Date.parse(s.replace(' ', 'T'))),
};
const strfmt = (name: string, message: string) => (s: string) => (STRFMT[name]!(s) ? [] : [message]);

/** The formats by the name format.named() and the `format.<name>()` constants use. */
export const NAMED_FORMATS: Record<string, NamedFormat> = {
  dns1123Label: new NamedFormat('DNS1123Label', isDNS1123Label),
  dns1123Subdomain: new NamedFormat('DNS1123Subdomain', isDNS1123Subdomain),
  dns1035Label: new NamedFormat('DNS1035Label', isDNS1035Label),
  qualifiedName: new NamedFormat('QualifiedName', isQualifiedName),
  dns1123LabelPrefix: new NamedFormat('DNS1123LabelPrefix', (s) => isDNS1123Label(maskTrailingDash(s))),
  dns1123SubdomainPrefix: new NamedFormat('DNS1123SubdomainPrefix', (s) =>
    isDNS1123Subdomain(maskTrailingDash(s)),
  ),
  dns1035LabelPrefix: new NamedFormat('DNS1035LabelPrefix', (s) => isDNS1035Label(maskTrailingDash(s))),
  labelValue: new NamedFormat('LabelValue', isLabelValue),
  uri: new NamedFormat('URI', uri),
  uuid: new NamedFormat('uuid', strfmt('uuid', 'does not match the UUID format')),
  byte: new NamedFormat('byte', strfmt('byte', 'invalid base64')),
  date: new NamedFormat('date', strfmt('date', 'invalid date')),
  datetime: new NamedFormat('datetime', strfmt('datetime', 'invalid datetime')),
};
