/**
 * kgrank-native/queue: one evaluation spread over machines as shard jobs on a BullMQ queue in Redis (docs/scale-out.md,
 * "A job queue"). `startShardWorker` hosts a worker in a Node service, `submitRun` enqueues a run's shards, waits
 * and merges them. BullMQ is an optional peer dependency: `npm install bullmq` where these run.
 *
 * @packageDocumentation
 */
// Exactly what docs/scale-out.md documents, with the types of their options and results. The CLI's own helpers of
// `kgrank worker` / `kgrank submit` (flag defaults, argument rewriting, the Redis URL parser) stay in src/run/queue.ts.
export { startShardWorker, submitRun } from "./run/queue";
export type { ShardJobData, ShardJobResult, SubmitOptions, SubmitResult, WorkerOptions } from "./run/queue";
export type { MergedRun } from "./run/merge";
export type { ReportInfo } from "./run/render";
export type { Out } from "./run/out";
export type { Format } from "./run/format";
