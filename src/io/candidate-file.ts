/**
 * Typed-candidate files: which entities each relation allows as head and as tail, as tab-separated lines led by a
 * keyword (docs/formats.md, "Typed candidates"):
 *
 *   head    RELATION  ENTITY [ENTITY ...]   the relation's allowed heads, listed
 *   tail    RELATION  ENTITY [ENTITY ...]   its allowed tails, listed
 *   type    ENTITY    TYPE [TYPE ...]       an entity's types
 *   domain  RELATION  TYPE [TYPE ...]       heads allowed: every entity of these types
 *   range   RELATION  TYPE [TYPE ...]       tails allowed: every entity of these types
 *
 * Lines of either kind mix; a relation's set on a side is the union of what its lines allow. Labels are the
 * dataset's (as in its TSV files); `#` starts a comment line. Memory: the labels, and 8 bytes per allowed (relation,
 * entity) pair while the sets are built (CandidateSets keeps 4).
 */
import { isUtf8 } from "node:buffer";

import { KgrankInputError } from "../checks/errors";
import { options as checkOptions } from "../checks/validate";
import { CandidateSets } from "../ranking/candidate-sets";
import { readRegularFile } from "./files";
import { forEachLine } from "./lines";
import { invalidUtf8Line } from "./tsv";

export interface CandidateFileOptions {
  /** The dataset's entity labels in id order. */
  entityLabels: readonly string[];
  /** The dataset's relation labels in id order. */
  relationLabels: readonly string[];
  /** The argument errors name (default "file"; the CLI passes "--constrain-candidates"). */
  argument?: string;
}

const KEYWORDS = ["head", "tail", "type", "domain", "range"] as const;
type Keyword = (typeof KEYWORDS)[number];

/** Reads a typed-candidate file (see above); errors name the file, the line and the fix. */
export function readCandidateFile(file: string, opts: CandidateFileOptions): CandidateSets {
  const argument = typeof opts?.argument === "string" ? opts.argument : "file";
  const bytes = readRegularFile(file, argument);
  if (!isUtf8(bytes)) {
    throw new KgrankInputError(argument, `${file}: ${invalidUtf8Line(bytes) ?? "is not UTF-8"}; save it as UTF-8`);
  }
  return parseCandidateText(bytes.toString("utf8"), { ...opts, argument, name: file });
}

/** parseCandidateText's options: the labels, and the name errors give the text (a file path). */
export interface CandidateTextOptions extends CandidateFileOptions {
  name?: string;
}

/** Typed candidates from the text of a candidate file. Pure. */
export function parseCandidateText(text: string, opts: CandidateTextOptions): CandidateSets {
  const o = checkOptions("options", opts, ["entityLabels", "relationLabels", "argument", "name"]);
  const argument = typeof o.argument === "string" ? o.argument : "text";
  const name = typeof o.name === "string" ? o.name : "the text";
  if (typeof text !== "string") throw new KgrankInputError(argument, "must be a string of tab-separated lines");
  const labels = (v: unknown, what: string) => {
    if (!Array.isArray(v) || v.length === 0 || v.some((s) => typeof s !== "string"))
      throw new KgrankInputError(what, "must be a non-empty array of the dataset's labels in id order");
    return new Map((v as string[]).map((s, i) => [s, i]));
  };
  const entities = labels(o.entityLabels, "entityLabels");
  const relations = labels(o.relationLabels, "relationLabels");
  const fail = (lineNo: number, why: string) => new KgrankInputError(argument, `${name} line ${lineNo}: ${why}`);
  const listed: Record<"head" | "tail", number[]> = { head: [], tail: [] };
  const typed: Record<"domain" | "range", { relation: number; type: string; lineNo: number }[]> = {
    domain: [],
    range: [],
  };
  const types = new Map<string, number[]>();
  let lines = 0;
  forEachLine(text, (line, lineNo) => {
    if (line.startsWith("#")) return;
    const fields = line.split("\t").map((f) => f.trim());
    const keyword = fields[0] as Keyword;
    if (!KEYWORDS.includes(keyword)) {
      throw fail(
        lineNo,
        `starts with ${JSON.stringify(fields[0]!.slice(0, 40))}, not one of ${KEYWORDS.join(", ")} ` +
          "(KEYWORD<TAB>RELATION or ENTITY<TAB>VALUES..., docs/formats.md)",
      );
    }
    if (fields.length < 3 || fields.some((f) => f === "")) {
      throw fail(
        lineNo,
        `needs ${keyword}<TAB>${keyword === "type" ? "ENTITY<TAB>TYPE" : "RELATION<TAB>" + (keyword === "head" || keyword === "tail" ? "ENTITY" : "TYPE")} ` +
          "[<TAB>more ...] with no empty field",
      );
    }
    lines++;
    const entity = (label: string) => {
      const id = entities.get(label);
      if (id === undefined)
        throw fail(
          lineNo,
          `entity ${JSON.stringify(label.slice(0, 80))} is not one of the dataset's entities: use its label as in the dataset's TSV files`,
        );
      return id;
    };
    if (keyword === "type") {
      const id = entity(fields[1]!);
      for (const t of fields.slice(2)) {
        const members = types.get(t) ?? [];
        members.push(id);
        types.set(t, members);
      }
      return;
    }
    const relation = relations.get(fields[1]!);
    if (relation === undefined)
      throw fail(
        lineNo,
        `relation ${JSON.stringify(fields[1]!.slice(0, 80))} is not one of the dataset's relations: use its label as in the dataset's TSV files`,
      );
    if (keyword === "head" || keyword === "tail") {
      for (const label of fields.slice(2)) listed[keyword].push(relation, entity(label));
    } else {
      for (const type of fields.slice(2)) typed[keyword].push({ relation, type, lineNo });
    }
  });
  if (lines === 0)
    throw new KgrankInputError(argument, `${name} has no head, tail, type, domain or range line: nothing constrains`);
  for (const [kind, side] of [
    ["domain", "head"],
    ["range", "tail"],
  ] as const) {
    for (const { relation, type, lineNo } of typed[kind]) {
      const members = types.get(type);
      if (!members)
        throw fail(
          lineNo,
          `type ${JSON.stringify(type.slice(0, 80))} has no entity: give type lines (type<TAB>ENTITY<TAB>${type.slice(0, 40)}) for its entities, or drop it`,
        );
      for (const e of members) listed[side].push(relation, e);
    }
  }
  return CandidateSets.fromPairs({
    numEntities: (o.entityLabels as string[]).length,
    numRelations: (o.relationLabels as string[]).length,
    head: listed.head,
    tail: listed.tail,
    source: name,
  });
}
