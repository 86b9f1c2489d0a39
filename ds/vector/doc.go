// Package vector is HotKV's vector set: an HNSW index (Malkov & Yashunin, with the neighbour-selection
// heuristic) over named vectors, with FP32, Q8 and BIN storage and cosine, L2 and inner-product metrics.
// It knows nothing of RESP and takes no locks.
//
// # Concurrency
//
// Writes (Add, Remove, SetAttr) are serialized by the caller (the shard's token). Searches and every
// other read may run concurrently with each other, never with a write: all search scratch (visited
// epochs, heaps, the prepared query) comes from a sync.Pool, so readers share nothing mutable. Because
// no search overlaps a write, a search never sees a half-linked node.
//
// # Storage
//
// An element is a node id (uint32) indexing contiguous per-id arrays: the vector arena (dim float32s,
// dim int8s or dim/64 words a node), the level-0 link arena (2M+1 uint32s a node: count, then ids),
// upper-level link blocks for the few nodes above level 0, and the reverse links that make deletion
// real: a removed node's in-neighbours are known, each is relinked among its remaining links and the
// removed node's neighbours, and the slot is reused. Ids are stable while their element lives.
//
// Cosine sets store vectors normalised and remember the norm (Vector multiplies it back, as Redis's
// VEMB does). Q8 stores int8 components with a per-vector range: Redis 8's q = round(x*127/range),
// range the largest absolute component, for a vector whose components reach about as far below
// zero as above, else an offset range [min, max] in 255 levels (store.go's q8meta; non-negative
// data such as pixels gets twice the levels). BIN keeps one sign bit a dimension and measures
// every metric by Hamming distance.
//
// # Score scale
//
// Result.Score is a similarity, higher is better:
//   - Cosine: (1+cos)/2, in [0,1] (Redis 8's VSIM WITHSCORES); 1 identical, 0 opposite.
//   - IP: (1+dot)/2, the same formula on the raw inner product; equal to Cosine on unit vectors, not
//     bounded otherwise.
//   - L2: 1/(1+d), d the Euclidean distance, in (0,1]; 1 identical.
//   - BIN (any metric): 1 - hamming/dim, in [0,1], as Redis's binary quantization.
//
// Q8 compares a query asymmetrically: the query stays float32 against the stored int8s, so only the
// stored side carries quantization error (Redis quantizes the query too; its Q8 scores differ from
// these in the third decimal). Node-to-node distances (links, VLINKS scores) are int8 against int8.
package vector
