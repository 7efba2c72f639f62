#ifndef STRAND_WAL_CHECKPOINT_H_
#define STRAND_WAL_CHECKPOINT_H_

// Checkpointing: the design (not implemented yet; this header has no code).
//
// What exists today (engine/image.h, engine/recovery.h): a quiescent image.
// Engine::SaveImage closes the engine (logs closed, every cache written
// back) and copies the used part of every memory node with the oracle
// timestamp; recovery restores it and replays the records with a larger
// commit timestamp. It needs no transaction running, so it serves as the
// initial image (after a load) and as the output of strand_recover, not as
// a periodic checkpoint; the fuzzy checkpoint below removes that limit.
//
// Goal: bound recovery time and log size by copying the memory pool so the
// log before the copy can be deleted.
//
// What is specific to strand: the pool lives on memory nodes that run no
// code, is written by every compute node with one-sided RDMA, and may be
// cached (dirty) on compute nodes by SELCC. There is no buffer pool whose
// pages one node could flush. A checkpoint is a fuzzy copy of the
// memory-node regions, made exact by replaying the log from a per-node
// start LSN.
//
// Precondition (cc/ must provide it): memory nodes hold committed bytes only
// ("no steal": a line dirtied by a running transaction is not written back
// before that transaction commits). The log is redo-only; it could not undo
// uncommitted bytes captured by a copy.
//
//  1. Begin: each compute node n notes A_n, the last LSN appended, then
//     writes back every dirty cached line (waiting for lines latched by
//     transactions that are committing). Afterwards every transaction with
//     LSN <= A_n has all its bytes in memory; replay of n starts at
//     R_n = A_n + 1.
//  2. Copy: the checkpointer READs each memory node's region (header, root
//     area, allocated chunks) with one-sided RDMA, without locks, while
//     transactions run, into <wal_dir>/checkpoint-<id>/; then writes a
//     manifest {database_id, R_n per node, region sizes, CRCs}, fsyncs the
//     files and the directory, and renames the manifest into place (the
//     atomic publish: a checkpoint without a manifest does not exist).
//  3. Recovery: load the newest published checkpoint into the memory nodes,
//     then replay each node's records with LSN >= R_n, all nodes merged by
//     commit timestamp (log_merger.h). Correct because every byte the copy
//     may hold newer than A_n was written by a transaction with LSN >= R_n,
//     whose after-image replay writes again, in commit order, ending at the
//     last committed value; bytes no such record touches were final in
//     memory before the copy began. After-images are idempotent.
//  4. Truncate: after the publish, node n deletes its whole segments whose
//     last LSN is < R_n (a segment is the unit of deletion; LogReader
//     starts at the first remaining segment's first_lsn), then the older
//     checkpoints.
//
// Cost: one full read of the pool per checkpoint (memory-node bandwidth, no
// compute-node quiescing beyond the write-back of step 1); recovery is one
// load plus one checkpoint interval of replay.

#endif  // STRAND_WAL_CHECKPOINT_H_
