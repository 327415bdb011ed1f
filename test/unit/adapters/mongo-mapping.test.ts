import { expect } from 'chai';
import { MongoBulkWriteError, MongoNetworkError, MongoServerError, MongoServerSelectionError } from 'mongodb';
import { takeOrRenew } from '../../../src/adapters/mongodb/mongo-lease.js';
import {
  checkpointWrite,
  classifyWriteErrors,
  collectionName,
  DUPLICATE_KEY,
  fieldPath,
  indexKeys,
  legacyIndexName,
  findFilter,
  findSort,
  firstMovedProjector,
  formatPosition,
  fromStoredDocument,
  guardedWrite,
  isDuplicateKey,
  isTransientMongoError,
  parsePosition,
  toJsonDocument,
  whereFilter,
} from '../../../src/adapters/mongodb/mongo-mapping.js';

function bulkError(codes: number[]): MongoBulkWriteError {
  // The driver's WriteError exposes `code` and `index`; it is not exported as a value.
  const writeErrors = codes.map((code, index) => ({ code, index, errmsg: `E${code}` }));
  const error = Object.create(MongoBulkWriteError.prototype) as MongoBulkWriteError;
  Object.assign(error, { writeErrors, message: 'bulk write failed' });
  return error;
}

function serverError(code: number, labels: string[] = []): MongoServerError {
  const error = new MongoServerError({ message: `server error ${code}`, code, errorLabels: labels });
  return error;
}

