import { injectable } from 'tsyringe';
import { StacklessError } from '../../domain/domain-error.js';

/** An export that an erasure of its user overtook: it stops, cut short, rather than go on half-erased. */
export class ExportOvertakenByErasure extends StacklessError {}

/** One export under way: `check` before each piece it writes, `end` when it is done (or abandoned). */
export interface ExportTicket {
  check(): void;
  end(): void;
}

/**
 * Keeps, within this process, a user's export (GET /admin/users/{id}/export) from showing the
 * user both before and after its erasure: the document is written a page at a time, and an
 * erasure destroys keys while pages are still to be read. An export asked for while the user is
 * being erased waits for the erasure, then shows it. An erasure that starts while exports of the
 * user are under way overtakes them: each stops before its next piece (the client sees the
 * document cut short, never whole), since what it has not read yet would be erased. A piece
 * read before the erasure began was read before any key was destroyed.
 * One instance per service (src/composition-root.ts).
 */
@injectable()
export class ExportErasureGate {
  private readonly exports = new Map<string, Set<{ overtaken: boolean }>>();
  private readonly erasures = new Map<string, Promise<unknown>>();

  async startExport(appUserId: string): Promise<ExportTicket> {
    for (let erasure = this.erasures.get(appUserId); erasure; erasure = this.erasures.get(appUserId)) await erasure;
    const state = { overtaken: false };
    const underWay = this.exports.get(appUserId) ?? new Set();
    underWay.add(state);
    this.exports.set(appUserId, underWay);
    return {
      check: () => {
        if (state.overtaken) throw new ExportOvertakenByErasure(`An erasure of ${appUserId} overtook its export`);
      },
      end: () => {
        underWay.delete(state);
        if (underWay.size === 0 && this.exports.get(appUserId) === underWay) this.exports.delete(appUserId);
      },
    };
  }

  /** Runs the erasure: the user's exports under way are overtaken, new ones wait until it is done. */
  async erasing<T>(appUserId: string, work: () => Promise<T>): Promise<T> {
    for (const state of this.exports.get(appUserId) ?? []) state.overtaken = true;
    const erasure = work();
    // Exports wait for every erasure of the user under way, not only the last one to start.
    const all = Promise.allSettled([this.erasures.get(appUserId), erasure]);
    this.erasures.set(appUserId, all);
    try {
      return await erasure;
    } finally {
      await all;
      if (this.erasures.get(appUserId) === all) this.erasures.delete(appUserId);
    }
  }
}
