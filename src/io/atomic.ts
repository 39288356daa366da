/**
 * Atomic file output: write to a temporary name beside the target, fsync, rename. An interrupted or failed write
 * (full disk, SIGINT) leaves no partial file under the target's name; the temporary file is removed on failure.
 */
import fs from "node:fs";
import * as nodePath from "node:path";

import { KgrankInputError } from "../errors";

/** Temporary files being written right now, removed by `removePendingFiles()` (the CLI calls it on SIGINT). */
const pending = new Set<string>();

export function removePendingFiles(): void {
  for (const f of pending) {
    try {
      fs.unlinkSync(f);
    } catch {
      // already gone
    }
  }
  pending.clear();
}

function explain(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === "ENOSPC") return "no space left on the device";
  if (code === "EACCES" || code === "EPERM") return "permission denied";
  if (code === "ENOENT") return "the directory does not exist";
  if (code === "EISDIR") return "is a directory";
  if (code === "EROFS") return "read-only file system";
  return (e as Error).message;
}

/**
 * Writes `data` to `path` atomically. Special files that cannot be renamed onto (e.g. /dev/null, /dev/full, a
 * FIFO) are written directly, since there is nothing partial to leave behind in them.
 */
export function writeFileAtomic(path: string, data: Uint8Array | string, argument = "output"): void {
  const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  if (path.startsWith("/dev/")) {
    writeAll(path, bytes, argument, "w");
    return;
  }
  const dir = nodePath.dirname(path);
  const tmp = nodePath.join(dir, `.${nodePath.basename(path)}.${process.pid}.${Date.now().toString(36)}.tmp`);
  pending.add(tmp);
  try {
    writeAll(tmp, bytes, argument, "wx");
    try {
      fs.renameSync(tmp, path);
    } catch (e) {
      throw new KgrankInputError(argument, `cannot write ${path}: ${explain(e)}`);
    }
  } catch (e) {
    try {
      fs.unlinkSync(tmp);
    } catch {
      // never created
    }
    throw e;
  } finally {
    pending.delete(tmp);
  }
}

function writeAll(path: string, bytes: Uint8Array, argument: string, flags: string): void {
  let fd: number;
  try {
    fd = fs.openSync(path, flags, 0o644);
  } catch (e) {
    throw new KgrankInputError(argument, `cannot write ${path}: ${explain(e)}`);
  }
  try {
    let done = 0;
    while (done < bytes.byteLength) done += fs.writeSync(fd, bytes, done, Math.min(bytes.byteLength - done, 1 << 30));
    if (!path.startsWith("/dev/")) fs.fsyncSync(fd);
  } catch (e) {
    throw new KgrankInputError(argument, `cannot write ${path}: ${explain(e)}`);
  } finally {
    fs.closeSync(fd);
  }
}
