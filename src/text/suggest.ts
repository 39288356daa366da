/**
 * "Did you mean": the known names closest to a misspelt one, by prefix, substring, then edit distance. Used by the
 * metric resolver and the option-key checks. The query is cut to MAX_QUERY characters first, so a hostile 400 kB
 * name costs microseconds.
 * The bounded formatters of what a message echoes back live here too: `quoted()` (one name), `quotedList()` (names),
 * `formatDims()` (a shape); every message that interpolates caller or file data goes through one of them.
 */

/** Longest prefix of a query that is compared; names in the catalogues are far shorter. */
const MAX_QUERY = 64;

/** Levenshtein distance (insert, delete, substitute: 1 each). */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length]!;
}

/** Shortest query (and name) that a prefix or substring match counts for: shorter ones are in too many names. */
const MIN_PART = 3;

/**
 * How a name relates to a query, nearest first: 0 the name starts with the query (`filter` -> `filterTriples`),
 * 1 one holds the other (`bootstraps` -> `bootstrap`), 2 neither (edit distance alone decides).
 */
function kinship(q: string, name: string): number {
  if (q.length < MIN_PART) return 2;
  if (name.startsWith(q)) return 0;
  return name.includes(q) || (name.length >= MIN_PART && q.includes(name)) ? 1 : 2;
}

/**
 * The `count` names nearest to `query`: names it begins first, then names that hold it or that it holds, each
 * group by edit distance (ties in name order), so a name cut short finds the name meant, not a shorter name a few
 * edits away. `normalize` maps both sides before comparing (e.g. case and separators); the names are returned as
 * given.
 */
export function closest(
  query: string,
  names: readonly string[],
  count = 1,
  normalize: (s: string) => string = (s) => s,
): string[] {
  const q = normalize(query.slice(0, MAX_QUERY));
  return [...new Set(names)]
    .map((n) => {
      const m = normalize(n);
      return { n, k: kinship(q, m), d: editDistance(q, m) };
    })
    .sort((x, y) => x.k - y.k || x.d - y.d || x.n.localeCompare(y.n))
    .slice(0, count)
    .map((x) => x.n);
}

/** A string for an error message: JSON-quoted, cut to 60 characters with the full length named. */
export function quoted(s: string): string {
  return s.length <= 60 ? JSON.stringify(s) : `${JSON.stringify(s.slice(0, 60))}… (${s.length} characters)`;
}

/** A name for an argument label (`file[name]`): as is up to 60 characters, else cut with an ellipsis. */
export function shortName(s: string): string {
  return s.length <= 60 ? s : `${s.slice(0, 60)}…`;
}

/** Names for an error message: each quoted(), the first `max`, then how many there are in all. */
export function quotedList(names: readonly string[], max = 5): string {
  const shown = names
    .slice(0, max)
    .map((n) => quoted(String(n)))
    .join(", ");
  return names.length <= max ? shown : `${shown}, ... (${names.length} in all)`;
}

/**
 * Dimensions for an error message: all of them up to 8, else the first 6 and the count. Non-numbers (a caller's
 * shape may hold anything) are shown bounded: strings quoted(), anything else by its type.
 */
export function formatDims(shape: readonly unknown[]): string {
  const one = (d: unknown) =>
    typeof d === "number" || typeof d === "bigint" || typeof d === "boolean"
      ? String(d)
      : typeof d === "string"
        ? quoted(d)
        : d === null
          ? "null"
          : typeof d;
  const shown = shape.length <= 8 ? shape : shape.slice(0, 6);
  return shape.length <= 8
    ? shown.map(one).join(", ")
    : `${shown.map(one).join(", ")}, ... (${shape.length} dimensions)`;
}
