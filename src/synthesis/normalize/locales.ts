/**
 * @module synthesis/normalize/locales
 * One table per language the normaliser reads beside English — German,
 * French, Spanish, Italian, Portuguese, Dutch — and the regional variants
 * that differ from the usual written standard (a bare code: `es` is Spain,
 * `pt` Portugal, `fr` France). Number words come from `n2words`; the tables
 * hold the rest: separators, month names, currencies, units, abbreviations
 * and the few phrasings (times, money, dates) each language builds its own
 * way. `localized.ts` runs every table through the same rules.
 */
import * as de from 'n2words/de-DE';
import * as esES from 'n2words/es-ES';
import * as esMX from 'n2words/es-MX';
import * as frBE from 'n2words/fr-BE';
import * as frFR from 'n2words/fr-FR';
import * as it from 'n2words/it-IT';
import * as nl from 'n2words/nl-NL';
import * as pt from 'n2words/pt-PT';

export type Gender = 'm' | 'f';

/** A currency as a language names it: singular and plural of the unit and of its hundredth, and their genders. */
export interface Currency {
  one: string;
  many: string;
  minorOne: string;
  minorMany: string;
  gender?: Gender;
  minorGender?: Gender;
}

/** A unit after a number: singular, plural and gender (for "ein"/"eine", "un"/"una"). */
export type Unit = readonly [one: string, many: string, gender?: Gender];

export interface Locale {
  /** The tag the table is for (`de`, `fr-ca`). */
  tag: string;
  cardinal(value: bigint): string;
  /** An ordinal: German takes its ending from the words before it (`e`, `en`, `er`); Romance languages their gender. */
  ordinal(value: bigint, gender?: Gender): string;
  /** A number counting a noun of `gender`: "ein Euro", "un euro", "una hora", "duas horas". */
  counted(value: bigint, gender: Gender): string;
  /** The decimal separator, and the characters that group thousands. */
  decimal: ',' | '.';
  groups: string;
  decimalWord: string;
  minus: string;
  plus: string;
  /** Decimals after the separator read as a number ("virgule quatorze") rather than digit by digit ("Komma eins vier"). */
  fractionAsNumber: boolean;
  /** A four-digit number read as a year ("neunzehnhundertneunundneunzig"). */
  year(value: number): string;
  /** Month names in order, and the forms (abbreviations) each may be written in. */
  months: readonly string[];
  monthForms: readonly (readonly string[])[];
  /** A date read aloud; `before` is the word before it (German picks the ordinal's ending by it). */
  date(day: number, month: number, year: number | null, before: string): string;
  time(hours: number, minutes: number): string;
  currencies: Readonly<Record<string, Currency>>;
  /** How a sum with a minor part is joined: "drei Euro fünfzig" (null: no word, the hundredth unnamed) or "tres euros con cincuenta céntimos". */
  moneyJoin: string | null;
  percent: string;
  units: Readonly<Record<string, Unit>>;
  /** Abbreviations as written and what they say; `name`: only before a capitalised word (French "M."). */
  abbreviations: readonly (readonly [written: string, say: string, name?: 'name'])[];
  /** Phone numbers: French reads each two-digit group as a number, the others digit by digit. */
  phonePairs: boolean;
  /** "10–20": the word between. */
  range: string;
  /** Ordinals as the language writes them after the digits (`1er`, `1.º`, `1e`), each with the gender it marks. */
  ordinalSuffixes: readonly (readonly [suffix: string, gender?: Gender])[];
}

const big = (value: bigint | number) => BigInt(value);

/** n2words' cardinal for a BigInt (it takes any integer). */
const card = (lib: { toCardinal(v: bigint): string }) => (value: bigint) => lib.toCardinal(value);

/** A Romance ordinal made feminine: every "-o" ending becomes "-a" ("vigésimo primero" → "vigésima primera"). */
const feminineO = (words: string) => words.replace(/o\b/gu, 'a').replace(/primer\b/gu, 'primera').replace(/tercer\b/gu, 'tercera');

/** Month names and their abbreviations ("sept."); a name of three letters has none (its full stop ends the sentence). */
const lower = (names: string[]) => names.map((n) => [n, ...(n.length > 3 ? [n.slice(0, 3) + '.'] : []), ...(n.length > 4 ? [n.slice(0, 4) + '.'] : [])]);

