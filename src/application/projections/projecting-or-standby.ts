import type { ProjectionStatus, ReadConsistency } from '../../ports/read-consistency.js';
import type { CheckpointPoller } from './checkpoint-poller.js';
import type { ProjectionRunner } from './projection-runner.js';

/**
 * Where the read models stand for a process that projects when it may (embedded): its own runner
 * while that runs (it tells progress the moment it commits), the read store's checkpoints while
 * another process projects and this one stands by. A wait begun on either ends by either's rule.
 */
export class ProjectingOrStandby implements ReadConsistency {
  constructor(
    private readonly runner: ProjectionRunner,
    private readonly poller: CheckpointPoller,
  ) {}

  private get current(): ReadConsistency {
    return this.runner.following ? this.runner : this.poller;
  }

  waitFor(position: bigint, timeoutMs: number, projection?: string): Promise<boolean> {
    return this.current.waitFor(position, timeoutMs, projection);
  }

  projections(): Promise<ProjectionStatus[]> {
    return this.current.projections();
  }
}
