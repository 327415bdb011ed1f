import { readdirSync, readFileSync } from 'node:fs';
import { expect } from 'chai';
import { defaultProjections } from '../../support/projections.js';
import { foldsWith } from '../../../projections/projection.js';
import { webhooksProjection } from '../../../projections/webhooks.js';
import { webhookEndpointEvolver } from '../../../src/domain/webhooks/webhook-endpoint.js';

const folder = new URL('../../../projections/', import.meta.url);

describe('projection versions follow the evolvers they fold with', () => {
  it('a projection that folds with an evolver names it, and its version includes the evolver’s', () => {
    for (const file of readdirSync(folder).filter((name) => name.endsWith('.ts'))) {
      const source = readFileSync(new URL(file, folder), 'utf8');
      // Evolvers imported by value (not as types) are folded with.
      const imported = [...source.matchAll(/import \{([^}]*)\} from '\.\.\/src\/domain\/[^']+'/g)].flatMap((match) =>
        match[1]!
          .split(',')
          .map((name) => name.trim())
          .filter((name) => /^[a-zA-Z]+Evolver$/.test(name)),
      );
      if (imported.length === 0) continue;
      const projection = defaultProjections.find((candidate) => source.includes(`name: '${candidate.name}'`));
      expect(projection, `the projection in projections/${file}`).to.not.equal(undefined);
      expect(
        projection!.evolvers?.map((evolver) => evolver.name),
        `projections/${file} folds with ${imported.join(', ')}: declare them with foldsWith`,
      ).to.have.length(imported.length);
    }
  });

  it("webhooks: the endpoint evolver's version (3: a rotation retires every secret but the one it replaces) plus its own (1: created_position); a new evolver version asks for a replay", () => {
    expect(webhooksProjection.evolvers).to.deep.equal([webhookEndpointEvolver]);
    expect(webhooksProjection.version)
      .to.equal(webhookEndpointEvolver.version + 1)
      .and.equal(4);
    const moved = foldsWith(1, [{ ...webhookEndpointEvolver, version: webhookEndpointEvolver.version + 1 }]);
    expect(moved.version).to.be.greaterThan(webhooksProjection.version);
  });
});
