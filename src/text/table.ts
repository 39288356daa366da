/**
 * Plain tables for people: numbers formatted one way, aligned text or markdown. Used by RankResults (toTable,
 * toMarkdown) and by every CLI command, so a result prints the same from the library and from `kgrank`.
 */
import { isolateLabel } from "./labels";

/** A number as the tables print it: integers plainly, others with `digits` decimals; NaN as "NaN"; none as "". */
export function fmt(v: number | undefined | null, digits = 4): string {
  if (v === undefined || v === null) return "";
  if (Number.isNaN(v)) return "NaN";
  if (!Number.isFinite(v)) return v > 0 ? "inf" : "-inf";
  if (Number.isInteger(v)) return String(v);
  // Small values (variances, expectations over 10^4+ candidates) keep their significant digits.
  if (Math.abs(v) < 10 ** -(digits - 1)) return v.toExponential(3);
  return v.toFixed(digits);
}

/** Columns whose header starts with one of these are left-aligned; the rest (numbers) right-aligned. */
function textTable(header: string[], rows: string[][], leftColumns = 1): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i < leftColumns ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

function markdownTable(header: string[], rows: string[][], leftColumns = 1): string {
  const esc = (c: string) => c.replace(/\|/g, "\\|");
  return [
    `| ${header.map(esc).join(" | ")} |`,
    `| ${header.map((_, i) => (i < leftColumns ? "---" : "---:")).join(" | ")} |`,
    ...rows.map((r) => `| ${r.map(esc).join(" | ")} |`),
  ].join("\n");
}

/**
 * An aligned text or markdown table. A cell holding a bidi control (a relation label with U+202E) is wrapped in
 * U+2068 ... U+2069 so that its direction cannot reverse the numbers beside it; other cells print unchanged. The
 * two isolating marks count in the column width, so such a row shows two columns narrower in a terminal.
 */
export function table(format: "table" | "markdown", header: string[], rows: string[][], leftColumns = 1): string {
  const safe = rows.map((r) => r.map(isolateLabel));
  return format === "markdown" ? markdownTable(header, safe, leftColumns) : textTable(header, safe, leftColumns);
}
