/**
 * The parameters of a request's query string: those of its endpoint, and
 * `token`, which access control reads (auth.ts) wherever it is given.
 */

/** A query string's parameters, or what is wrong with them. */
export type QueryParams = { readonly ok: true; readonly params: Record<string, string> } | { readonly ok: false; readonly message: string };

/** The query parameter access control reads (docs/OPERATIONS.md §Access control), taken by every endpoint. */
const TOKEN = 'token';

/**
 * Why a query's `token` cannot be read: given more than once (access
 * control would read the first, and the client may have meant another);
 * undefined when it is given once or not at all.
 */
export function tokenTwice(search: URLSearchParams): string | undefined {
  return search.getAll(TOKEN).length > 1 ? `${TOKEN} is given more than once` : undefined;
}

/**
 * The parameters of a query string when each is one of `takes` (or
 * `token`) and is given once (`token` too). A misspelt one (`form=` for `from=`) is
 * refused, not ignored for the default in its place, and so is one given
 * twice. The message counts the unknown parameters and names the ones
 * taken, repeating nothing the client sent.
 */
export function queryParams(search: URLSearchParams, takes: readonly string[]): QueryParams {
  const twice = tokenTwice(search);
  if (twice !== undefined) return { ok: false, message: twice };
  const params: Record<string, string> = {};
  let unknown = 0;
  for (const [k, v] of search) {
    if (k === TOKEN) continue;
    if (!takes.includes(k)) unknown++;
    else if (Object.hasOwn(params, k)) return { ok: false, message: `${k} is given more than once` };
    else params[k] = v;
  }
  if (unknown > 0)
    return {
      ok: false,
      message: `${unknown} unknown query parameter${unknown === 1 ? '' : 's'}; this takes ${takes.length > 0 ? takes.join(', ') : 'only token'}`,
    };
  return { ok: true, params };
}
