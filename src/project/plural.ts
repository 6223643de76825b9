/**
 * English plurals of kind names, as kubebuilder and controller-gen make them: both use the Go inflection
 * library github.com/gobuffalo/flect v1.0.3. They call it differently, so there are two entry points:
 * kubebuilder pluralizes the lower-cased kind (`defaultPlural` in resource.ts, the plural `create api`
 * records), controller-gen pluralizes the kind and lower-cases the result (`crdDefaultPlural`, a CRD's
 * plural without `+kubebuilder:resource:path`). They differ for some kinds (`ClusterDNS`: clusterdns,
 * clusterdnses). test/fixtures/plurals/plurals.tsv holds flect's answers for ~1,800 kind names
 * (docs/architecture.md says how to regenerate it) and plural.test.ts requires ours to be the same.
 *
 * How a word is pluralized: only its last word counts (`ClusterPolicy` -> `Policy`, split at case changes,
 * after an acronym and at separators); an irregular word is looked up, a word already plural is kept, then
 * the first matching suffix rule applies; otherwise `s` is added unless the word already ends in `s`.
 */

/**
 * Irregular words, in the library's priority order (later entries are tried first as suffixes of a
 * longer word). `singular:plural`, then optionally `/other` (another plural, also recognised as plural),
 * `!` (the word alone, never as the end of a longer word) and `>` (the plural is not recognised as
 * plural: it belongs to another word).
 */
const IRREGULAR = `
aircraft:aircraft beef:beef/beefs bison:bison blues:blues> chassis:chassis deer:deer fish:fish/fishes
moose:moose police:police salmon:salmon/salmons series:series sheep:sheep shrimp:shrimp/shrimps
species:species swine:swine/swines trout:trout/trouts tuna:tuna/tunas you:you
child:children ox:oxen! foot:feet goose:geese man:men human:humans louse:lice! mouse:mice tooth:teeth
woman:women die:dice! person:people
adieu:adieux/adieus fabliau:fabliaux bureau:bureaus/bureaux
criterion:criteria ganglion:ganglia/ganglions lexicon:lexica/lexicons mitochondrion:mitochondria/mitochondrions
noumenon:noumena phenomenon:phenomena taxon:taxa
media:media medium:media/mediums> stadium:stadiums/stadia aquarium:aquaria/aquariums
auditorium:auditoria/auditoriums symposium:symposia/symposiums curriculum:curriculums/curricula quota:quotas
alumnus:alumni/alumnuses bacillus:bacilli cactus:cacti/cactuses coccus:cocci focus:foci/focuses
locus:loci/locuses nucleus:nuclei/nucleuses octopus:octupuses/octopi radius:radii/radiuses syllabus:syllabi
corpus:corpora/corpuses genus:genera
alumna:alumnae vertebra:vertebrae differentia:differentiae minutia:minutiae vita:vitae larva:larvae
postcava:postcavae praecava:praecavae uva:uvae
apex:apices/apexes codex:codices/codexes index:indices/indexes latex:latices/latexes vertex:vertices/vertexes
vortex:vortices/vortexes appendix:appendices/appendixes radix:radices/radixes helix:helices/helixes
axis:axes! crisis:crises ellipsis:ellipses> genesis:geneses oasis:oases thesis:theses testis:testes
base:bases basis:bases> alias:aliases! vedalia:vedalias
use:uses! abuse:abuses cause:causes clause:clauses cruse:cruses excuse:excuses fuse:fuses house:houses
misuse:misuses muse:muses pause:pauses ache:aches topaz:topazes buffalo:buffaloes/buffalos potato:potatoes
tomato:tomatoes
equipment:equipment information:information jeans:jeans money:money news:news rice:rice
dwarf:dwarfs/dwarves hoof:hoofs/hooves thief:thieves chive:chives hive:hives move:moves
movie:movies cookie:cookies pretorium:pretoriums agenda:agendas formula:formulas/formulae
shoe:shoes toe:toes! graffiti:graffiti ID:IDs!
`;

