import { expect } from 'chai';
import { csvField, csvRecord } from '../../../src/application/export/csv.js';
import { CsvParseError, parseCsv } from '../../support/csv-reader.js';

describe('export: RFC 4180 CSV', () => {
  describe('csvField', () => {
    it('leaves plain text as it is', () => {
      expect(csvField('user-alice')).to.equal('user-alice');
      expect(csvField('')).to.equal('');
      expect(csvField('Zoë ✓ 42')).to.equal('Zoë ✓ 42');
    });

    it('quotes a field with a comma, a double quote, a CR or an LF, doubling inner quotes', () => {
      expect(csvField('a,b')).to.equal('"a,b"');
      expect(csvField('say "hi"')).to.equal('"say ""hi"""');
      expect(csvField('"')).to.equal('""""');
      expect(csvField('line 1\nline 2')).to.equal('"line 1\nline 2"');
      expect(csvField('line 1\r\nline 2')).to.equal('"line 1\r\nline 2"');
      expect(csvField('cr\ronly')).to.equal('"cr\ronly"');
    });

    it('quotes leading or trailing spaces so tools that trim keep them', () => {
      expect(csvField(' padded')).to.equal('" padded"');
      expect(csvField('padded ')).to.equal('"padded "');
      expect(csvField('in side')).to.equal('in side');
    });
  });

  it('csvRecord joins with commas and ends with CRLF', () => {
    expect(csvRecord(['a', 'b,c', ''])).to.equal('a,"b,c",\r\n');
  });

  describe('parseCsv', () => {
    it('reads back what csvRecord wrote, whatever the fields hold', () => {
      const rows = [
        ['plain', '', 'a,b', 'say "hi"', '""', 'multi\nline', 'crlf\r\ninside', ' spaced '],
        ['{"json":"with, comma and \\"quotes\\""}', 'ünïcödé', ',', '\n', '"', 'last'],
      ];
      expect(parseCsv(rows.map(csvRecord).join(''))).to.deep.equal(rows);
    });

    it('accepts LF record ends and a last record without a line break', () => {
      expect(parseCsv('a,b\nc,"d\ne"')).to.deep.equal([
        ['a', 'b'],
        ['c', 'd\ne'],
      ]);
    });

    it('keeps empty fields, including trailing ones', () => {
      expect(parseCsv(',\r\n"",x\r\n')).to.deep.equal([
        ['', ''],
        ['', 'x'],
      ]);
    });

    it('rejects malformed quoting', () => {
      expect(() => parseCsv('"unterminated')).to.throw(CsvParseError);
      expect(() => parseCsv('"a"b')).to.throw(CsvParseError);
      expect(() => parseCsv('a"b')).to.throw(CsvParseError);
    });
  });
});