// ---------------------------------------------------------------- German

const DE_MONTHS = ['Januar', 'Februar', 'März', 'April', 'Mai', 'Juni', 'Juli', 'August', 'September', 'Oktober', 'November', 'Dezember'];

/** Articles and contractions before a German ordinal, and the ending they give it ("am vierten", "der vierte"). */
export const DE_ENDINGS: Readonly<Record<string, string>> = {
  der: 'e', die: 'e', das: 'e',
  am: 'en', im: 'en', vom: 'en', zum: 'en', zur: 'en', beim: 'en', dem: 'en', den: 'en', des: 'en', ab: 'en', seit: 'en', bis: 'en',
};

function germanOrdinal(value: bigint, ending = 'e'): string {
  const word = de.toOrdinal(value);
  return ending === 'e' ? word : word + ending.slice(1);
}

function germanYear(value: number): string {
  if (value >= 1100 && value < 2000) {
    const high = Math.floor(value / 100);
    const low = value % 100;
    return `${de.toCardinal(high)}hundert${low ? de.toCardinal(low) : ''}`;
  }
  return de.toCardinal(value);
}

const DE_CURRENCIES: Record<string, Currency> = {
  '€': { one: 'Euro', many: 'Euro', minorOne: 'Cent', minorMany: 'Cent' },
  EUR: { one: 'Euro', many: 'Euro', minorOne: 'Cent', minorMany: 'Cent' },
  $: { one: 'Dollar', many: 'Dollar', minorOne: 'Cent', minorMany: 'Cent' },
  USD: { one: 'Dollar', many: 'Dollar', minorOne: 'Cent', minorMany: 'Cent' },
  '£': { one: 'Pfund', many: 'Pfund', minorOne: 'Penny', minorMany: 'Pence' },
  GBP: { one: 'Pfund', many: 'Pfund', minorOne: 'Penny', minorMany: 'Pence' },
  CHF: { one: 'Franken', many: 'Franken', minorOne: 'Rappen', minorMany: 'Rappen' },
  'Fr.': { one: 'Franken', many: 'Franken', minorOne: 'Rappen', minorMany: 'Rappen' },
};

const GERMAN: Locale = {
  tag: 'de',
  cardinal: card(de),
  ordinal: (value) => germanOrdinal(value),
  // "ein Euro", "eine Stunde"; "einundzwanzig" stays as it is.
  counted: (value, gender) => (value === 1n ? (gender === 'f' ? 'eine' : 'ein') : de.toCardinal(value)),
  decimal: ',',
  groups: '.  \u202f',
  decimalWord: 'Komma',
  minus: 'minus',
  plus: 'plus',
  fractionAsNumber: false,
  year: germanYear,
  months: DE_MONTHS,
  monthForms: DE_MONTHS.map((n) => [n, ...(n.length > 3 ? [n.slice(0, 3) + '.'] : []), ...(n === 'September' ? ['Sept.'] : [])]),
  date(day, month, year, before) {
    const ending = DE_ENDINGS[before.toLowerCase()] ?? 'er';
    return `${germanOrdinal(big(day), ending)} ${DE_MONTHS[month]}${year === null ? '' : ` ${germanYear(year)}`}`;
  },
  time: (h, m) => `${h === 1 ? 'ein' : de.toCardinal(h)} Uhr${m ? ` ${de.toCardinal(m)}` : ''}`,
  currencies: DE_CURRENCIES,
  moneyJoin: null,
  percent: 'Prozent',
  units: {
    km: ['Kilometer', 'Kilometer'], m: ['Meter', 'Meter'], cm: ['Zentimeter', 'Zentimeter'], mm: ['Millimeter', 'Millimeter'],
    kg: ['Kilogramm', 'Kilogramm', 'm'], g: ['Gramm', 'Gramm'], mg: ['Milligramm', 'Milligramm'],
    l: ['Liter', 'Liter'], ml: ['Milliliter', 'Milliliter'],
    '°C': ['Grad Celsius', 'Grad Celsius'], '°F': ['Grad Fahrenheit', 'Grad Fahrenheit'], '°': ['Grad', 'Grad'],
    'km/h': ['Kilometer pro Stunde', 'Kilometer pro Stunde'], kWh: ['Kilowattstunde', 'Kilowattstunden', 'f'], kW: ['Kilowatt', 'Kilowatt'], W: ['Watt', 'Watt'],
    min: ['Minute', 'Minuten', 'f'], Std: ['Stunde', 'Stunden', 'f'], GB: ['Gigabyte', 'Gigabyte'], MB: ['Megabyte', 'Megabyte'],
  },
  abbreviations: [
    ['z. B.', 'zum Beispiel'], ['z.B.', 'zum Beispiel'], ['d. h.', 'das heißt'], ['d.h.', 'das heißt'], ['u. a.', 'unter anderem'], ['u.a.', 'unter anderem'],
    ['usw.', 'und so weiter'], ['bzw.', 'beziehungsweise'], ['ca.', 'circa'], ['Ca.', 'Circa'], ['evtl.', 'eventuell'], ['inkl.', 'inklusive'], ['vgl.', 'vergleiche'],
    ['Nr.', 'Nummer'], ['Str.', 'Straße'], ['Dr.', 'Doktor'], ['Prof.', 'Professor'], ['Hr.', 'Herr'], ['Fr.', 'Frau', 'name'], ['Mio.', 'Millionen'], ['Mrd.', 'Milliarden'],
  ],
  phonePairs: false,
  range: 'bis',
  ordinalSuffixes: [],
};