/**
 * Suffix rules, the first match wins: `suffix:replacement`. A word that already ends in a rule's
 * replacement is kept as it is (it is taken to be plural already), checked rule by rule before the suffix.
 */
const SUFFIXES = `
tive:tives eaf:eaves oaf:oaves afe:aves arf:arves rfe:rves rf:rves lf:lves fe:ves
ay:ays ey:eys oy:oys quy:quies uy:uys y:ies
eau:eaux
bula:bulae dula:bulae lula:bulae nula:bulae vula:bulae
hedron:hedra
ium:ia seum:seums eum:ea oum:oa stracum:straca dum:da elum:ela ilum:ila olum:ola ulum:ula llum:lla ylum:yla
imum:ima ernum:erna gnum:gna brum:bra crum:cra terum:tera serum:sera trum:tra antum:anta atum:ata entum:enta
etum:eta itum:ita otum:ota utum:uta ctum:cta ovum:ova
trix:trices
iasis:iases mesis:meses kinesis:kineses resis:reses gnosis:gnoses opsis:opses ysis:yses
ouse:ouses lause:lauses us:uses
ch:ches io:ios sh:shes ss:sses ez:ezzes iz:izzes tz:tzes zz:zzes ano:anos lo:los to:tos oo:oos o:oes x:xes
S:Ses
`;

/**
 * Acronyms: a word made of one of these is upper-cased, and a capital after one starts a new word
 * (`HTTPRoute` is HTTP + Route).
 */
const ACRONYMS = `
ACK ACL ADSL AES ANSI API ARP ATM BGP BSS CCITT CHAP CIDR CIR CLI CMOS CPE CPU CRC CRT CSMA DCE DEC DES DHCP
DMI DNS DRAM DSL DSLAM DTE EHA EIA EIGRP EOF ESS FCC FCS FDDI FTP GBIC GEPOF HDLC HTML HTTP HTTPS IANA ICMP ID
IDF IDS IEEE IETF IMAP IP IPS ISDN ISP JSON JWT LACP LAN LAPB LAPF LLC MAC MC MDF MIB MPLS MTU NAC NAT NBMA NIC
NRZ NRZI NVRAM OK OSI OSPF OUI PAP PAT PC PCM PDU PIM POP3 POTS PPP PPTP PTT PVST RAM RARP RCP RFC RIP RLL ROM
RSTP RTP SDLC SFD SFP SLARP SLIP SMTP SNA SNAP SNMP SOF SQL SRAM SSH SSID STP SYN TDM TFTP TIA TOFU UDP URI URL
USB UTF8 UTP UUID VC VLAN VLSM VPN W3C WAN WEP WPA WWW
`;

interface Rules {
  /** Singular -> plural, for the irregular words. */
  irregular: Map<string, string>;
  /** Words known to be plural already. */
  plurals: Set<string>;
  /** [suffix, replacement], in priority order. */
  suffixes: [string, string][];
  /**
   * The suffix rules that can apply to a word ending in a character, in the same order: those whose
   * suffix or replacement ends in it. Filled as words are seen; a kind name tried all of the ~700 rules.
   */
  byLastChar: Map<string, [string, string][]>;
  acronyms: Set<string>;
}

let rules: Rules | undefined;
function loadRules(): Rules {
  if (rules) return rules;
  const irregular = new Map<string, string>();
  const plurals = new Set<string>();
  const wordRules: [string, string][] = [];
  for (const entry of IRREGULAR.trim().split(/\s+/)) {
    const [, singular = '', plural = '', other, flags = ''] =
      /^([^:]+):([^/!>]+)(?:\/([^!>]+))?([!>]*)$/.exec(entry) ?? [];
    irregular.set(singular, plural);
    if (!flags.includes('>')) {
      plurals.add(plural);
      if (other) plurals.add(other);
    }
    if (!flags.includes('!')) wordRules.unshift([singular, plural]);
  }
  const suffixes = SUFFIXES.trim()
    .split(/\s+/)
    .map((pair) => pair.split(':') as [string, string]);
  rules = {
    irregular,
    plurals,
    suffixes: [...wordRules, ...suffixes],
    byLastChar: new Map(),
    acronyms: new Set(ACRONYMS.trim().split(/\s+/)),
  };
  return rules;
}

