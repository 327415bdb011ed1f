import { expect } from 'chai';
import type { Decision, Evolver, NewDomainEvent } from '../../src/domain/decider.js';
import { DomainError } from '../../src/domain/domain-error.js';
import type { DomainEvent } from '../../src/domain/events/index.js';

/**
 * Given / when / then for pure deciders:
 *
 *   deciderSpec(userEvolver)
 *     .given([registered('ann')])
 *     .when((state) => decideWithdrawCredits(state, command))
 *     .then([{ type: 'CreditsWithdrawn', data: { … } }]);
 *
 * `then` compares type + data of every event, in order, and the id only where the expected
 * event sets one. `thenError` expects a DomainError with that code (and source, when given).
 */
export interface DeciderSpec<S> {
  given(events?: DomainEvent[]): Given<S>;
}

export interface Given<S> {
  /** The state the given events fold to. */
  readonly state: S;
  when<R>(decide: (state: S) => Decision<R>): When<S, R>;
}

export interface When<S, R> {
  /** Expects exactly these events; returns the decision's result and the state after the events. */
  then(expected: NewDomainEvent[]): { result: R; state: S; events: NewDomainEvent[] };
  /** Expects no events at all. */
  thenNothing(): { result: R; state: S };
  /** Expects a DomainError; `source` is checked when given (null included). */
  thenError(code: string, source?: string | null): DomainError;
  /** The raw decision, for assertions the forms above do not cover. */
  decision(): { result: R; state: S; events: NewDomainEvent[] };
}

export function deciderSpec<S>(evolver: Evolver<S>): DeciderSpec<S> {
  return {
    given(events: DomainEvent[] = []) {
      const state = events.reduce(evolver.evolve, evolver.initialState());
      return {
        state,
        when<R>(decide: (state: S) => Decision<R>): When<S, R> {
          const run = () => {
            const decision = decide(state);
            return { ...decision, state: decision.events.reduce(evolver.evolve, state) };
          };
          const decided = () => {
            try {
              return run();
            } catch (error) {
              const detail = error instanceof DomainError ? `${error.code} (${error.message})` : String(error);
              throw new Error(`expected a decision, but decide threw ${detail}`);
            }
          };
          return {
            // biome-ignore lint/suspicious/noThenProperty: given/when/then reads best as .then(events); the spec is never awaited.
            then(expected) {
              const outcome = decided();
              expect(outcome.events.map((event, index) => comparable(event, expected[index]))).to.deep.equal(expected.map((event) => comparable(event, event)));
              return outcome;
            },
            thenNothing() {
              const outcome = decided();
              expect(
                outcome.events.map((event) => event.type),
                'events',
              ).to.deep.equal([]);
              return outcome;
            },
            thenError(code, source) {
              let outcome: unknown;
              try {
                outcome = run();
              } catch (error) {
                expect(error, 'thrown').to.be.instanceOf(DomainError);
                const domainError = error as DomainError;
                expect(domainError.code, 'error code').to.equal(code);
                if (source !== undefined) expect(domainError.source, 'error source').to.equal(source);
                return domainError;
              }
              expect.fail(`expected DomainError ${code}, but decide returned ${JSON.stringify(outcome, bigints)}`);
            },
            decision: decided,
          };
        },
      };
    },
  };
}

/** type + data, plus id when the expected event names one. */
export function comparable(event: NewDomainEvent, expected: NewDomainEvent | undefined): Record<string, unknown> {
  const shape: Record<string, unknown> = { type: event.type, data: event.data };
  if (expected?.id !== undefined) shape.id = event.id;
  return shape;
}

function bigints(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}
