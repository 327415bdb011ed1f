import { expect } from 'chai';
import { describe, it } from 'mocha';
import { DomainError } from '../../../src/domain/domain-error.js';
import { userEvolver } from '../../../src/domain/users/user-state.js';
import { deciderSpec } from '../../support/decider-spec.js';
import { registered } from '../../support/events.js';

/** The given/when/then helper must fail whenever the decision differs from the expectation. */
describe('deciderSpec helper', () => {
  const user = deciderSpec(userEvolver);
  const decides = () => ({ events: [{ ...registered('ann'), id: 'id-1' }], result: 1 });
  const refuses = () => {
    throw new DomainError('X.Y', 'no', '/a');
  };

  it('folds the given events into the state', () => {
    expect(user.given([registered('ann')]).state).to.include({ exists: true, app_user_id: 'ann' });
    expect(user.given().state.exists).to.equal(false);
  });

  it('then: passes on equal type + data, returns result and the state after', () => {
    const { result, state } = user
      .given()
      .when(decides)
      .then([registered('ann')]);
    expect(result).to.equal(1);
    expect(state.exists).to.equal(true);
  });

  it('then: fails on other data, on missing and on extra events', () => {
    expect(() =>
      user
        .given()
        .when(decides)
        .then([registered('bob')]),
    ).to.throw();
    expect(() =>
      user
        .given()
        .when(decides)
        .then([registered('ann'), registered('ann')]),
    ).to.throw();
    expect(() => user.given().when(decides).then([])).to.throw();
  });

  it('then: compares ids only where the expected event sets one', () => {
    user
      .given()
      .when(decides)
      .then([{ ...registered('ann'), id: 'id-1' }]);
    expect(() =>
      user
        .given()
        .when(decides)
        .then([{ ...registered('ann'), id: 'id-2' }]),
    ).to.throw();
  });

  it('then / thenNothing: fail when decide throws, naming the error code', () => {
    expect(() => user.given().when(refuses).then([])).to.throw(/X\.Y/);
    expect(() => user.given().when(refuses).thenNothing()).to.throw(/X\.Y/);
  });

  it('thenNothing: fails when there are events', () => {
    expect(() => user.given().when(decides).thenNothing()).to.throw();
  });

  it('thenError: checks code and, when given, source', () => {
    user.given().when(refuses).thenError('X.Y', '/a');
    user.given().when(refuses).thenError('X.Y');
    expect(() => user.given().when(refuses).thenError('X.Z')).to.throw();
    expect(() => user.given().when(refuses).thenError('X.Y', '/b')).to.throw();
    expect(() => user.given().when(refuses).thenError('X.Y', null)).to.throw();
  });

  it('thenError: fails when decide succeeds or throws something else', () => {
    expect(() => user.given().when(decides).thenError('X.Y')).to.throw(/expected DomainError X\.Y/);
    expect(() =>
      user
        .given()
        .when(() => {
          throw new Error('plain');
        })
        .thenError('X.Y'),
    ).to.throw();
  });
});
