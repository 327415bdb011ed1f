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
    try {
      for (const event of events) {
        for (const reaction of this.reactions) {
          if (reaction.eventTypes.includes(event.type)) await reaction.handle(event);
        }
        handledUpTo = event.position;
      }
      this.failing = false;
    } catch (error) {
      this.failing = true;
      this.logger.error({ err: error, runner: this.checkpointName }, 'reaction failed; it will be retried from this event');
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

  position(): bigint | null {
    return this.checkpoint;
  }
}