/** The plural kubebuilder records for a kind (`create api` without `--plural`): `cronjobs`. */
export function kubebuilderPlural(kind: string): string {
  return pluralize(kind.toLowerCase());
}

/** The plural controller-gen gives a kind's CRD without `+kubebuilder:resource:path`: `cronjobs`. */
export function crdDefaultPlural(kind: string): string {
  return pluralize(kind).toLowerCase();
}

/** The plural of a word or of a compound name's last word, in the word's own case: `CronJobs`. */
function pluralize(word: string): string {
  const { irregular, plurals } = loadRules();
  const last = lastWord(word);
  if (last === '') return '';
  const exact = irregular.get(word);
  if (exact !== undefined) return exact;
  const lower = last.toLowerCase();
  if (plurals.has(word) || plurals.has(lower)) return word;
  const plural = irregular.get(lower);
  if (plural !== undefined) return replaceEnd(word, last, startsUpper(last) ? capitalize(plural) : plural);
  for (const [suffix, replacement] of rulesFor(last)) {
    if (last.endsWith(replacement)) return replaceEnd(word, last, last);
    if (last.endsWith(suffix)) return replaceEnd(word, last, last.slice(0, -suffix.length) + replacement);
  }
  return lower.endsWith('s') ? word : `${word}s`;
}

/** The suffix rules that may match `word` (not empty), in priority order. */
function rulesFor(word: string): [string, string][] {
  const { suffixes, byLastChar } = loadRules();
  const c = word.charAt(word.length - 1);
  let rules = byLastChar.get(c);
  if (rules === undefined) {
    rules = suffixes.filter(([suffix, replacement]) => suffix.endsWith(c) || replacement.endsWith(c));
    byLastChar.set(c, rules);
  }
  return rules;
}

/** `word` with `last` (its last word, possibly upper-cased as an acronym) replaced: appended if not its end. */
function replaceEnd(word: string, last: string, replacement: string): string {
  return (word.endsWith(last) ? word.slice(0, -last.length) : word) + replacement;
}

const startsUpper = (s: string): boolean => s.charAt(0) === s.charAt(0).toUpperCase();
const capitalize = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

const SEPARATOR = /[\s_:\-/]/u;
const WORD_CHAR = /[\p{L}\p{N}\p{P}`]/u;
const isUpper = (c: string): boolean => c !== c.toLowerCase() && c === c.toUpperCase();

/** The last word of a name: split at separators, before a capital after a non-capital, after an acronym. */
function lastWord(name: string): string {
  const { acronyms } = loadRules();
  const trimmed = name.trim();
  if (trimmed === '') return '';
  if (acronyms.has(trimmed.toUpperCase())) return trimmed.toUpperCase();
  let last = '';
  const flush = (part: string): void => {
    let word = part.trim();
    while (word !== '' && SEPARATOR.test(word.charAt(0))) word = word.slice(1);
    while (word !== '' && SEPARATOR.test(word.charAt(word.length - 1))) word = word.slice(0, -1);
    if (acronyms.has(word.toUpperCase())) word = word.toUpperCase();
    if (word !== '') last = word;
  };
  let current = '';
  let prev = '';
  for (const c of trimmed) {
    if (SEPARATOR.test(c) || (isUpper(c) && (!isUpper(prev) || acronyms.has(current.toUpperCase())))) {
      flush(current);
      current = c;
    } else if (WORD_CHAR.test(c)) {
      current += c;
    } else {
      flush(current);
      current = '';
    }
    prev = c;
  }
  flush(current);
  return last;
}
