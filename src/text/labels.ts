/**
 * Labels (relation and entity names from the user's files) as the tables, plots and the report show them. A label
 * is data, not markup: its direction must not reach the numbers printed beside it, and what XML cannot hold must
 * not end up in an SVG or the report. Labels with neither kind of character pass through byte-identical.
 */

/**
 * The Unicode bidi controls: embeddings and overrides (U+202A-U+202E), isolates (U+2066-U+2069), the LRM / RLM
 * marks (U+200E, U+200F) and the Arabic letter mark (U+061C). An unclosed U+202E turns "label (12)" into "label (21)".
 */
const BIDI_CONTROL = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/;

/**
 * Characters XML 1.0 forbids (C0 controls but tab, newline and carriage return; U+FFFE, U+FFFF; lone surrogates).
 * One of them makes a whole SVG unreadable to a browser, so the label shows it as a visible escape instead.
 * Escaping here, at output, rather than refusing such labels when the TSV is read keeps every other command
 * (evaluate, merge, the queue) working on the data as it is; only the picture of the label changes.
 */
const XML_FORBIDDEN =
  // eslint-disable-next-line no-control-regex -- finding control characters is this pattern's purpose
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

const codeEscape = (c: string) => {
  const code = c.charCodeAt(0);
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).toUpperCase()}`;
};

/**
 * A label for plain text and markdown: wrapped in U+2068 FIRST STRONG ISOLATE ... U+2069 POP DIRECTIONAL ISOLATE
 * when it holds a bidi control, so its direction stays inside; any other label unchanged. A terminal that ignores
 * isolates still shows the label's own characters, only its direction is then its own.
 */
export function isolateLabel(label: string): string {
  return BIDI_CONTROL.test(label) ? `\u2068${label}\u2069` : label;
}

/**
 * A label for SVG and HTML text: characters XML forbids as visible escapes (NUL as `\x00`), then isolated as
 * isolateLabel does (SVG text honours U+2068 ... U+2069 like any other text).
 */
export function markupLabel(label: string): string {
  return isolateLabel(label.replace(XML_FORBIDDEN, codeEscape));
}