/** Swiss German: the apostrophe groups thousands and a point marks decimals; francs. */
const SWISS_GERMAN: Locale = { ...GERMAN, tag: 'de-ch', decimal: '.', groups: "'’  \u202f" };

// ---------------------------------------------------------------- French

const FR_MONTHS = ['janvier', 'février', 'mars', 'avril', 'mai', 'juin', 'juillet', 'août', 'septembre', 'octobre', 'novembre', 'décembre'];

/** French feminine: a count ending in "un" says "une" ("vingt et une heures"). */
const frFeminine = (words: string) => words.replace(/\bun$/u, 'une');

function french(lib: typeof frFR, tag: string, dollar: Currency): Locale {
  return {
    tag,
    cardinal: (value) => lib.toCardinal(value),
    ordinal: (value, gender) => (value === 1n ? (gender === 'f' ? 'première' : 'premier') : lib.toOrdinal(value)),
    counted: (value, gender) => (gender === 'f' ? frFeminine(lib.toCardinal(value)) : lib.toCardinal(value)),
    decimal: ',',
    groups: '  \u202f.',
    decimalWord: 'virgule',
    minus: 'moins',
    plus: 'plus',
    fractionAsNumber: true,
    year: (value) => lib.toCardinal(value),
    months: FR_MONTHS,
    monthForms: FR_MONTHS.map((n) => [n, ...(n.length > 4 ? [n.slice(0, 4) + '.'] : []), ...(n === 'juillet' ? ['juil.'] : [])]),
    date: (day, month, year) => `${day === 1 ? 'premier' : lib.toCardinal(day)} ${FR_MONTHS[month]}${year === null ? '' : ` ${lib.toCardinal(year)}`}`,
    time: (h, m) => `${frFeminine(lib.toCardinal(h))} ${h <= 1 ? 'heure' : 'heures'}${m ? ` ${frFeminine(lib.toCardinal(m))}` : ''}`,
    currencies: {
      '€': { one: 'euro', many: 'euros', minorOne: 'centime', minorMany: 'centimes' },
      EUR: { one: 'euro', many: 'euros', minorOne: 'centime', minorMany: 'centimes' },
      $: dollar,
      USD: { one: 'dollar', many: 'dollars', minorOne: 'cent', minorMany: 'cents' },
      CAD: { one: 'dollar canadien', many: 'dollars canadiens', minorOne: 'cent', minorMany: 'cents' },
      '£': { one: 'livre', many: 'livres', minorOne: 'penny', minorMany: 'pence', gender: 'f' },
      GBP: { one: 'livre', many: 'livres', minorOne: 'penny', minorMany: 'pence', gender: 'f' },
      CHF: { one: 'franc', many: 'francs', minorOne: 'centime', minorMany: 'centimes' },
    },
    moneyJoin: null,
    percent: 'pour cent',
    units: {
      km: ['kilomètre', 'kilomètres'], m: ['mètre', 'mètres'], cm: ['centimètre', 'centimètres'], mm: ['millimètre', 'millimètres'],
      kg: ['kilogramme', 'kilogrammes'], g: ['gramme', 'grammes'], mg: ['milligramme', 'milligrammes'],
      l: ['litre', 'litres'], ml: ['millilitre', 'millilitres'],
      '°C': ['degré Celsius', 'degrés Celsius'], '°F': ['degré Fahrenheit', 'degrés Fahrenheit'], '°': ['degré', 'degrés'],
      'km/h': ['kilomètre par heure', 'kilomètres par heure'], kWh: ['kilowattheure', 'kilowattheures'], kW: ['kilowatt', 'kilowatts'], W: ['watt', 'watts'],
      min: ['minute', 'minutes', 'f'], Go: ['gigaoctet', 'gigaoctets'], Mo: ['mégaoctet', 'mégaoctets'],
    },
    abbreviations: [
      ['M.', 'Monsieur', 'name'], ['MM.', 'Messieurs', 'name'], ['Mme', 'Madame'], ['Mmes', 'Mesdames'], ['Mlle', 'Mademoiselle'], ['Dr', 'Docteur'], ['Dr.', 'Docteur'], ['Pr', 'Professeur'],
      ['etc.', 'et cetera'], ['p. ex.', 'par exemple'], ['c.-à-d.', "c'est-à-dire"], ['env.', 'environ'], ['av.', 'avenue'], ['bd', 'boulevard'], ['n°', 'numéro'],
    ],
    phonePairs: true,
    range: 'à',
    ordinalSuffixes: [['er'], ['re', 'f'], ['ère', 'f'], ['e'], ['ème'], ['nd'], ['nde', 'f']],
  };
}

