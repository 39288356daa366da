/**
 * The lines of a small text file (a byte-order mark dropped, CRLF or LF, blank lines skipped), with their 1-based
 * numbers for error messages. The triple reader's hot loop (./tsv.ts, twin of the C++ parser) keeps its own.
 */
export function forEachLine(text: string, visit: (line: string, lineNo: number) => void): void {
  let start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let lineNo = 0;
  while (start <= text.length) {
    let end = text.indexOf("\n", start);
    if (end < 0) end = text.length;
    lineNo++;
    let line = text.slice(start, end);
    if (line.endsWith("\r")) line = line.slice(0, -1);
    start = end + 1;
    if (line.trim() !== "") visit(line, lineNo);
  }
}
