import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  companyNameTokens,
  nameTokens,
  nationalPhoneDigits,
  normaliseAmount,
  normaliseEmail,
  normaliseICalUid,
  normaliseMessageId,
  normalisePhone,
  registrableDomain,
  titleText,
  utcPrefix,
} from './normalise';
import { jaroWinkler, nameSimilarity } from './similarity';

describe('normaliseEmail', () => {
  it('trims and lower-cases, and reads display-name and mailto forms', () => {
    expect(normaliseEmail('  Ana.Lima@Acme.COM ')).toBe('ana.lima@acme.com');
    expect(normaliseEmail('Ana Lima <Ana.Lima@acme.com>')).toBe('ana.lima@acme.com');
    expect(normaliseEmail('mailto:ana@acme.com')).toBe('ana@acme.com');
  });

  it('rejects what is not an address', () => {
    for (const raw of ['', 'ana', 'ana@', '@acme.com', 'ana@localhost', 'a b@x.com', 42, null, undefined]) {
      expect(normaliseEmail(raw)).toBeNull();
    }
  });

  it('keeps plus tags and Gmail dots unless a setting says otherwise', () => {
    expect(normaliseEmail('ana+crm@acme.com')).toBe('ana+crm@acme.com');
    expect(normaliseEmail('ana+crm@acme.com', { plusAddressing: true })).toBe('ana@acme.com');
    expect(normaliseEmail('a.n.a@gmail.com')).toBe('a.n.a@gmail.com');
    expect(normaliseEmail('A.n.a@googlemail.com', { gmailDots: true })).toBe('ana@gmail.com');
    // Dots matter everywhere but Gmail.
    expect(normaliseEmail('a.na@acme.com', { gmailDots: true })).toBe('a.na@acme.com');
  });
});

describe('normalisePhone', () => {
  it('formats to E.164 whatever the punctuation', () => {
    expect(normalisePhone('(415) 555-0132', 'US')).toBe('+14155550132');
    expect(normalisePhone('+1 415.555.0132')).toBe('+14155550132');
    expect(normalisePhone('+44 (0)20 7946 0958')).toBe('+442079460958');
    expect(normalisePhone('020 7946 0958', 'GB')).toBe('+442079460958');
    expect(normalisePhone('+14155550132')).toBe('+14155550132');
  });

  it('rejects what cannot be a number', () => {
    expect(normalisePhone('12', 'US')).toBeNull();
    expect(normalisePhone('call me')).toBeNull();
    expect(normalisePhone('4155550132')).toBeNull(); // no country to assume
    expect(normalisePhone(undefined)).toBeNull();
  });
});

describe('registrableDomain', () => {
  it('takes the registrable part of hosts, URLs and addresses', () => {
    expect(registrableDomain('mail.acme.co.uk')).toBe('acme.co.uk');
    expect(registrableDomain('ana@mail.acme.co.uk')).toBe('acme.co.uk');
    expect(registrableDomain('https://www.Acme.com/about')).toBe('acme.com');
    expect(registrableDomain('localhost')).toBeNull();
    expect(registrableDomain('')).toBeNull();
  });
});

describe('names and ids', () => {
  it('tokenises names without case, accents or honorifics', () => {
    expect(nameTokens('  Dr. José   Álvarez-Núñez Jr ')).toEqual(['jose', 'alvarez', 'nunez']);
    expect(companyNameTokens('Acme, Inc.')).toEqual(['acme']);
    expect(nameTokens(undefined)).toEqual([]);
  });

  it('normalises iCalUIDs and Message-IDs', () => {
    expect(normaliseICalUid(' abc@google.com ')).toBe('abc@google.com');
    expect(normaliseMessageId('<CAF1x@Mail.Gmail.com>')).toBe('CAF1x@mail.gmail.com');
    expect(normaliseMessageId('<>')).toBeNull();
  });

  it('scores names with Jaro-Winkler, tolerant of swapped order', () => {
    expect(jaroWinkler('martha', 'marhta')).toBeCloseTo(0.961, 3);
    expect(jaroWinkler('dixon', 'dicksonx')).toBeCloseTo(0.813, 3);
    expect(jaroWinkler('', 'a')).toBe(0);
    expect(nameSimilarity('ana lima', 'lima ana')).toBe(1);
    expect(nameSimilarity('ana lima', 'ana lmia')).toBeGreaterThan(0.9);
    expect(nameSimilarity('ana lima', 'boris stone')).toBeLessThan(0.6);
  });
});