const FRENCH = french(frFR, 'fr', { one: 'dollar', many: 'dollars', minorOne: 'cent', minorMany: 'cents' });
/** Belgium and Switzerland: septante, nonante; Switzerland also groups with an apostrophe. */
const BELGIAN_FRENCH = french(frBE, 'fr-be', { one: 'dollar', many: 'dollars', minorOne: 'cent', minorMany: 'cents' });
const SWISS_FRENCH: Locale = { ...french(frBE, 'fr-ch', { one: 'dollar', many: 'dollars', minorOne: 'cent', minorMany: 'cents' }), groups: "'’  \u202f" };
/** Canada: the dollar is the country's own, "cent" its hundredth. */
const CANADIAN_FRENCH = french(frFR, 'fr-ca', { one: 'dollar', many: 'dollars', minorOne: 'cent', minorMany: 'cents' });

// ---------------------------------------------------------------- Spanish

const ES_MONTHS = ['enero', 'febrero', 'marzo', 'abril', 'mayo', 'junio', 'julio', 'agosto', 'septiembre', 'octubre', 'noviembre', 'diciembre'];

/** "uno" shortened before a masculine noun: "un euro", "veintiún euros", "treinta y un días". */
const esApocope = (words: string) => words.replace(/veintiuno$/u, 'veintiún').replace(/uno$/u, 'un');

