/**
 * @module synthesis/normalize/fixtures
 * The normaliser's rules as examples: each input with what it is spoken
 * as. This table is the rules' documentation (docs/api.md points here) and
 * the tests run every row, plain text and `say-as` alike.
 */

/** Plain text → its spoken form (engine setting `normalize` on). */
export const PLAIN_FIXTURES: readonly (readonly [input: string, spoken: string])[] = [
  // Cardinals, decimals, negatives, ranges
  ['I have 3 cats.', 'I have three cats.'],
  ['It weighs 1,234 grams', 'It weighs one thousand two hundred thirty-four grams'],
  ['Pi is 3.14.', 'Pi is three point one four.'],
  ['It is -5 outside', 'It is minus five outside'],
  ['Agent 007', 'Agent zero zero seven'],
  ['Open 9-5 daily', 'Open nine to five daily'],
  ['Pages 10–20.', 'Pages ten to twenty.'],
  ['Born in 1999, moved in 2026.', 'Born in nineteen ninety-nine, moved in twenty twenty-six.'],
  ['In 1900 and 2005', 'In nineteen hundred and two thousand five'],
  ['A population of 12,000,000', 'A population of twelve million'],
  ['COVID-19 and MP3', 'COVID-nineteen and MP3'],
  // Ordinals
  ['the 1st, 2nd, 3rd and 21st', 'the first, second, third and twenty-first'],
  // Money
  ['It costs $5.50.', 'It costs five dollars and fifty cents.'],
  ['Pay €1,200 now', 'Pay one thousand two hundred euros now'],
  ['Only $1 or £0.99', 'Only one dollar or ninety-nine pence'],
  ['A $1.5 million deal', 'A one point five million dollars deal'],
  ['It is 20 USD', 'It is twenty dollars'],
  // Times
  ['Meet at 2 PM', 'Meet at two PM'],
  ['Meet at 14:30', 'Meet at fourteen thirty'],
  ['at 2:05 pm or 9:00', 'at two oh five PM or nine o\'clock'],
  ['Lunch at 12:30p.m. sharp', 'Lunch at twelve thirty PM sharp'],
  // Dates
  ['Due 2026-12-03.', 'Due December third, twenty twenty-six.'],
  ['Due Dec 3', 'Due December third'],
  ['on March 15, 2024', 'on March fifteenth, twenty twenty-four'],
  ['on 3 Dec 2026', 'on the third of December, twenty twenty-six'],
  ['Paid 12/03/2026', 'Paid December third, twenty twenty-six'],
  // Phone numbers
  ['Call 555-0199.', 'Call five five five, zero one nine nine.'],
  ['Call (555) 123-4567', 'Call five five five, one two three, four five six seven'],
  ['Call +1 555-123-4567', 'Call plus one, five five five, one two three, four five six seven'],
  // Percentages and units
  ['Up 50% today', 'Up fifty percent today'],
  ['a 2.5% rise', 'a two point five percent rise'],
  ['Drive 5 km at 60 mph', 'Drive five kilometers at sixty miles per hour'],
  ['It is 1 kg and 20°C', 'It is one kilogram and twenty degrees Celsius'],
  ['A 16 GB card', 'A sixteen gigabytes card'],
  // Abbreviations
  ['Dr. Smith lives on Elm St.', 'Doctor Smith lives on Elm Street.'],
  ['St. Louis', 'Saint Louis'],
  ['Mr. and Mrs. Jones', 'Mister and Missus Jones'],
  ['fruit, e.g. apples, i.e. food, etc.', 'fruit, for example apples, that is food, et cetera.'],
  ['Cats vs. dogs', 'Cats versus dogs'],
  ['No. 5 and #1', 'number five and number one'],
  ['Tom & Jerry', 'Tom and Jerry'],
  // URLs and e-mail addresses
  ['See https://example.com/a?b=1 today', 'See example dot com slash a question mark b equals one today'],
  ['Visit www.voicegate.dev.', 'Visit w w w dot voicegate dot dev.'],
  ['Write to support@example.com.', 'Write to support at example dot com.'],
  ['Go to example.org/docs', 'Go to example dot org slash docs'],
  // Text without anything to rewrite is unchanged
  ['Hello there. How are you?', 'Hello there. How are you?'],
];

/** SSML `<say-as>` → its spoken form: [text, interpret-as, format, spoken]. */
export const SAY_AS_FIXTURES: readonly (readonly [text: string, interpretAs: string, format: string | undefined, spoken: string])[] = [
  ['1234', 'cardinal', undefined, 'one thousand two hundred thirty-four'],
  ['-2.5', 'number', undefined, 'minus two point five'],
  ['3', 'ordinal', undefined, 'third'],
  ['21st', 'ordinal', undefined, 'twenty-first'],
  ['1234', 'digits', undefined, 'one two three four'],
  ['555-0199', 'telephone', undefined, 'five five five, zero one nine nine'],
  ['+44 20 7946 0958', 'telephone', undefined, 'plus four four, two zero, seven nine four six, zero nine five eight'],
  ['12/03/2026', 'date', 'mdy', 'December third, twenty twenty-six'],
  ['03/12/2026', 'date', 'dmy', 'December third, twenty twenty-six'],
  ['2026-12-03', 'date', 'ymd', 'December third, twenty twenty-six'],
  ['20261203', 'date', 'yyyymmdd', 'December third, twenty twenty-six'],
  ['12-03', 'date', 'md', 'December third'],
  ['1999', 'date', 'y', 'nineteen ninety-nine'],
  ['3', 'date', 'd', 'the third'],
  ['2:30pm', 'time', undefined, 'two thirty PM'],
  ['14:05', 'time', 'hms24', 'fourteen oh five'],
  ['$5.50', 'currency', undefined, 'five dollars and fifty cents'],
  ['€1,200', 'currency', undefined, 'one thousand two hundred euros'],
  ['42 USD', 'currency', undefined, 'forty-two dollars'],
  ['3/4', 'fraction', undefined, 'three quarters'],
  ['1/2', 'fraction', undefined, 'one half'],
  ['10 km', 'unit', undefined, 'ten kilometers'],
];
