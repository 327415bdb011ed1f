import type { Logger } from '../../ports/logger.js';

export interface Job {
  name: string;
  run(): Promise<number>;
}

/** Runs maintenance jobs one after another every `intervalMs`; a failure is logged, never fatal. */
export class BackgroundJobs {
  private timer: NodeJS.Timeout | null = null;
  private current: Promise<void> = Promise.resolve();

  constructor(
    private readonly jobs: Job[],
    private readonly intervalMs: number,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      this.current = this.current.then(() => this.runOnce());
    }, this.intervalMs);
    this.timer.unref();
  }

  async runOnce(): Promise<void> {
    for (const job of this.jobs) {
      try {
        const count = await job.run();
        if (count > 0) this.logger.info({ job: job.name, count }, 'maintenance job did work');
      } catch (error) {
        this.logger.error({ err: error, job: job.name }, 'maintenance job failed; will retry next interval');
      }
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.current;
  }
}