function spanish(lib: typeof esES, tag: string, decimal: ',' | '.', groups: string, currencies: Record<string, Currency>, firstOfMonth: string): Locale {
  return {
    tag,
    cardinal: (value) => lib.toCardinal(value),
    ordinal: (value, gender) => lib.toOrdinal(value, { gender: gender === 'f' ? 'feminine' : 'masculine' }),
    counted: (value, gender) => (gender === 'f' ? lib.toCardinal(value, { gender: 'feminine' }) : esApocope(lib.toCardinal(value))),
    decimal,
    groups,
    decimalWord: decimal === ',' ? 'coma' : 'punto',
    minus: 'menos',
    plus: 'más',
    fractionAsNumber: true,
    year: (value) => lib.toCardinal(value),
    months: ES_MONTHS,
    monthForms: lower(ES_MONTHS),
    date: (day, month, year) => `${day === 1 ? firstOfMonth : lib.toCardinal(day)} de ${ES_MONTHS[month]}${year === null ? '' : ` de ${lib.toCardinal(year)}`}`,
    time: (h, m) => {
      const hour = lib.toCardinal(h, { gender: 'feminine' });
      // "a la una", "a las catorce horas"
      return m ? `${hour} y ${lib.toCardinal(m)}` : h === 1 ? hour : `${hour} horas`;
    },
    currencies,
    moneyJoin: 'con',
    percent: 'por ciento',
    units: {
      km: ['kilómetro', 'kilómetros'], m: ['metro', 'metros'], cm: ['centímetro', 'centímetros'], mm: ['milímetro', 'milímetros'],
      kg: ['kilogramo', 'kilogramos'], g: ['gramo', 'gramos'], mg: ['miligramo', 'miligramos'],
      l: ['litro', 'litros'], ml: ['mililitro', 'mililitros'],
      '°C': ['grado Celsius', 'grados Celsius'], '°F': ['grado Fahrenheit', 'grados Fahrenheit'], '°': ['grado', 'grados'],
      'km/h': ['kilómetro por hora', 'kilómetros por hora'], kWh: ['kilovatio hora', 'kilovatios hora'], kW: ['kilovatio', 'kilovatios'], W: ['vatio', 'vatios'],
      min: ['minuto', 'minutos'], GB: ['gigabyte', 'gigabytes'], MB: ['megabyte', 'megabytes'],
    },
    abbreviations: [
      ['Sr.', 'señor'], ['Sra.', 'señora'], ['Srta.', 'señorita'], ['Dr.', 'doctor'], ['Dra.', 'doctora'], ['Ud.', 'usted'], ['Uds.', 'ustedes'],
      ['etc.', 'etcétera'], ['p. ej.', 'por ejemplo'], ['aprox.', 'aproximadamente'], ['Avda.', 'avenida'], ['núm.', 'número'], ['n.º', 'número'], ['nº', 'número'],
    ],
    phonePairs: false,
    range: 'a',
    ordinalSuffixes: [['.º'], ['º'], ['.ª', 'f'], ['ª', 'f'], ['.er'], ['er']],
  };
}

const euroEs: Currency = { one: 'euro', many: 'euros', minorOne: 'céntimo', minorMany: 'céntimos' };
const SPANISH = spanish(esES, 'es', ',', '.  \u202f', {
  '€': euroEs, EUR: euroEs,
  $: { one: 'dólar', many: 'dólares', minorOne: 'centavo', minorMany: 'centavos' },
  USD: { one: 'dólar', many: 'dólares', minorOne: 'centavo', minorMany: 'centavos' },
  '£': { one: 'libra', many: 'libras', minorOne: 'penique', minorMany: 'peniques', gender: 'f' },
  GBP: { one: 'libra', many: 'libras', minorOne: 'penique', minorMany: 'peniques', gender: 'f' },
}, 'uno');
/** Mexico: a decimal point, commas between thousands; "$" is the peso; "primero de mayo". */
const MEXICAN_SPANISH = spanish(esMX, 'es-mx', '.', ',  \u202f', {
  '€': { ...euroEs, minorOne: 'centavo', minorMany: 'centavos' }, EUR: { ...euroEs, minorOne: 'centavo', minorMany: 'centavos' },
  $: { one: 'peso', many: 'pesos', minorOne: 'centavo', minorMany: 'centavos' },
  MXN: { one: 'peso', many: 'pesos', minorOne: 'centavo', minorMany: 'centavos' },
  USD: { one: 'dólar', many: 'dólares', minorOne: 'centavo', minorMany: 'centavos' },
  'US$': { one: 'dólar', many: 'dólares', minorOne: 'centavo', minorMany: 'centavos' },
}, 'primero');

// ---------------------------------------------------------------- Italian

const IT_MONTHS = ['gennaio', 'febbraio', 'marzo', 'aprile', 'maggio', 'giugno', 'luglio', 'agosto', 'settembre', 'ottobre', 'novembre', 'dicembre'];

