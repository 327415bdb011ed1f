import type { EventType } from '../../domain/events/index.js';
import type { Logger } from '../../ports/logger.js';
import { CheckpointMovedError, type ReadStore } from '../../ports/read-store.js';
import type { EventLog, LoggedEvent } from '../event-log.js';
import { LogFollower } from '../log-follower.js';

/** A process manager: reacts to events by issuing commands. Its handling must be idempotent. */
export interface Reaction {
  name: string;
  eventTypes: readonly EventType[];
  handle(event: LoggedEvent): Promise<void>;
}

export interface ReactionHealth {
  checkpoint: string | null;
  failure: { position: string; eventId: string; error: string } | null;
}

const PAGE_SIZE = 200;
const CHECKPOINT_PREFIX = 'reaction:';

/**
 * Feeds the log, in order, to the reactions. A failing event is retried (with backoff) until
 * it succeeds — never skipped — and the checkpoint only moves past handled events. A crash
 * replays at most one page, which the reactions' idempotency absorbs.
 */
export class ReactionRunner extends LogFollower {
  private checkpoint: bigint | null = null;
  private failing = false;
  private lastFailure: { position: string; eventId: string; error: string } | null = null;

  constructor(
    private readonly log: EventLog,
    private readonly readStore: ReadStore,
    private readonly reactions: Reaction[],
    logger: Logger,
  ) {
    super(log.store, logger, PAGE_SIZE);
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

  async processPage(): Promise<number> {
    const events = await this.log.readAll(this.checkpoint, PAGE_SIZE);
    let handledUpTo: bigint | null = null;
    for (const event of events) {
      try {
        for (const reaction of this.reactions) {
          if (reaction.eventTypes.includes(event.type)) await reaction.handle(event);
        }
      } catch (error) {
        this.failing = true;
        this.lastFailure = { position: event.position.toString(), eventId: event.id, error: error instanceof Error ? error.message : String(error) };
        this.logger.error({ err: error, runner: this.checkpointName, eventId: event.id, type: event.type }, 'reaction failed; it will be retried from this event');
        break;
      }
      handledUpTo = event.position;
    }
    if (handledUpTo !== null && this.failing && this.lastFailure !== null && handledUpTo >= BigInt(this.lastFailure.position)) {
      this.failing = false;
      this.lastFailure = null;
    }
    if (handledUpTo !== null) {
      try {
        await this.readStore.commitBatches([{ projector: this.checkpointName, version: 1, changes: [], position: handledUpTo, after: this.checkpoint }]);
        this.checkpoint = handledUpTo;
      } catch (error) {
        // Another process moved it: its reactions are idempotent with ours; continue from there.
        if (!(error instanceof CheckpointMovedError)) throw error;
        await this.init();
      }
    }
    return this.failing ? 0 : events.length;
  }

  /** Where the reactions stand, for /readyz: held at a failing event, or fine. */
  health(): ReactionHealth {
    return { checkpoint: this.checkpoint?.toString() ?? null, failure: this.failing ? this.lastFailure : null };
  }
}
