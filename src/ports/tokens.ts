/** tsyringe injection tokens of the ports and shared services (ports are interfaces). */
export const TOKENS = {
  Config: Symbol('Config'),
  EventStore: Symbol('EventStore'),
  ReadStore: Symbol('ReadStore'),
  RateLimitStore: Symbol('RateLimitStore'),
  Clock: Symbol('Clock'),
  Ids: Symbol('Ids'),
  Logger: Symbol('Logger'),
  Projections: Symbol('Projections'),
  ReadConsistency: Symbol('ReadConsistency'),
  Metrics: Symbol('Metrics'),
  /** () => ReactionHealth | null: the process managers' state, when this process runs them. */
  ReactionHealth: Symbol('ReactionHealth'),
  /** The outbox of outgoing deliveries (webhooks, partner fulfilment). */
  WebhookOutbox: Symbol('WebhookOutbox'),
  /** Per-user data keys of personal fields (SPEC §13). */
  KeyStore: Symbol('KeyStore'),
  /** () => Promise<void>: drops the store's copies of overwritten data after an erasure. */
  PurgeOverwritten: Symbol('PurgeOverwritten'),
  /** () => Promise<report>: disabled endpoints and partner refusals, for /readyz. */
  WebhookHealth: Symbol('WebhookHealth'),
} as const;
