import { expect } from 'chai';
import { type Config, loadConfig } from '../../../src/config.js';
import { readmeSection } from '../../support/readme.js';

/** A loaded setting as the README's table writes its default: `–` for none, a budget as `points/secondss`. */
function asWritten(value: Config[keyof Config]): string {
  if (value === null || (Array.isArray(value) && value.length === 0)) return '–';
  if (typeof value === 'object' && 'points' in value) return `${value.points}/${value.seconds}s`;
  return String(value);
}

describe('Configuration defaults', () => {
  // Rows of one variable: `| \`NAME\` | \`default\` or – | meaning |`.
  const rows = [...readmeSection('## Configuration').matchAll(/^\| `([A-Z_]+)` \| (`[^`]*`|–) \|/gm)].map(([, name, written]) => ({
    name: name!,
    written: written!.replaceAll('`', ''),
  }));

  it('the README table lists every setting of one variable', () => {
    expect(rows.length).to.be.greaterThan(40);
  });

  it('every default the README table states is the one the service starts with', () => {
    const defaults = loadConfig({}) as unknown as Record<string, Config[keyof Config]>;
    for (const { name, written } of rows) {
      expect(defaults, name).to.have.property(name);
      const loaded = asWritten(defaults[name]!);
      // A long value is written shortened: `5b2c1c52-…e6f7`.
      const [head, tail] = written.split('…');
      if (tail === undefined) expect(loaded, name).to.equal(written);
      else expect(loaded.startsWith(head!) && loaded.endsWith(tail), `${name}: ${loaded} against ${written}`).to.equal(true);
    }
  });
});
