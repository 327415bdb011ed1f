import {
  ANY,
  type AllStreamResolvedEvent,
  CancelledError,
  DeadlineExceededError,
  NO_STREAM,
  NotLeaderError,
  START,
  STREAM_EXISTS,
  StreamNotFoundError,
  UnavailableError,
  WrongExpectedVersionError,
  AccessDeniedError,
} from '@eventstore/db-client';
import { expect } from 'chai';
import {
  exactMatchRegex,
  fromClientExpectedRevision,
  fromCurrentRevision,
  hasFilter,
  isStreamNotFound,
  isSystemEvent,
  matchesFilter,
  positionOf,
  resubscribeDelayMs,
  serverFilterOf,
  toClientExpectedRevision,
  toEsdbConnectionString,
  toPortError,
  toPortPosition,
  toReadPosition,
  RECORDED_AT,
  toRecordedEvent,
  UNKNOWN_COMMIT_POSITION,
} from '../../../src/adapters/eventstoredb/eventstoredb-mapping.js';
import { StoreUnavailableError, WrongExpectedRevisionError } from '../../../src/ports/event-store.js';

function resolved(overrides: Partial<NonNullable<AllStreamResolvedEvent['event']>> = {}, commitPosition?: bigint): AllStreamResolvedEvent {
  return {
    event: {
      streamId: 'user-1',
      id: '4a1a7c1e-2f1b-4d5e-9a3b-0c7d8e9f0a1b',
      revision: 3n,
      type: 'UserRegistered',
      data: { app_user_id: '1' },
      metadata: { correlation_id: 'c', causation_id: 'c', actor: 'a', schema_version: 1 },
      isJson: true,
      created: new Date('2026-01-02T03:04:05.678Z'),
      position: { commit: 1234n, prepare: 1234n },
      ...overrides,
    } as NonNullable<AllStreamResolvedEvent['event']>,
    ...(commitPosition === undefined ? {} : { commitPosition }),
  };
}