const ITALIAN: Locale = {
  tag: 'it',
  cardinal: card(it),
  ordinal: (value, gender) => (gender === 'f' ? feminineO(it.toOrdinal(value)) : it.toOrdinal(value)),
  counted: (value, gender) => {
    const words = it.toCardinal(value);
    return value === 1n ? (gender === 'f' ? 'una' : 'un') : words.replace(/uno$/u, 'un');
  },
  decimal: ',',
  groups: '.  \u202f',
  decimalWord: 'virgola',
  minus: 'meno',
  plus: 'più',
  fractionAsNumber: true,
  year: (value) => it.toCardinal(value),
  months: IT_MONTHS,
  monthForms: lower(IT_MONTHS),
  date: (day, month, year) => `${day === 1 ? 'primo' : it.toCardinal(day)} ${IT_MONTHS[month]}${year === null ? '' : ` ${it.toCardinal(year)}`}`,
  time: (h, m) => `${h === 1 ? 'una' : it.toCardinal(h)}${m ? ` e ${it.toCardinal(m)}` : ''}`,
  currencies: {
    '€': { one: 'euro', many: 'euro', minorOne: 'centesimo', minorMany: 'centesimi' },
    EUR: { one: 'euro', many: 'euro', minorOne: 'centesimo', minorMany: 'centesimi' },
    $: { one: 'dollaro', many: 'dollari', minorOne: 'centesimo', minorMany: 'centesimi' },
    USD: { one: 'dollaro', many: 'dollari', minorOne: 'centesimo', minorMany: 'centesimi' },
    '£': { one: 'sterlina', many: 'sterline', minorOne: 'penny', minorMany: 'pence', gender: 'f' },
    GBP: { one: 'sterlina', many: 'sterline', minorOne: 'penny', minorMany: 'pence', gender: 'f' },
    CHF: { one: 'franco', many: 'franchi', minorOne: 'centesimo', minorMany: 'centesimi' },
  },
  moneyJoin: 'e',
  percent: 'per cento',
  units: {
    km: ['chilometro', 'chilometri'], m: ['metro', 'metri'], cm: ['centimetro', 'centimetri'], mm: ['millimetro', 'millimetri'],
    kg: ['chilogrammo', 'chilogrammi'], g: ['grammo', 'grammi'], mg: ['milligrammo', 'milligrammi'],
    l: ['litro', 'litri'], ml: ['millilitro', 'millilitri'],
    '°C': ['grado Celsius', 'gradi Celsius'], '°F': ['grado Fahrenheit', 'gradi Fahrenheit'],
    'km/h': ['chilometro orario', 'chilometri orari'], kWh: ['chilowattora', 'chilowattora'], kW: ['chilowatt', 'chilowatt'], W: ['watt', 'watt'],
    min: ['minuto', 'minuti'], GB: ['gigabyte', 'gigabyte'], MB: ['megabyte', 'megabyte'],
  },
  abbreviations: [
    ['Sig.ra', 'signora'], ['Sig.na', 'signorina'], ['Sig.', 'signor'], ['Dott.ssa', 'dottoressa'], ['Dott.', 'dottor'], ['Dr.', 'dottor'], ['Prof.ssa', 'professoressa'], ['Prof.', 'professor'],
    ['ecc.', 'eccetera'], ['p. es.', 'per esempio'], ['pag.', 'pagina'], ['Pag.', 'Pagina'], ['tel.', 'telefono'], ['n.', 'numero', 'name'],
  ],
  phonePairs: false,
  range: 'a',
  ordinalSuffixes: [['°'], ['º'], ['ª', 'f']],
};

// ---------------------------------------------------------------- Portuguese

const PT_MONTHS = ['janeiro', 'fevereiro', 'março', 'abril', 'maio', 'junho', 'julho', 'agosto', 'setembro', 'outubro', 'novembro', 'dezembro'];

/** Portuguese feminine: "uma", "duas", "duzentas". */
const ptFeminine = (words: string) => words.replace(/\bum\b/gu, 'uma').replace(/\bdois\b/gu, 'duas').replace(/entos\b/gu, 'entas');