describe('deal and meeting facts', () => {
  it('spells titles, amounts and times one way', () => {
    expect(titleText('  ACME — Platform,  2026 ')).toBe('acme platform 2026');
    expect(titleText('Café Ünïon')).toBe('cafe union');
    expect(titleText('—')).toBe('');
    expect(normaliseAmount('12500.00')).toBe('12500');
    expect(normaliseAmount(12500.5)).toBe('12500.5');
    expect(normaliseAmount('1,250')).toBe('1250');
    for (const raw of ['', 'n/a', null, undefined, Number.NaN]) expect(normaliseAmount(raw)).toBeNull();
    expect(utcPrefix('2026-03-01T23:30:00.000-05:00', 10)).toBe('2026-03-02');
    expect(utcPrefix('2026-12-01T10:00:59.999Z', 16)).toBe('2026-12-01T10:00');
    expect(utcPrefix('2026-12-24', 16)).toBe('2026-12-24T00:00');
    expect(utcPrefix('soon', 10)).toBeNull();
  });

  it('keeps the national digits of a phone number only when it cannot be placed', () => {
    expect(nationalPhoneDigits('(415) 555-0132')).toBe('4155550132');
    expect(nationalPhoneDigits('020 7946 0012')).toBe('2079460012');
    expect(nationalPhoneDigits('(415) 555-0132', 'US')).toBeNull();
    expect(nationalPhoneDigits('+1 415 555 0132')).toBeNull();
    expect(nationalPhoneDigits('12-34')).toBeNull();
  });
});

/**
 * A Global Object ID in hex, built from its parts (MS-OXOCAL 2.2.1.27): class id, YH YL M D,
 * creation FILETIME (little-endian), 8 reserved bytes, data size (little-endian), data. The
 * data is `vCal-Uid`, `01 00 00 00`, the UID and `00` unless `data` says otherwise.
 */
function goid(
  uid: string,
  parts: {
    date?: [number, number, number];
    filetime?: bigint;
    reserved?: number;
    size?: number;
    data?: Buffer;
  } = {},
): string {
  const data =
    parts.data ??
    Buffer.concat([
      Buffer.from('vCal-Uid', 'ascii'),
      Buffer.from([1, 0, 0, 0]),
      Buffer.from(uid),
      Buffer.from([0]),
    ]);
  const header = Buffer.alloc(40);
  Buffer.from('040000008200E00074C5B7101A82E008', 'hex').copy(header, 0);
  if (parts.date) {
    header.writeUInt16BE(parts.date[0], 16);
    header[18] = parts.date[1];
    header[19] = parts.date[2];
  }
  header.writeBigUInt64LE(parts.filetime ?? 0n, 20);
  header[31] = parts.reserved ?? 0;
  header.writeUInt32LE(parts.size ?? data.length, 36);
  return Buffer.concat([header, data]).toString('hex').toUpperCase();
}

