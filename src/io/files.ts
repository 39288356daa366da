/**
 * Opening input files: one place for the checks every reader needs. Only regular files are read: a FIFO would block
 * the open (or feed data forever), and a device such as /dev/zero never ends, so they are refused before opening,
 * as are directories. Errors are KgrankInputErrors naming the argument (or CLI flag) and the path.
 */
import { openSync, readFileSync, type Stats, statSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";

import { KgrankInputError } from "../checks/errors";
import { quoted } from "../text/suggest";

/**
 * A path for a message: as given up to PATH_MAX (4096) characters, else quoted() (cut, with its length): only a path
 * that cannot be opened is that long, and a caller's 1 MB string must not come back whole.
 */
function shownPath(path: string): string {
  return typeof path === "string" && path.length <= 4096 ? path : quoted(String(path));
}

/** A KgrankInputError for a file that cannot be opened or read. */
export function fileError(argument: string, path: string, e: unknown): KgrankInputError {
  const code = (e as NodeJS.ErrnoException).code;
  const why =
    code === "ENOENT"
      ? "no such file"
      : code === "EACCES"
        ? "permission denied"
        : code === "EISDIR"
          ? "is a directory, not a file"
          : code === "ENAMETOOLONG"
            ? "the name is too long"
            : (e as Error).message.slice(0, 200);
  return new KgrankInputError(argument, `cannot read ${shownPath(path)}: ${why}`);
}

/** Throws unless `path` is a regular file (after following links). */
function checkRegularFile(path: string, argument: string): void {
  let st;
  try {
    st = statSync(path);
  } catch (e) {
    throw fileError(argument, path, e);
  }
  regularFile(st, path, argument);
}

/** checkRegularFile with fs.promises. */
export async function checkRegularFileAsync(path: string, argument: string): Promise<void> {
  let st;
  try {
    st = await stat(path);
  } catch (e) {
    throw fileError(argument, path, e);
  }
  regularFile(st, path, argument);
}

function regularFile(st: Stats, path: string, argument: string): void {
  if (st.isDirectory()) throw fileError(argument, path, Object.assign(new Error("is a directory"), { code: "EISDIR" }));
  if (!st.isFile()) {
    const kind = st.isFIFO()
      ? "a FIFO (named pipe)"
      : st.isCharacterDevice() || st.isBlockDevice()
        ? "a device"
        : st.isSocket()
          ? "a socket"
          : "not a regular file";
    throw new KgrankInputError(
      argument,
      `cannot read ${shownPath(path)}: it is ${kind}; kgrank reads regular files (save the data to a file first)`,
    );
  }
}

/** A read-only descriptor of a regular file. */
export function openRegularFile(path: string, argument: string): number {
  checkRegularFile(path, argument);
  try {
    return openSync(path, "r");
  } catch (e) {
    throw fileError(argument, path, e);
  }
}

/** The whole content of a regular file, read with fs.promises; the signal's reason when it is aborted meanwhile. */
export async function readRegularFileAsync(path: string, argument: string, signal?: AbortSignal): Promise<Buffer> {
  await checkRegularFileAsync(path, argument);
  signal?.throwIfAborted();
  try {
    return await readFile(path, { signal });
  } catch (e) {
    if (signal?.aborted) throw signal.reason;
    throw fileError(argument, path, e);
  }
}

/** The whole content of a regular file. */
export function readRegularFile(path: string, argument: string): Buffer {
  checkRegularFile(path, argument);
  try {
    return readFileSync(path);
  } catch (e) {
    throw fileError(argument, path, e);
  }
}
