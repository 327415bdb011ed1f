/**
 * Whether this process is answering HTTP requests right now: background work that can wait
 * (webhook deliveries) yields to them. Busy while a request is in flight and for `quietMs` after
 * the last one ended, so a stream of back-to-back requests counts as one busy stretch.
 */
export class RequestActivity {
  private inFlight = 0;
  private lastEndedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly quietMs = 20,
    private readonly now: () => number = () => performance.now(),
  ) {}

  begin(): void {
    this.inFlight += 1;
  }

  end(): void {
    this.inFlight -= 1;
    this.lastEndedAt = this.now();
  }

  get busy(): boolean {
    return this.inFlight > 0 || this.now() - this.lastEndedAt < this.quietMs;
  }
}