function portuguese(tag: string, groups: string, currencies: Record<string, Currency>, kilometre: string): Locale {
  return {
    tag,
    cardinal: card(pt),
    ordinal: (value, gender) => (gender === 'f' ? feminineO(pt.toOrdinal(value)) : pt.toOrdinal(value)),
    counted: (value, gender) => (gender === 'f' ? ptFeminine(pt.toCardinal(value)) : pt.toCardinal(value)),
    decimal: ',',
    groups,
    decimalWord: 'vírgula',
    minus: 'menos',
    plus: 'mais',
    fractionAsNumber: true,
    year: (value) => pt.toCardinal(value),
    months: PT_MONTHS,
    monthForms: lower(PT_MONTHS),
    date: (day, month, year) => `${day === 1 ? 'primeiro' : pt.toCardinal(day)} de ${PT_MONTHS[month]}${year === null ? '' : ` de ${pt.toCardinal(year)}`}`,
    time: (h, m) => {
      const hour = ptFeminine(pt.toCardinal(h));
      return m ? `${hour} e ${pt.toCardinal(m)}` : `${hour} ${h === 1 ? 'hora' : 'horas'}`;
    },
    currencies,
    moneyJoin: 'e',
    percent: 'por cento',
    units: {
      km: [kilometre, `${kilometre}s`], m: ['metro', 'metros'], cm: ['centímetro', 'centímetros'], mm: ['milímetro', 'milímetros'],
      kg: ['quilograma', 'quilogramas'], g: ['grama', 'gramas'], mg: ['miligrama', 'miligramas'],
      l: ['litro', 'litros'], ml: ['mililitro', 'mililitros'],
      '°C': ['grau Celsius', 'graus Celsius'], '°F': ['grau Fahrenheit', 'graus Fahrenheit'],
      'km/h': [`${kilometre} por hora`, `${kilometre}s por hora`], kWh: ['quilowatt-hora', 'quilowatts-hora'], kW: ['quilowatt', 'quilowatts'], W: ['watt', 'watts'],
      min: ['minuto', 'minutos'], GB: ['gigabyte', 'gigabytes'], MB: ['megabyte', 'megabytes'],
    },
    abbreviations: [
      ['Sr.', 'senhor'], ['Sra.', 'senhora'], ['Dr.', 'doutor'], ['Dra.', 'doutora'], ['Prof.', 'professor'], ['Profª', 'professora'],
      ['etc.', 'etcétera'], ['p. ex.', 'por exemplo'], ['Av.', 'avenida'], ['n.º', 'número'], ['nº', 'número'], ['aprox.', 'aproximadamente'],
    ],
    phonePairs: false,
    range: 'a',
    ordinalSuffixes: [['.º'], ['º'], ['.ª', 'f'], ['ª', 'f']],
  };
}

const PORTUGUESE = portuguese('pt', '  \u202f.', {
  '€': { one: 'euro', many: 'euros', minorOne: 'cêntimo', minorMany: 'cêntimos' },
  EUR: { one: 'euro', many: 'euros', minorOne: 'cêntimo', minorMany: 'cêntimos' },
  $: { one: 'dólar', many: 'dólares', minorOne: 'cêntimo', minorMany: 'cêntimos' },
  USD: { one: 'dólar', many: 'dólares', minorOne: 'cêntimo', minorMany: 'cêntimos' },
  '£': { one: 'libra', many: 'libras', minorOne: 'péni', minorMany: 'pence', gender: 'f' },
  GBP: { one: 'libra', many: 'libras', minorOne: 'péni', minorMany: 'pence', gender: 'f' },
}, 'quilómetro');
/** Brazil: reais and centavos, dots between thousands, "quilômetro". */
const BRAZILIAN_PORTUGUESE = portuguese('pt-br', '.  \u202f', {
  'R$': { one: 'real', many: 'reais', minorOne: 'centavo', minorMany: 'centavos' },
  BRL: { one: 'real', many: 'reais', minorOne: 'centavo', minorMany: 'centavos' },
  '€': { one: 'euro', many: 'euros', minorOne: 'centavo', minorMany: 'centavos' },
  EUR: { one: 'euro', many: 'euros', minorOne: 'centavo', minorMany: 'centavos' },
  $: { one: 'dólar', many: 'dólares', minorOne: 'centavo', minorMany: 'centavos' },
  'US$': { one: 'dólar', many: 'dólares', minorOne: 'centavo', minorMany: 'centavos' },
  USD: { one: 'dólar', many: 'dólares', minorOne: 'centavo', minorMany: 'centavos' },
}, 'quilômetro');

// ---------------------------------------------------------------- Dutch

const NL_MONTHS = ['januari', 'februari', 'maart', 'april', 'mei', 'juni', 'juli', 'augustus', 'september', 'oktober', 'november', 'december'];