describe('EventStoreDB mapping', function () {
  describe('connection strings', function () {
    it('accepts esdb:// unchanged and maps KurrentDB schemes to esdb', function () {
      expect(toEsdbConnectionString('esdb://localhost:2113?tls=false')).to.equal('esdb://localhost:2113?tls=false');
      expect(toEsdbConnectionString('kurrentdb://a:2113?tls=false')).to.equal('esdb://a:2113?tls=false');
      expect(toEsdbConnectionString('kurrentdb+discover://a:2113')).to.equal('esdb+discover://a:2113');
      expect(toEsdbConnectionString('kdb://a:2113')).to.equal('esdb://a:2113');
    });
  });

  describe('expected revision ↔ client options', function () {
    it('maps the named states', function () {
      expect(toClientExpectedRevision('any')).to.equal(ANY);
      expect(toClientExpectedRevision('no_stream')).to.equal(NO_STREAM);
      expect(toClientExpectedRevision('stream_exists')).to.equal(STREAM_EXISTS);
    });

    it('maps exact revisions to bigint, 0 included', function () {
      expect(toClientExpectedRevision(0)).to.equal(0n);
      expect(toClientExpectedRevision(41)).to.equal(41n);
    });

    it('refuses negative or fractional revisions', function () {
      expect(() => toClientExpectedRevision(-1)).to.throw(RangeError);
      expect(() => toClientExpectedRevision(1.5)).to.throw(RangeError);
    });

    it('round-trips every kind', function () {
      for (const expected of ['any', 'no_stream', 'stream_exists', 0, 7] as const) {
        expect(fromClientExpectedRevision(toClientExpectedRevision(expected))).to.equal(expected);
      }
    });

    it('reads the current revision with -1 for no stream', function () {
      expect(fromCurrentRevision(NO_STREAM)).to.equal(-1);
      expect(fromCurrentRevision(undefined)).to.equal(-1);
      expect(fromCurrentRevision(0n)).to.equal(0);
      expect(fromCurrentRevision(12n)).to.equal(12);
    });
  });

  describe('client errors ↔ port errors', function () {
    it('maps a wrong expected version to WrongExpectedRevisionError with the actual revision', function () {
      const error = new WrongExpectedVersionError(undefined, { streamName: 'user-1', expected: 2n, current: 5n });
      const mapped = toPortError(error, { stream: 'user-1', expected: 2 });
      expect(mapped).to.be.instanceOf(WrongExpectedRevisionError);
      expect(mapped).to.deep.include({ stream: 'user-1', expected: 2, actual: 5 });
    });

    it('uses -1 when the stream does not exist, and the error itself without context', function () {
      const error = new WrongExpectedVersionError(undefined, { streamName: 'code-X', expected: STREAM_EXISTS, current: NO_STREAM });
      const mapped = toPortError(error);
      expect(mapped).to.be.instanceOf(WrongExpectedRevisionError);
      expect(mapped).to.deep.include({ stream: 'code-X', expected: 'stream_exists', actual: -1 });
    });

    it('maps connection failures to StoreUnavailableError, keeping the cause', function () {
      for (const error of [new UnavailableError(), new DeadlineExceededError(), new CancelledError()]) {
        const mapped = toPortError(error);
        expect(mapped).to.be.instanceOf(StoreUnavailableError);
        expect((mapped as Error).cause).to.equal(error);
      }
    });

    it('treats a leader change as unavailable (retry against the new leader)', function () {
      const notLeader = Object.assign(Object.create(NotLeaderError.prototype) as NotLeaderError, { type: 'not-leader', message: 'not leader' });
      expect(toPortError(notLeader)).to.be.instanceOf(StoreUnavailableError);
    });

    it('maps discovery and socket errors the client did not convert', function () {
      expect(toPortError(new Error('Failed to discover after 10 attempts.'))).to.be.instanceOf(StoreUnavailableError);
      expect(toPortError(new Error('connect ECONNREFUSED 127.0.0.1:2113'))).to.be.instanceOf(StoreUnavailableError);
      expect(toPortError(Object.assign(new Error('14 UNAVAILABLE: No connection established'), { code: 14 }))).to.be.instanceOf(StoreUnavailableError);
    });

    it('lets other errors through unchanged', function () {
      const denied = new AccessDeniedError();
      expect(toPortError(denied)).to.equal(denied);
      const bug = new TypeError('x is undefined');
      expect(toPortError(bug)).to.equal(bug);
      expect(toPortError('not an error')).to.equal('not an error');
    });

    it('recognises a missing stream', function () {
      expect(isStreamNotFound(new StreamNotFoundError(undefined, 'user-1'))).to.equal(true);
      expect(isStreamNotFound(new UnavailableError())).to.equal(false);
      expect(isStreamNotFound(null)).to.equal(false);
    });
  });

  describe('positions ↔ checkpoints', function () {
    it('reads from the start without a position, else from {commit, prepare} = position', function () {
      expect(toReadPosition(null)).to.equal(START);
      expect(toReadPosition(0n)).to.deep.equal({ commit: 0n, prepare: 0n });
      const large = 2n ** 63n + 5n;
      expect(toReadPosition(large)).to.deep.equal({ commit: large, prepare: large });
      expect(() => toReadPosition(-1n)).to.throw(RangeError);
    });

    it('takes the commit position, and nothing when the server did not report one', function () {
      expect(toPortPosition({ commit: 99n, prepare: 99n })).to.equal(99n);
      expect(toPortPosition(undefined)).to.equal(null);
      expect(toPortPosition({ commit: UNKNOWN_COMMIT_POSITION, prepare: UNKNOWN_COMMIT_POSITION })).to.equal(null);
    });

    it('uses the event position, else the commit position of the read', function () {
      expect(positionOf(resolved())).to.equal(1234n);
      expect(positionOf(resolved({ position: undefined }, 77n))).to.equal(77n);
      expect(positionOf(resolved({ position: undefined }))).to.equal(null);
      expect(positionOf(resolved({ position: undefined }, UNKNOWN_COMMIT_POSITION))).to.equal(null);
    });

    it('keeps 64-bit positions exact', function () {
      const top = 2n ** 64n - 2n;
      expect(positionOf(resolved({ position: { commit: top, prepare: top } }))).to.equal(top);
    });
  });

  describe('recorded events', function () {
    it('maps a client event to the port shape', function () {
      expect(toRecordedEvent(resolved())).to.deep.equal({
        id: '4a1a7c1e-2f1b-4d5e-9a3b-0c7d8e9f0a1b',
        type: 'UserRegistered',
        stream: 'user-1',
        revision: 3,
        position: 1234n,
        data: { app_user_id: '1' },
        metadata: { correlation_id: 'c', causation_id: 'c', actor: 'a', schema_version: 1 },
        recordedAt: new Date('2026-01-02T03:04:05.678Z'),
      });
    });

    it("reads a copied event's first recording time from its metadata, and leaves the key out of the metadata", function () {
      const metadata = { correlation_id: 'c', causation_id: 'c', actor: 'a', schema_version: 1, [RECORDED_AT]: '2024-02-29T23:59:58.123Z' };
      const recorded = toRecordedEvent(resolved({ metadata: Buffer.from(JSON.stringify(metadata)) }))!;
      expect(recorded.recordedAt).to.deep.equal(new Date('2024-02-29T23:59:58.123Z'));
      expect(recorded.metadata).to.deep.equal({ correlation_id: 'c', causation_id: 'c', actor: 'a', schema_version: 1 });
      const unreadable = toRecordedEvent(resolved({ metadata: Buffer.from(JSON.stringify({ ...metadata, [RECORDED_AT]: 'not a time' })) }))!;
      expect(unreadable.recordedAt).to.deep.equal(new Date('2026-01-02T03:04:05.678Z'));
    });

    it('skips system events and unresolved links', function () {
      expect(toRecordedEvent(resolved({ type: '$metadata' }))).to.equal(null);
      expect(toRecordedEvent(resolved({ streamId: '$stats-127.0.0.1:2113', type: '$statsCollected' }))).to.equal(null);
      expect(toRecordedEvent({ commitPosition: 5n })).to.equal(null);
      expect(isSystemEvent('$$user-1', 'Anything')).to.equal(true);
      expect(isSystemEvent('user-1', 'UserRegistered')).to.equal(false);
    });

    it('parses binary data and metadata as JSON, and tolerates missing metadata', function () {
      const binary = resolved({
        isJson: false,
        data: new TextEncoder().encode('{"a":1}'),
        metadata: undefined,
      } as Partial<NonNullable<AllStreamResolvedEvent['event']>>);
      const mapped = toRecordedEvent(binary)!;
      expect(mapped.data).to.deep.equal({ a: 1 });
      expect(mapped.metadata).to.deep.equal({});
    });

    it('marks a position the server did not report as -1', function () {
      expect(toRecordedEvent(resolved({ position: undefined }))!.position).to.equal(-1n);
    });
  });

  describe('filters', function () {
    it('builds an exact-match regex with special characters escaped', function () {
      const regex = exactMatchRegex(['UserRegistered', 'Code.Claimed', 'A|B']);
      expect(regex).to.equal('^(?:UserRegistered|Code\\.Claimed|A\\|B)$');
      const compiled = new RegExp(regex);
      expect(compiled.test('UserRegistered')).to.equal(true);
      expect(compiled.test('UserRegisteredLater')).to.equal(false);
      expect(compiled.test('CodeXClaimed')).to.equal(false);
      expect(compiled.test('A|B')).to.equal(true);
    });

    it('asks the server for stream prefixes when given, else for exact types', function () {
      expect(serverFilterOf({ streamPrefixes: ['user-'], types: ['A'] })).to.deep.equal({ on: 'stream', prefixes: ['user-'] });
      expect(serverFilterOf({ types: ['A', 'B'] })).to.deep.equal({ on: 'type', regex: '^(?:A|B)$' });
    });

    it('checks prefixes and types together on the client', function () {
      const filter = { streamPrefixes: ['user-', 'code-'], types: ['UserRegistered'] };
      expect(matchesFilter({ stream: 'user-1', type: 'UserRegistered' }, filter)).to.equal(true);
      expect(matchesFilter({ stream: 'xuser-1', type: 'UserRegistered' }, filter)).to.equal(false);
      expect(matchesFilter({ stream: 'code-1', type: 'CodeReserved' }, filter)).to.equal(false);
      expect(matchesFilter({ stream: 'any', type: 'Any' }, undefined)).to.equal(true);
    });

    it('knows an empty filter from a real one', function () {
      expect(hasFilter(undefined)).to.equal(false);
      expect(hasFilter({})).to.equal(false);
      expect(hasFilter({ streamPrefixes: [], types: [] })).to.equal(false);
      expect(hasFilter({ types: ['A'] })).to.equal(true);
    });
  });

  describe('re-subscription back-off', function () {
    it('doubles from 100 ms, caps at 30 s and keeps going', function () {
      const noJitter = () => 0;
      expect(resubscribeDelayMs(1, noJitter)).to.equal(100);
      expect(resubscribeDelayMs(2, noJitter)).to.equal(200);
      expect(resubscribeDelayMs(5, noJitter)).to.equal(1_600);
      expect(resubscribeDelayMs(20, noJitter)).to.equal(30_000);
      expect(resubscribeDelayMs(10_000, noJitter)).to.equal(30_000);
    });

    it('jitters down by at most 20 %', function () {
      expect(resubscribeDelayMs(3, () => 1)).to.equal(320);
      expect(resubscribeDelayMs(3, () => 0.5)).to.equal(360);
    });
  });
});
