/**
 * Flag value parsers and the option definitions several commands share (commander). They throw a KgrankInputError
 * naming the flag.
 */
import { Option } from "commander";

import { type KgrankError, KgrankInputError, UnknownMetricError } from "../checks/errors";
import type { Split } from "../io/datasets";
import { getMetric, parseMetricKey } from "../metrics/index";
import { quoted } from "../text/suggest";

import { FORMATS } from "./format";

/*
 * Flag parsers throw a KgrankInputError naming the flag, not commander's InvalidArgumentError: it reaches main()'s
 * catch as it is and prints as every other CLI error, `kgrank: --bootstrap: must be ...` (commander's own format,
 * "error: option '--bootstrap <n>' argument '1' is invalid. ...", named the flag twice and differed from the rest).
 */
export function intArg(name: string, min: number, max = Number.MAX_SAFE_INTEGER) {
  return (v: string) => {
    const n = Number(v);
    if (!/^\s*\d+\s*$/.test(v) || !Number.isSafeInteger(n) || n < min || n > max) {
      const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
      throw new KgrankInputError(name, `must be an integer ${range}, got ${quoted(v)}`);
    }
    return n;
  };
}

const UNITS: Record<string, number> = {
  "": 1,
  b: 1,
  k: 1024,
  kb: 1e3,
  kib: 1024,
  m: 1024 ** 2,
  mb: 1e6,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1e9,
  gib: 1024 ** 3,
  t: 1024 ** 4,
  tb: 1e12,
  tib: 1024 ** 4,
};

/** A size in bytes: a number and a unit (B, KiB / MiB / GiB / TiB, kB / MB / GB / TB; K / M / G / T are binary). */
export function sizeArg(name: string) {
  return (v: string) => {
    const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(v);
    const unit = m ? UNITS[m[2]!.toLowerCase()] : undefined;
    const bytes = m && unit !== undefined ? Math.floor(Number(m[1]) * unit) : NaN;
    if (!Number.isSafeInteger(bytes) || bytes < 1) {
      throw new KgrankInputError(
        name,
        `must be a size such as 4GiB, 512MiB or 2GB (bytes without a unit), got ${quoted(v)}`,
      );
    }
    return bytes;
  };
}

/** The largest seed (the seeded streams take 32 bits): --seed's bound. */
export const SEED_MAX = 2 ** 32 - 1;

