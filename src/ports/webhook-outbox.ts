/**
 * The outbox of outgoing deliveries (webhook messages and partner fulfilments): one row per
 * (endpoint, message), fed from the event log with a checkpoint, delivered in log order per
 * endpoint. Times are ISO 8601 strings from the service clock (they compare as strings).
 */
export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'dead';

export interface NewOutboxMessage {
  endpoint_id: string;
  /** The `webhook-id`: UUIDv5 of endpoint id + event id, the same on every attempt. */
  message_id: string;
  event_id: string;
  /** The catalogue type (`reward.granted`, …) or the fulfilment action. */
  event_type: string;
  /** Global log position of the event: the delivery order within an endpoint. */
  position: bigint;
  /** The exact body to send (JSON text). */
  payload: string;
  enqueued_at: string;
}

export interface OutboxMessage extends Omit<NewOutboxMessage, 'position'> {
  position: bigint;
  status: DeliveryStatus;
  attempts: number;
  first_attempt_at: string | null;
  next_attempt_at: string;
  last_status_code: number | null;
  last_error: string | null;
  last_latency_ms: number | null;
  delivered_at: string | null;
}

/** What one attempt changed. */
export interface AttemptRecord {
  /**
   * The message's `next_attempt_at` when the attempt was made: the record applies only while it
   * still is, so a redeliver or a replay made while the attempt was in flight wins (the message
   * is sent again) instead of being overwritten by the attempt's outcome. (One made in the very
   * millisecond the message was due is not told apart: a person redelivers later than that.)
   */
  due_at: string;
  status: Exclude<DeliveryStatus, 'pending'>;
  attempted_at: string;
  next_attempt_at: string;
  status_code: number | null;
  error: string | null;
  latency_ms: number | null;
}

export interface OutboxListQuery {
  status?: DeliveryStatus;
  /** Exclusive log position to page from. */
  after?: bigint | null;
  limit: number;
}

export interface EndpointQueueStats {
  endpoint_id: string;
  /** Messages not yet delivered nor dead. */
  depth: number;
  /** When the first of them in log order (the one the others wait on) was enqueued; null when none. */
  oldest_enqueued_at: string | null;
}

export class FeedCheckpointMovedError extends Error {
  constructor(readonly feed: string) {
    super(`The outbox feed checkpoint ${feed} moved under this process; reload and continue`);
    this.name = 'FeedCheckpointMovedError';
  }
}

export interface WebhookOutbox {
  /**
   * Adds `messages` (ones already there are kept as they are) and moves the feed's checkpoint
   * from `after` to `position`. When the stored checkpoint is not `after`, the checkpoint does not
   * move and FeedCheckpointMovedError is thrown (messages added are harmless: same ids).
   */
  feed(name: string, messages: NewOutboxMessage[], after: bigint | null, position: bigint): Promise<void>;
  feedCheckpoint(name: string): Promise<bigint | null>;
  /** Replay: adds the messages or puts existing ones back to pending (attempts from zero). Returns how many. */
  requeue(messages: NewOutboxMessage[], now: string): Promise<number>;
  /** Endpoints whose oldest open (pending or failed) message is due at `now`. */
  dueEndpoints(now: string): Promise<string[]>;
  /** The endpoint's oldest open message: the one to deliver next (in log order). */
  head(endpointId: string): Promise<OutboxMessage | null>;
  recordAttempt(endpointId: string, messageId: string, attempt: AttemptRecord): Promise<void>;
  get(endpointId: string, messageId: string): Promise<OutboxMessage | null>;
  list(endpointId: string, query: OutboxListQuery): Promise<OutboxMessage[]>;
  /** Puts one message back to pending, due at `now`, attempts from zero; false when unknown. */
  redeliver(endpointId: string, messageId: string, now: string): Promise<boolean>;
  stats(): Promise<EndpointQueueStats[]>;
  /** Since when the endpoint has failed without a success; null when it is healthy. */
  failingSince(endpointId: string): Promise<string | null>;
  setFailingSince(endpointId: string, since: string | null): Promise<void>;
  /**
   * Retention: forgets at most `limit` messages delivered before `before` (open and dead ones are
   * kept); how many it forgot. The feed never brings them back (it moves past them for good); a
   * replay from the log enqueues them again.
   */
  removeDelivered(before: string, limit: number): Promise<number>;
  /**
   * Forgets an endpoint's messages (the endpoint was deleted): those it holds when called; the
   * ones fed meanwhile, for an endpoint created again under the id, stay.
   */
  removeEndpoint(endpointId: string): Promise<void>;
  close(): Promise<void>;
}