const DUTCH: Locale = {
  tag: 'nl',
  cardinal: card(nl),
  ordinal: (value) => nl.toOrdinal(value),
  counted: (value) => nl.toCardinal(value),
  decimal: ',',
  groups: '.  \u202f',
  decimalWord: 'komma',
  minus: 'min',
  plus: 'plus',
  fractionAsNumber: false,
  year: (value) => nl.toCardinal(value),
  months: NL_MONTHS,
  monthForms: lower(NL_MONTHS),
  date: (day, month, year) => `${nl.toCardinal(day)} ${NL_MONTHS[month]}${year === null ? '' : ` ${nl.toCardinal(year)}`}`,
  time: (h, m) => `${nl.toCardinal(h)} uur${m ? ` ${nl.toCardinal(m)}` : ''}`,
  currencies: {
    '€': { one: 'euro', many: 'euro', minorOne: 'cent', minorMany: 'cent' },
    EUR: { one: 'euro', many: 'euro', minorOne: 'cent', minorMany: 'cent' },
    $: { one: 'dollar', many: 'dollar', minorOne: 'cent', minorMany: 'cent' },
    USD: { one: 'dollar', many: 'dollar', minorOne: 'cent', minorMany: 'cent' },
    '£': { one: 'pond', many: 'pond', minorOne: 'penny', minorMany: 'pence' },
    GBP: { one: 'pond', many: 'pond', minorOne: 'penny', minorMany: 'pence' },
  },
  moneyJoin: null,
  percent: 'procent',
  units: {
    km: ['kilometer', 'kilometer'], m: ['meter', 'meter'], cm: ['centimeter', 'centimeter'], mm: ['millimeter', 'millimeter'],
    kg: ['kilo', 'kilo'], g: ['gram', 'gram'], mg: ['milligram', 'milligram'],
    l: ['liter', 'liter'], ml: ['milliliter', 'milliliter'],
    '°C': ['graad Celsius', 'graden Celsius'], '°F': ['graad Fahrenheit', 'graden Fahrenheit'], '°': ['graad', 'graden'],
    'km/h': ['kilometer per uur', 'kilometer per uur'], kWh: ['kilowattuur', 'kilowattuur'], kW: ['kilowatt', 'kilowatt'], W: ['watt', 'watt'],
    min: ['minuut', 'minuten'], GB: ['gigabyte', 'gigabyte'], MB: ['megabyte', 'megabyte'],
  },
  abbreviations: [
    ['bijv.', 'bijvoorbeeld'], ['d.w.z.', 'dat wil zeggen'], ['o.a.', 'onder andere'], ['m.b.t.', 'met betrekking tot'], ['i.p.v.', 'in plaats van'],
    ['dhr.', 'de heer'], ['Dhr.', 'De heer'], ['mevr.', 'mevrouw'], ['Mevr.', 'Mevrouw'], ['dr.', 'dokter'], ['Dr.', 'dokter'], ['prof.', 'professor'], ['Prof.', 'professor'],
    ['etc.', 'etcetera'], ['ca.', 'circa'], ['nr.', 'nummer'], ['Nr.', 'nummer'],
  ],
  phonePairs: false,
  range: 'tot',
  ordinalSuffixes: [['ste'], ['de'], ['e']],
};

/** The tables by tag; a tag not here falls back to its language's (`de-at` → `de`). */
const LOCALES: Readonly<Record<string, Locale>> = {
  de: GERMAN, 'de-ch': SWISS_GERMAN, 'de-li': SWISS_GERMAN,
  fr: FRENCH, 'fr-be': BELGIAN_FRENCH, 'fr-ch': SWISS_FRENCH, 'fr-ca': CANADIAN_FRENCH,
  es: SPANISH, 'es-mx': MEXICAN_SPANISH,
  it: ITALIAN,
  pt: PORTUGUESE, 'pt-br': BRAZILIAN_PORTUGUESE,
  nl: DUTCH,
};

/** The table for a language tag (any case, `_` or `-`), its region's where that differs; null for a language without one. */
export function localeFor(tag: string): Locale | null {
  const wanted = tag.toLowerCase().replace(/_/gu, '-');
  const [language, ...rest] = wanted.split('-');
  const region = rest.find((part) => /^[a-z]{2}$|^\d{3}$/u.test(part));
  return (region ? LOCALES[`${language}-${region}`] : undefined) ?? LOCALES[language] ?? null;
}

/** The languages with a table, for docs and listings. */
export const NORMALIZED_LANGUAGES = ['en', 'de', 'fr', 'es', 'it', 'pt', 'nl'] as const;
