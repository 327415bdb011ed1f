export interface ProjectionStatus {
  name: string;
  version: number;
  /** Version the stored read model was built with; differs from `version` → replay needed. */
  storedVersion: number;
  checkpoint: bigint | null;
  failure: { position: string; eventId: string; error: string } | null;
}

/** Where the read models stand: for read-your-writes, readiness and metrics. */
export interface ReadConsistency {
  /**
   * true once every read model (or only `projection`, when named) has passed `position`;
   * false if `timeoutMs` ran out first.
   */
  waitFor(position: bigint, timeoutMs: number, projection?: string): Promise<boolean>;
  projections(): Promise<ProjectionStatus[]>;
}
