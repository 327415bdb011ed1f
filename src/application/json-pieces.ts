/** A list read a page at a time (rows of a read model, events of a stream). */
export type Pages = AsyncIterable<unknown[]>;

/**
 * A JSON array of the pages' items as text pieces: `[`, the items page by page, `]`. Written in
 * turn (src/http/route.ts, sendJsonPieces), a document of any length is never built whole.
 */
export async function* jsonArray(pages: Pages): AsyncIterable<string> {
  let first = true;
  yield '[';
  for await (const items of pages) {
    if (items.length === 0) continue;
    const text = items.map((item) => JSON.stringify(item)).join(',');
    yield first ? text : `,${text}`;
    first = false;
  }
  yield ']';
}