export function listArg(v: string): string[] {
  return v
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

/**
 * --metrics: a comma list of metric names or synonyms (`fullKeys`: or PyKEEN's full keys, side.rank_type.metric),
 * each checked as the flag is read so that a wrong one is named with the flag and the closest names; `all` alone
 * where the command takes it (`all`: evaluate, submit, merge).
 */
export function metricsArg(opts: { all: boolean; fullKeys: boolean }): (v: string) => string[] {
  return (v) => {
    const list = listArg(v);
    if (list.length === 0) throw new KgrankInputError("--metrics", `lists no metric, got ${quoted(v)}`);
    if (opts.all && list.length === 1 && list[0]!.toLowerCase() === "all") return ["all"];
    for (const name of list) {
      try {
        if (opts.fullKeys) parseMetricKey(name, "--metrics");
        else getMetric(name);
      } catch (e) {
        if (e instanceof UnknownMetricError)
          throw new KgrankInputError(
            "--metrics",
            `unknown metric ${quoted(e.query)}; closest known names: ${e.suggestions.join(", ")} (every metric: docs/metrics.md${opts.all ? "; all for every one" : ""})`,
          );
        if (e instanceof KgrankInputError && e.argument === "query")
          throw new KgrankInputError(
            "--metrics",
            /is a full key/.test(e.message)
              ? `${quoted(name)} is a full key (side.rank_type.metric); this command takes metric names such as "${name.split(".").pop()}"`
              : e.message.slice(e.argument.length + 2),
          );
        throw e;
      }
    }
    return list;
  };
}

function ksArg(v: string): number[] {
  return listArg(v).map((s) => {
    const n = Number(s);
    if (!Number.isSafeInteger(n) || n < 1)
      throw new KgrankInputError("--ks", `takes positive integers separated by commas, got ${quoted(s)}`);
    return n;
  });
}

export function collect(v: string, prev: string[] = []): string[] {
  return [...prev, v];
}

export const formatOption = () =>
  new Option("--format <format>", "output format").choices(FORMATS as string[]).default("table");
export const outputOption = () =>
  new Option("-o, --output <file>", "write the output to FILE (atomically: temporary name, then rename)").argParser(
    (v: string) => {
      if (v.trim() === "")
        throw new KgrankInputError("--output", "needs a file name (leave it out to print to stdout)");
      return v;
    },
  );
export const quietOption = () => new Option("-q, --quiet", "no progress bar and no notes on stderr");
export const ksOption = () => new Option("--ks <list>", "cut-offs of Hits@k (default 1,3,5,10)").argParser(ksArg);

export function splitArg(v: string): Split {
  if (v !== "valid" && v !== "test" && v !== "train")
    throw new KgrankInputError("--split", `must be train, valid or test, got ${quoted(v)}`);
  return v;
}

/** Library argument names as the flags a CLI user typed. */
const FLAG_OF: Record<string, string> = {
  triples: "--triples",
  dataset: "--dataset",
  "dataset-dir": "--dataset-dir",
  datasetDir: "--dataset-dir",
  metrics: "--metrics",
  ks: "--ks",
  ranks: "--ranks",
  numCandidates: "--num-candidates",
  numNegatives: "--negatives",
  estimators: "--estimators",
  gamma: "--gamma",
  weights: "--weights",
  modelDir: "--model-dir",
  entityEmbeddings: "--entity-embeddings",
  relationEmbeddings: "--relation-embeddings",
  entityIds: "--entity-ids",
  relationIds: "--relation-ids",
  interaction: "--interaction",
  complexLayout: "--complex-layout",
  precision: "--precision",
  memoryBudget: "--memory",
  entityShard: "--entity-shard",
};

/** A KgrankError as the one line the CLI prints for it (after "kgrank: "): library argument names become flags. */
export function errorLine(e: KgrankError): string {
  const argument = e instanceof KgrankInputError ? e.argument : "";
  const flag = FLAG_OF[argument];
  const message = flag ? `${flag}${e.message.slice(argument.length)}` : e.message;
  return message.split("\n")[0]!;
}

/**
 * commander's own usage errors ("error: unknown option '--x'", "error: option '--format <format>' argument 'xml' is
 * invalid. Allowed choices are ...", "error: required option '--ranks <file>' not specified") in the one format of
 * every CLI error: `--flag: what is wrong` (after "kgrank: "), one line, bounded to 300 characters. (Flag values our parsers check are
 * KgrankInputErrors and never come here.)
 */
export function usageLine(text: string): string {
  let m = text
    .trim()
    .replace(/^error:\s*/, "")
    .replace(/\s*\n\s*/g, " ");
  const invalid = /^option '(?:-\w, )?(--[\w-]+)[^']*' argument '([\s\S]*)' is invalid\.\s*([\s\S]*)$/.exec(m);
  if (invalid) {
    const [, flag, value, why] = invalid as unknown as [string, string, string, string];
    const choices = /^Allowed choices are (.*?)\.?$/.exec(why);
    m = choices
      ? `${flag}: must be one of ${choices[1]}, got ${quoted(value)}`
      : `${flag}: ${why} (got ${quoted(value)})`;
  }
  const required = /^required option '(?:-\w, )?(--[\w-]+)[^']*' not specified$/.exec(m);
  if (required) m = `${required[1]}: is required`;
  const missing = /^option '(?:-\w, )?(--[\w-]+)[^']*' argument missing$/.exec(m);
  if (missing) m = `${missing[1]}: needs a value`;
  return m.length > 300 ? `${m.slice(0, 300)}…` : m;
}

/** An error that is no KgrankError (a bug) as the one line the CLI prints for it (after "kgrank: "). */
export function internalErrorLine(e: unknown): string {
  return `internal error: ${(e as Error)?.message ?? String(e)} (please report it; KGRANK_DEBUG=1 shows the stack)`;
}
