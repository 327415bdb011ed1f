/**
 * An error that is an answer, not a fault (a decision, a refused request): no stack trace is
 * captured, as nothing reads it and capturing one costs more than the decision, or than the
 * rest of a 401.
 */
export class StacklessError extends Error {
  constructor(message: string) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
  }
}

/**
 * A rule of the domain said no. `code` is the stable error code of SPEC §9
 * (`NOT_FOUND.*` codes become 404, every other code 422).
 */
export class DomainError extends StacklessError {
  constructor(
    readonly code: string,
    message: string,
    readonly source: string | null = null,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

/** NOT_FOUND.USER for the path's `{app_user_id}`: the one answer for a user that does not exist (404 over HTTP). */
export function userNotFound(): DomainError {
  return new DomainError('NOT_FOUND.USER', 'User not found', 'path:/app_user_id');
}

/** NOT_FOUND.CODE for the path's `{code}`: no referral, promo or affiliate code matches it (404 over HTTP). */
export function codeNotFound(): DomainError {
  return new DomainError('NOT_FOUND.CODE', 'No referral, promo or affiliate code matches', 'path:/code');
}