describe('normaliseICalUid and Exchange Global Object IDs', () => {
  const GOOGLE = '7kukuqrfedlm2f9t2vhjtnlq0s@google.com';

  it("reads an Outlook invitation's iCalUId as the UID of the system that sent it", () => {
    expect(normaliseICalUid(goid(GOOGLE))).toBe(GOOGLE);
    expect(normaliseICalUid(goid(GOOGLE))).toBe(normaliseICalUid(` ${GOOGLE} `));
    // The creation time may be set or zero; either way the same meeting.
    expect(normaliseICalUid(goid(GOOGLE, { filetime: 0x01c873e461d42550n }))).toBe(GOOGLE);
    // Hex is hex whatever its case.
    expect(normaliseICalUid(goid(GOOGLE).toLowerCase())).toBe(GOOGLE);
    expect(normaliseICalUid(`  ${goid(GOOGLE)}\n`)).toBe(GOOGLE);
    expect(normaliseICalUid(goid('Réunion-ü@calendar.example'))).toBe('Réunion-ü@calendar.example');
  });

  it('decodes the examples Microsoft and Stack Overflow publish', () => {
    // MS-ASEMAIL 4.3, example 2 (GlobalObjId in base64, here in hex as Graph gives it).
    const msAsEmail = Buffer.from(
      'BAAAAIIA4AB0xbcQGoLgCAAAAAAAAAAAAAAAAAAAAAAAAAAAMwAAAHZDYWwtVWlkAQAAAHs4MTQxMkQzQy0yQTI0LTRFOUQtQjIwRS0xMUY3QkJFOTI3OTl9AA==',
      'base64',
    )
      .toString('hex')
      .toUpperCase();
    expect(normaliseICalUid(msAsEmail)).toBe('{81412D3C-2A24-4E9D-B20E-11F7BBE92799}');
    expect(msAsEmail).toBe(goid('{81412D3C-2A24-4E9D-B20E-11F7BBE92799}'));
    // A Graph iCalUId of a meeting sent from Gmail (stackoverflow.com/questions/36985390).
    const fromGmail =
      '040000008200E00074C5B7101A82E0080000000000000000000000000000000000000000320000007643616C2D55696401000000716138377132743535326465746637373335303870647263686340676F6F676C652E636F6D00';
    expect(normaliseICalUid(fromGmail)).toBe('qa87q2t552detf773508pdrchc@google.com');
    expect(fromGmail).toBe(goid('qa87q2t552detf773508pdrchc@google.com'));
  });

  it("keeps a meeting made in Exchange as it is: its data is Exchange's own id, not a UID", () => {
    // MS-OXOCAL 4.4.1 (an exception, moved from 25 March 2008) and MS-ASEMAIL 4.3 example 1.
    for (const exchange of [
      '040000008200E00074C5B7101A82E00807D803195025D461E473C8010000000000000000100000002A5844B3A444F74A9C246C60886F116B',
      '040000008200E00074C5B7101A82E00800000000E040C9C12685C4010000000000000000100000000BF0ED4B6E4EE94E9E39E3867B378EF3',
    ])
      expect(normaliseICalUid(` ${exchange} `)).toBe(exchange);
  });

  it('keeps anything not exactly a Global Object ID carrying a UID, apart from surrounding space', () => {
    const good = goid(GOOGLE);
    const dataStart = 80;
    const malformed = [
      good.slice(0, -2), // cut short: the size no longer matches
      `${good}00`, // a byte too many
      `${good}0`, // odd length
      good.replace(/^04/, '05'), // another class id
      `${good.slice(0, 40)}G${good.slice(41)}`, // not hex
      goid(GOOGLE, { size: Buffer.byteLength(GOOGLE) + 12 }), // size one short of the data
      goid(GOOGLE, { reserved: 1 }), // reserved bytes must be zero
      `${good.slice(0, dataStart)}7643616C2D55696402000000${good.slice(dataStart + 24)}`, // marker version 2
      `${good.slice(0, dataStart)}7663616C2D556964${good.slice(dataStart + 16)}`, // `vcal-Uid`
      `${good.slice(0, -2)}41`, // no terminating 00
      goid('', {}), // no UID
      goid('   '), // a UID of space
      goid('a\u0000b'), // a NUL inside
      goid('a\tb'), // a control character
      goid('', {
        data: Buffer.concat([
          Buffer.from('vCal-Uid\x01\x00\x00\x00', 'latin1'),
          Buffer.from([0xc3, 0x28, 0]),
        ]),
      }), // not UTF-8
      goid(GOOGLE, { date: [2030, 13, 1] }), // no 13th month
      goid(GOOGLE, { date: [2030, 2, 29] }), // 2030 is no leap year
      goid(GOOGLE, { date: [0, 3, 11] }), // a date without its year
      goid(GOOGLE, { date: [2030, 3, 0] }),
    ];
    for (const raw of malformed) expect(normaliseICalUid(`\t${raw} `), raw).toBe(raw);
    expect(normaliseICalUid(goid(GOOGLE, { date: [2028, 2, 29] }))).toBe(`${GOOGLE}#2028-02-29`);
    for (const raw of ['', '   ', 42, null, undefined, {}]) expect(normaliseICalUid(raw)).toBeNull();
  });

  it('keeps each occurrence of a series apart from the series and from the other occurrences', () => {
    const series = normaliseICalUid(goid(GOOGLE));
    const march11 = normaliseICalUid(goid(GOOGLE, { date: [2030, 3, 11] }));
    const march13 = normaliseICalUid(goid(GOOGLE, { date: [2030, 3, 13] }));
    expect(march11).toBe(`${GOOGLE}#2030-03-11`);
    expect(march13).toBe(`${GOOGLE}#2030-03-13`);
    expect(new Set([series, march11, march13]).size).toBe(3);
    // The same occurrence seen twice (creation time set or not) is one value.
    expect(normaliseICalUid(goid(GOOGLE, { date: [2030, 3, 11], filetime: 0x01d1a1a09429c138n }))).toBe(
      march11,
    );
  });

  /** Printable UIDs as another system would send them: no control characters, no edge space. */
  const uid = fc
    .oneof(
      fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 60 }),
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }),
    )
    .filter((s) => s.trim() === s && s.length > 0 && !/[\p{Cc}]/u.test(s));
  const date = fc
    .date({
      min: new Date('1601-01-01T00:00:00Z'),
      max: new Date('9999-12-31T00:00:00Z'),
      noInvalidDate: true,
    })
    .map((d): [number, number, number] => [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate()]);

  it('gives back any printable UID from its Global Object ID, and each occurrence with its date', () => {
    fc.assert(
      fc.property(uid, date, (u, [y, m, d]) => {
        expect(normaliseICalUid(goid(u))).toBe(u);
        expect(normaliseICalUid(goid(u))).toBe(normaliseICalUid(u));
        const day = `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
        expect(normaliseICalUid(goid(u, { date: [y, m, d] }))).toBe(`${u}#${day}`);
      }),
      { numRuns: 1_000 },
    );
  });

  it('never gives two different UIDs, or two occurrences, one value', () => {
    fc.assert(
      fc.property(uid, uid, date, date, (a, b, da, db) => {
        if (a !== b) expect(normaliseICalUid(goid(a))).not.toBe(normaliseICalUid(goid(b)));
        if (a !== b)
          expect(normaliseICalUid(goid(a, { date: da }))).not.toBe(normaliseICalUid(goid(b, { date: da })));
        expect(normaliseICalUid(goid(a, { date: da }))).not.toBe(normaliseICalUid(goid(a)));
        if (da.join() !== db.join())
          expect(normaliseICalUid(goid(a, { date: da }))).not.toBe(normaliseICalUid(goid(a, { date: db })));
      }),
      { numRuns: 1_000 },
    );
  });
});