describe('MongoDB read store mapping', function () {
  describe('positions ↔ stored checkpoints', function () {
    it('stores positions as 20-digit decimals that sort like the numbers', function () {
      expect(formatPosition(0n)).to.equal('00000000000000000000');
      expect(formatPosition(42n)).to.equal('00000000000000000042');
      const top = 2n ** 64n - 1n;
      expect(formatPosition(top)).to.equal('18446744073709551615');
      const samples = [0n, 9n, 10n, 99n, 2n ** 53n + 1n, 2n ** 63n, top];
      const asStrings = samples.map(formatPosition);
      expect([...asStrings].sort()).to.deep.equal(asStrings);
    });

    it('round-trips every position exactly, including beyond 2^53 and 2^63', function () {
      for (const position of [0n, 1n, 2n ** 53n + 1n, 2n ** 63n + 7n, 2n ** 64n - 1n]) {
        expect(parsePosition(formatPosition(position))).to.equal(position);
      }
      expect(parsePosition(null)).to.equal(null);
      expect(parsePosition(undefined)).to.equal(null);
    });

    it('refuses positions outside 64 bits and malformed stored values', function () {
      expect(() => formatPosition(-1n)).to.throw(RangeError);
      expect(() => formatPosition(2n ** 64n)).to.throw(RangeError);
      expect(() => parsePosition('12a')).to.throw();
    });
  });

  describe('names', function () {
    it('maps read-model collections to rm_<name> and fields into the wrapper', function () {
      expect(collectionName('users')).to.equal('rm_users');
      expect(collectionName('claim_slots')).to.equal('rm_claim_slots');
      expect(fieldPath('expires_at')).to.equal('doc.expires_at');
    });

    it('makes each declared index end with _id, its last field once ascending and once descending, so a sorted find of either direction is served by an index', function () {
      expect(indexKeys(['app_user_id', 'expired', 'kind', 'expires_at'])).to.deep.equal([
        { name: 'doc_app_user_id_expired_kind_expires_at_asc_id', key: { 'doc.app_user_id': 1, 'doc.expired': 1, 'doc.kind': 1, 'doc.expires_at': 1, _id: 1 } },
        {
          name: 'doc_app_user_id_expired_kind_expires_at_desc_id',
          key: { 'doc.app_user_id': 1, 'doc.expired': 1, 'doc.kind': 1, 'doc.expires_at': -1, _id: 1 },
        },
      ]);
      // The key order is the index order (a sort must match it).
      expect(Object.keys(indexKeys(['a', 'b'])[1]!.key)).to.deep.equal(['doc.a', 'doc.b', '_id']);
      // What findSort asks for: the field, then _id ascending, in either direction.
      const [ascending, descending] = indexKeys(['seq']);
      expect(findSort({ orderBy: { field: 'seq', direction: 'asc' } })).to.deep.equal(Object.entries(ascending!.key));
      expect(findSort({ orderBy: { field: 'seq', direction: 'desc' } })).to.deep.equal(Object.entries(descending!.key));
      expect(legacyIndexName(['customer', 'seq'])).to.equal('doc_customer_seq_1');
    });

    it('refuses names MongoDB or queries could misread', function () {
      expect(() => collectionName('a.$b')).to.throw();
      expect(() => collectionName('')).to.throw();
      expect(() => fieldPath('a.b')).to.throw();
      expect(() => fieldPath('$where')).to.throw();
    });
  });

  describe('documents', function () {
    it('keeps what JSON keeps: dates as strings, no undefined', function () {
      const doc = toJsonDocument({ at: new Date('2026-01-02T03:04:05.678Z'), gone: undefined, list: [1, null], nested: { a: true } });
      expect(doc).to.deep.equal({ at: '2026-01-02T03:04:05.678Z', list: [1, null], nested: { a: true } });
    });

    it('rejects documents JSON cannot hold, before anything is written', function () {
      const circular: Record<string, unknown> = {};
      circular.self = circular;
      expect(() => toJsonDocument(circular)).to.throw(TypeError);
      expect(() => toJsonDocument({ big: 1n })).to.throw(TypeError);
    });

    /** Whether any key, at any depth, holds U+0000 (BSON refuses such a document). */
    const nulInKeys = (value: unknown): boolean =>
      Array.isArray(value)
        ? value.some(nulInKeys)
        : value !== null && typeof value === 'object' && Object.entries(value).some(([key, item]) => key.includes('\u0000') || nulInKeys(item));

    it('stores keys holding U+0000 (an app metadata key) escaped, at any depth, and reads them back exactly', function () {
      const sent = JSON.parse(
        '{"metadata":{"a\\u0000":1,"\\ue000":2,"\\ue0000":3,"\\u0000\\ue000x":[{"n\\u0000":null}],"__proto__":{"k":"v\\u0000"}},"name":"\\u0000 in a value"}',
      );
      const stored = toJsonDocument(sent);
      expect(nulInKeys(stored)).to.equal(false);
      // Values are BSON's business no more than JSON's: kept as they are.
      expect(stored.name).to.equal('\u0000 in a value');
      expect(fromStoredDocument(stored)).to.deep.equal(sent);
      expect(Object.keys(fromStoredDocument<Record<string, Record<string, unknown>>>(stored).metadata!)).to.deep.equal(Object.keys(sent.metadata));
    });

    it('stores every other document as it is, unmarked (U+0000 in a value needs no escape); a key U+E000 alone is escaped and read back', function () {
      const plain = { name: 'x\u0000y', nested: { ok: true } };
      expect(toJsonDocument(plain)).to.deep.equal(plain);
      expect(fromStoredDocument(toJsonDocument(plain))).to.deep.equal(plain);
      const privateUse = { '\ue000': 1 };
      expect(fromStoredDocument(toJsonDocument(privateUse))).to.deep.equal(privateUse);
    });
  });

  describe('queries', function () {
    it('matches equality on top-level fields, null included', function () {
      expect(whereFilter(undefined)).to.deep.equal({});
      expect(whereFilter({ team: 'red' })).to.deep.equal({ 'doc.team': 'red' });
      expect(whereFilter({ team: 'red', active: true, manager: null })).to.deep.equal({
        $and: [{ 'doc.team': 'red' }, { 'doc.active': true }, { 'doc.manager': null }],
      });
    });

    it('adds the range and the id cursor as separate conditions (the same field may appear twice)', function () {
      expect(findFilter({ where: { expires_at: null }, atMost: { field: 'expires_at', value: '2026' }, afterId: 'k' })).to.deep.equal({
        $and: [{ 'doc.expires_at': null }, { 'doc.expires_at': { $lte: '2026' } }, { _id: { $gt: 'k' } }],
      });
      expect(findFilter({})).to.deep.equal({});
      expect(
        findFilter({ where: { dimension: 'code' }, atMost: { field: 'day', value: '2026-02-01' }, atLeast: { field: 'day', value: '2026-01-01' } }),
      ).to.deep.equal({
        $and: [{ 'doc.dimension': 'code' }, { 'doc.day': { $lte: '2026-02-01' } }, { 'doc.day': { $gte: '2026-01-01' } }],
      });
    });

    it('orders by the field then by id, or by id alone', function () {
      expect(findSort({})).to.deep.equal([['_id', 1]]);
      expect(findSort({ orderBy: { field: 'created_at', direction: 'desc' } })).to.deep.equal([
        ['doc.created_at', -1],
        ['_id', 1],
      ]);
    });
  });

  describe('guarded writes', function () {
    it('a put replaces only a document older than the batch, inserting when absent', function () {
      expect(guardedWrite({ op: 'put', collection: 'users', id: 'u1', doc: { n: 1 } }, 1234n)).to.deep.equal({
        replaceOne: {
          filter: { _id: 'u1', position: { $lt: '00000000000000001234' } },
          replacement: { position: '00000000000000001234', doc: { n: 1 } },
          upsert: true,
        },
      });
    });

    it('a delete removes only a document older than the batch', function () {
      expect(guardedWrite({ op: 'delete', collection: 'users', id: 'u1' }, 7n)).to.deep.equal({
        deleteOne: { filter: { _id: 'u1', position: { $lt: '00000000000000000007' } } },
      });
    });

    it('the checkpoint moves only from the position and version the batch continues from, and not while a replay switches the read model in (compare-and-set)', function () {
      expect(checkpointWrite('users', 42n, 99n, 2)).to.deep.equal({
        filter: { _id: 'users', position: '00000000000000000042', version: 2, switching: { $ne: true } },
        update: { $set: { position: '00000000000000000099', version: 2 } },
      });
      expect(checkpointWrite('users', null, 7n, 1).filter).to.deep.equal({ _id: 'users', position: null, switching: { $ne: true } });
    });

    it('finds the first batch that does not continue from its stored checkpoint (position and version), following chains', function () {
      const stored = new Map([['users', { position: 10n as bigint | null, version: 1 }]]);
      const batch = (projector: string, after: bigint | null, position: bigint, version = 1) => ({ projector, after, position, version });
      expect(firstMovedProjector([batch('users', 10n, 20n)], stored)).to.equal(null);
      expect(firstMovedProjector([batch('codes', null, 20n)], stored)).to.equal(null);
      expect(firstMovedProjector([batch('users', 10n, 20n), batch('users', 20n, 30n)], stored)).to.equal(null);
      expect(firstMovedProjector([batch('users', 5n, 20n)], stored)).to.equal('users');
      expect(firstMovedProjector([batch('users', null, 20n)], stored)).to.equal('users');
      expect(firstMovedProjector([batch('codes', 3n, 20n)], stored)).to.equal('codes');
      // A replay switched in a read model of version 2 at the same position.
      expect(firstMovedProjector([batch('users', 10n, 20n, 2)], stored)).to.equal('users');
      // A replay is switching it in (MongoDB): no commit lands, whatever it continues from.
      const switching = new Map([['users', { position: 10n as bigint | null, version: 1, switching: true as const }]]);
      expect(firstMovedProjector([batch('users', 10n, 20n)], switching)).to.equal('users');
    });

    it('maps duplicate keys on guarded upserts to "already applied"', function () {
      expect(classifyWriteErrors(bulkError([DUPLICATE_KEY, DUPLICATE_KEY]))).to.deep.equal({ alreadyApplied: [0, 1], onlyAlreadyApplied: true });
      expect(classifyWriteErrors(serverError(DUPLICATE_KEY))).to.deep.equal({ alreadyApplied: [], onlyAlreadyApplied: true });
      expect(isDuplicateKey(serverError(DUPLICATE_KEY))).to.equal(true);
    });

    it('keeps any other write error a failure', function () {
      expect(classifyWriteErrors(bulkError([DUPLICATE_KEY, 2]))).to.deep.equal({ alreadyApplied: [0], onlyAlreadyApplied: false });
      expect(classifyWriteErrors(serverError(2))).to.equal(null);
      expect(classifyWriteErrors(new Error('boom'))).to.equal(null);
      expect(isDuplicateKey(serverError(121))).to.equal(false);
    });
  });

  describe('availability', function () {
    it('treats network, selection and primary-change failures as unavailable', function () {
      expect(isTransientMongoError(new MongoNetworkError('socket closed'))).to.equal(true);
      expect(isTransientMongoError(Object.create(MongoServerSelectionError.prototype))).to.equal(true);
      expect(isTransientMongoError(serverError(10107))).to.equal(true);
      expect(isTransientMongoError(serverError(189))).to.equal(true);
      expect(isTransientMongoError(serverError(112, ['TransientTransactionError']))).to.equal(true);
    });

    it('does not hide real errors', function () {
      expect(isTransientMongoError(serverError(DUPLICATE_KEY))).to.equal(false);
      expect(isTransientMongoError(serverError(2))).to.equal(false);
      expect(isTransientMongoError(new TypeError('bug'))).to.equal(false);
    });
  });

  describe('projector lease update', function () {
    it('takes the lease only when free, expired or already ours, on the server clock', function () {
      const [decide, apply, cleanup] = takeOrRenew('host-a:1', 15_000);
      expect(decide).to.deep.equal({
        $set: {
          _may_take: { $or: [{ $eq: [{ $ifNull: ['$owner', null] }, null] }, { $eq: ['$owner', 'host-a:1'] }, { $lt: ['$expires_at', '$$NOW'] }] },
        },
      });
      expect(apply!.$set.owner).to.deep.equal({ $cond: ['$_may_take', 'host-a:1', '$owner'] });
      expect(apply!.$set.expires_at).to.deep.equal({ $cond: ['$_may_take', { $add: ['$$NOW', 15_000] }, '$expires_at'] });
      expect(cleanup).to.deep.equal({ $unset: '_may_take' });
    });
  });
});
