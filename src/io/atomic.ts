/**
 * Atomic file output: write to a temporary name beside the target, fsync, rename. An interrupted or failed write
 * (full disk, SIGINT) leaves no partial file under the target's name; the temporary file is removed on failure.
 */
import fs from "node:fs";
import * as nodePath from "node:path";

import { KgrankInputError } from "../checks/errors";

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

/** The file a write to `path` lands in: `path`, or the final target of the symbolic link(s) it names. */
function finalTarget(path: string): string {
  let p = path;
  for (let hops = 0; hops < 40; hops++) {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(p);
    } catch {
      return p; // does not exist (yet): written as a new file
    }
    if (!st.isSymbolicLink()) return p;
    p = nodePath.resolve(nodePath.dirname(p), fs.readlinkSync(p));
  }
  return p; // a link loop: the open below reports it
}

/** A temporary name beside `target`, within NAME_MAX (255 bytes) however long the target's name is. */
function temporaryName(target: string): string {
  const base = nodePath.basename(target);
  const suffix = `.${process.pid}.${Date.now().toString(36)}${Math.floor(Math.random() * 1296).toString(36)}.tmp`;
  const name = Buffer.byteLength(base) + suffix.length + 1 <= 255 ? `.${base}${suffix}` : `.kgrank${suffix}`;
  return nodePath.join(nodePath.dirname(target), name);
}

/**
 * What is at `target` (the file `path` names): "new" (nothing yet), "special" (not a regular file or a directory),
 * or the permission bits of a regular file this user may write. A read-only file is refused, naming `argument`.
 */
function existing(target: string, path: string, argument: string): "new" | "special" | number {
  let st: fs.Stats;
  try {
    st = fs.statSync(target);
  } catch {
    return "new";
  }
  if (!st.isFile()) return st.isDirectory() ? "new" : "special";
  const mode = st.mode & 0o7777;
  let writable = (mode & 0o222) !== 0;
  try {
    fs.accessSync(target, fs.constants.W_OK);
  } catch {
    writable = false;
  }
  if (!writable) {
    throw new KgrankInputError(
      argument,
      `cannot write ${path}: it is read-only (mode ${mode.toString(8).padStart(4, "0")}); make it writable or choose another file`,
    );
  }
  return mode;
}

/** `write(tmp)` into a temporary file beside `target`, then renamed onto it; removed on any failure. */
function viaTemporary(target: string, path: string, argument: string, write: (tmp: string) => void): void {
  const tmp = temporaryName(target);
  pending.add(tmp);
  try {
    write(tmp);
    try {
      fs.renameSync(tmp, target);
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

/**
 * Writes `data` to `path` atomically, as a careful writer: through a symbolic link to its target (the link stays),
 * keeping an existing file's permission bits, refusing a read-only file (no write bit, or not writable by this
 * user), with a temporary name that fits NAME_MAX. Special files that cannot be renamed onto (e.g. /dev/null,
 * /dev/full, a FIFO) are written directly, since there is nothing partial to leave behind in them.
 */
export function writeFileAtomic(path: string, data: Uint8Array | string, argument = "output"): void {
  const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  if (typeof path !== "string" || path.trim() === "") throw new KgrankInputError(argument, "needs a file name");
  const target = finalTarget(path);
  const was = existing(target, path, argument);
  if (was === "special") {
    writeAll(target, bytes, argument, "w", 0o666);
    return;
  }
  viaTemporary(target, path, argument, (tmp) =>
    writeAll(tmp, bytes, argument, "wx", typeof was === "number" ? was : 0o666),
  );
}

/**
 * As writeFileAtomic, for a file another writer makes (the native core): `write(tmp)` creates the temporary file
 * beside the target, which is flushed to disk and renamed onto it (an existing file's permission bits kept); a
 * special file or a read-only one is refused.
 */
export function writeAtomicWith(path: string, argument: string, write: (tmp: string) => void): void {
  if (typeof path !== "string" || path.trim() === "") throw new KgrankInputError(argument, "needs a file name");
  const target = finalTarget(path);
  const was = existing(target, path, argument);
  if (was === "special") {
    throw new KgrankInputError(argument, `cannot write ${path}: it is not a regular file; choose a file name`);
  }
  viaTemporary(target, path, argument, (tmp) => {
    write(tmp);
    const fd = fs.openSync(tmp, "r+");
    try {
      fs.fsyncSync(fd);
      if (typeof was === "number") fs.fchmodSync(fd, was);
    } finally {
      fs.closeSync(fd);
    }
  });
}

/**
 * Writes every byte to `path` opened with `flags`. A new regular file gets `mode` exactly (an existing file's bits
 * when it replaces one; else 0666 less the umask, as any tool would create it).
 */
function writeAll(path: string, bytes: Uint8Array, argument: string, flags: string, mode: number): void {
  let fd: number;
  try {
    fd = fs.openSync(path, flags, mode === 0o666 ? 0o666 : 0o600);
  } catch (e) {
    throw new KgrankInputError(argument, `cannot write ${path}: ${explain(e)}`);
  }
  try {
    const regular = fs.fstatSync(fd).isFile();
    if (regular && mode !== 0o666) fs.fchmodSync(fd, mode);
    let done = 0;
    while (done < bytes.byteLength) done += fs.writeSync(fd, bytes, done, Math.min(bytes.byteLength - done, 1 << 30));
    if (regular) fs.fsyncSync(fd);
  } catch (e) {
    throw new KgrankInputError(argument, `cannot write ${path}: ${explain(e)}`);
  } finally {
    fs.closeSync(fd);
  }
}
