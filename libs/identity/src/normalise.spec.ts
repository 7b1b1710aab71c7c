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
