/**
 * A rule of the domain said no. `code` is the stable error code of SPEC §9
 * (`NOT_FOUND.*` codes become 404, every other code 422).
 */
export class DomainError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly source: string | null = null,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}
