import type { Decision, Evolver } from '../../domain/decider.js';
import type { CodeType } from '../../domain/events/code-events.js';
import type { CommandExecutor } from '../command-executor.js';
import type { CommandContext } from '../event-log.js';
import type { CodeRegistry } from '../shared-resources/code-registry.js';

/** A code a definition needs in the shared namespace, and where the request named it. */
export interface OwnedCode {
  code: string;
  type: CodeType;
  ownerId: string;
  source: string;
}

/**
 * Defines what owns codes in the shared namespace (a promo code, an affiliate): the definition
 * is checked on the current state first, then the codes it newly owns are checked and reserved,
 * each a step of its own on its code's stream (CODE.TAKEN when another owns one), and only then
 * is the definition recorded. A code dropped later stays reserved to its owner, so it never comes to
 * mean someone else.
 */
export async function defineCodeOwner<S, R>(
  commands: CommandExecutor,
  registry: CodeRegistry,
  definition: { stream: string; evolver: Evolver<S>; decide: (existing: S) => Decision<R>; newCodes: (existing: S) => OwnedCode[] },
  context: CommandContext,
): Promise<R> {
  const { state: existing } = await commands.load(definition.stream, definition.evolver);
  definition.decide(existing);
  const codes = definition.newCodes(existing);
  // Every code is checked before any is reserved, so a definition refused for one code reserves
  // none of the others. Definitions racing for the same codes reserve them in one order (sorted),
  // so the first to reserve the least of them gets them all, and the others are refused before
  // reserving any (in the order asked, two could each take one and both be refused). A racer
  // refused part-way keeps the codes it reserved before the one it lost, reserved to its own id
  // (codes are never freed): a later definition under that id takes them.
  for (const { code, type, ownerId, source } of codes) await registry.checkFree(code, type, ownerId, source);
  const inOrder = [...codes].sort((a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0));
  for (const { code, type, ownerId, source } of inOrder) await registry.reserve(code, type, ownerId, context, source);
  const executed = await commands.execute(definition.stream, definition.evolver, definition.decide, context);
  return executed.result;
}
