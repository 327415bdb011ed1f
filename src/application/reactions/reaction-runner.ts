import type { EventType } from '../../domain/events/index.js';
import { StoreUnavailableError } from '../../ports/event-store.js';
import type { Logger } from '../../ports/logger.js';
import { CheckpointMovedError, type ReadStore } from '../../ports/read-store.js';
import type { CommandContext, EventLog, LoggedEvent, UnreadableEventError } from '../event-log.js';
import { LogFollower } from '../log-follower.js';

/** A process manager: reacts to events by issuing commands. Its handling must be idempotent. */
export interface Reaction {
  name: string;
  eventTypes: readonly EventType[];
  handle(event: LoggedEvent): Promise<void>;
  /**
   * Handles a page's events of this reaction at once (in log order), where that is cheaper
   * than one by one: e.g. one append per stream for many events. Same guarantees as `handle`.
   */
  handleBatch?(events: LoggedEvent[]): Promise<void>;
}

/** Who a reaction's write is from: the process `process:<name>`, caused by `cause`, in its request's correlation. */
export function reactionContext(cause: { id: string; metadata: Record<string, unknown> }, name: string): CommandContext {
  return { correlation_id: String(cause.metadata.correlation_id), causation_id: cause.id, actor: `process:${name}` };
}

export interface ReactionHealth {
  checkpoint: string | null;
  failure: { position: string; eventId: string; error: string } | null;
}

const PAGE_SIZE = 200;
/** How long a store that is out of reach or behind is taken for a passing state (logged as a warning). */
const TRANSIENT_FOR_MS = 60_000;
const CHECKPOINT_PREFIX = 'reaction:';

/**
 * Feeds the log, in order, to the reactions, a page at a time. A failing page is retried (with
 * backoff) until it succeeds — never skipped — and the checkpoint only moves past handled
 * pages. A crash or a failure replays at most one page, which the reactions' idempotency absorbs.
 */
export class ReactionRunner extends LogFollower {
  private checkpoint: bigint | null = null;
  private failing = false;
  /** When the current run of failures began (epoch ms); null while pages go through. */
  private failingSince: number | null = null;
  private lastFailure: { position: string; eventId: string; error: string } | null = null;
  /** The unreadable event last logged (heldAt logs each once). */
  private reportedUnreadable: string | null = null;
  /** The event types any of the reactions handles: the only ones read (the others are passed over). */
  private readonly eventTypes: string[];

  constructor(
    private readonly log: EventLog,
    private readonly readStore: ReadStore,
    private readonly reactions: Reaction[],
    logger: Logger,
  ) {
    super(log.store, logger);
    this.eventTypes = [...new Set(reactions.flatMap((reaction) => reaction.eventTypes))];
  }

  private get checkpointName(): string {
    return `${CHECKPOINT_PREFIX}${this.reactions.map((reaction) => reaction.name).join('+')}`;
  }

  async init(): Promise<void> {
    this.checkpoint = (await this.readStore.checkpoint(this.checkpointName)).position;
  }

  protected override holding(): boolean {
    return this.failing;
  }

  async processPage(): Promise<boolean> {
    const { events, through, more, unreadable } = await this.log.readPage(this.checkpoint, PAGE_SIZE, this.eventTypes);
    if (through === null || through === this.checkpoint) return this.heldAt(unreadable);
    for (const reaction of this.reactions) {
      const mine = events.filter((event) => reaction.eventTypes.includes(event.type));
      if (mine.length === 0) continue;
      try {
        if (reaction.handleBatch) await reaction.handleBatch(mine);
        else for (const event of mine) await reaction.handle(event);
      } catch (error) {
        // Nothing of the page is checkpointed: it is handled again, which idempotency absorbs.
        const first = mine[0]!;
        this.failing = true;
        this.lastFailure = { position: first.position.toString(), eventId: first.id, error: error instanceof Error ? error.message : String(error) };
        // A store out of reach or behind (an index still catching up) usually passes by itself: a
        // warning for its first minute, an error once it lasts (a full disk, a failed sync). Anything else is an error at once.
        this.failingSince ??= Date.now();
        const passing = error instanceof StoreUnavailableError && Date.now() - this.failingSince < TRANSIENT_FOR_MS;
        this.logger[passing ? 'warn' : 'error'](
          { err: error, runner: this.checkpointName, reaction: reaction.name, fromEventId: first.id },
          'reaction failed; it will be retried from this page',
        );
        return false;
      }
    }
    this.failing = false;
    this.failingSince = null;
    this.lastFailure = null;
    try {
      await this.readStore.commitBatches([{ projector: this.checkpointName, version: 1, changes: [], position: through, after: this.checkpoint }]);
      this.checkpoint = through;
    } catch (error) {
      // Another process moved it: its reactions are idempotent with ours; continue from there.
      if (!(error instanceof CheckpointMovedError)) throw error;
      await this.init();
    }
    return unreadable ? this.heldAt(unreadable) : more;
  }

  /** Held at an event its schema refuses (the events before it handled), said once per event: always false (read no further now). */
  private heldAt(unreadable: UnreadableEventError | null): false {
    if (unreadable === null) return false;
    if (this.reportedUnreadable !== unreadable.event.id) {
      this.reportedUnreadable = unreadable.event.id;
      this.logger.error({ err: unreadable, runner: this.checkpointName, eventId: unreadable.event.id }, 'reactions held at an event they cannot read');
    }
    this.failing = true;
    this.lastFailure = { position: unreadable.event.position.toString(), eventId: unreadable.event.id, error: unreadable.message };
    return false;
  }

  /** Where the reactions stand, for /readyz: held at a failing event, or fine. */
  health(): ReactionHealth {
    return { checkpoint: this.checkpoint?.toString() ?? null, failure: this.failing ? this.lastFailure : null };
  }
}
