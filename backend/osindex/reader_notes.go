// The read side: Reader implements query.Reader over an OpenSearch index
// (schema.md section 4) through the client of Index (opensearch-go v4).
// [OpenReader] opens the index with Open; [NewReader] wraps an index
// already open. Every call of a reader with
// query.Options.Tenant is filtered on tenant_id.
//
// # Visibility
//
// Searches see what the last refresh made visible: with the default
// refresh interval (index.refresh_interval, 1 s) a document written
// without a refresh appears in Recent, Search, Turns, Count and Tail up to
// about a second after its _bulk request returned. Document (and so the
// target of Similar) is a real-time GET and sees it at once.
//
// # Ingestion order
//
// Recent, Search without free words, Tail and the order of Turns follow
// ingestion order: a document's position is (K, _seq_no, event_id), where K
// is ingested_at (set by engram's writer, in milliseconds) or, for a
// document without it (written by the source system), its timestamp
// (schema.md section 4 fallback); _seq_no is the order in which its shard
// indexed it, which orders the documents of one _bulk request (they share
// one ingested_at) and of requests within the same millisecond; event_id
// makes it total (the _seq_no of different shards can be equal).
//
// No field holds K, and a script sort would compute it for every matching
// document on every page, so each listing runs two searches in one
// _msearch: over the documents with ingested_at sorted on it, and over
// those without sorted on timestamp, both then on _seq_no and event_id.
// Their sort values mean the same thing; they are merged client-side, and
// a cursor is the sort values of the last document, which go as
// search_after into both. On an index of one shard written by one engram
// process this is exactly the order of writing. With several shards,
// documents of one request that share ingested_at are ordered by _seq_no
// per shard and so interleave arbitrarily (but deterministically) across
// shards.
//
// OpenSearch prunes a sort with the points index only when it has one key;
// on three keys it visits every matching document (some 20 ms per 100,000
// on the test node). So a newest-first listing (and a tail poll) first
// sorts on K alone, _source off, to find the K that its page cannot pass,
// then runs the three-key sort within that bound: two round trips of a
// few milliseconds instead of one that grows with the index.
//
// Search with free words ranks by BM25 on summary (match_phrase of each
// word or phrase; the english analyzer stems and drops stop words), ties
// newest first, with the score in front of the same position.
//
// # Tail
//
// A tail cursor holds the latest position P delivered, the start L of an
// overlap window (by default 10 s of K behind P) and the ids of the
// documents delivered with K >= L. Tail asks for "K >= L and not one of
// those ids", oldest first. Re-reading the window catches documents that
// became visible after a later one had been delivered: ingested_at is set
// by the writer before its _bulk request, so documents of concurrent
// writers (or the later requests of one large Write, which share its
// ingested_at, on another shard) can be visible in another order than K;
// such a late document comes in the next poll, before the newer ones. A
// document that becomes visible more than the window behind P is missed.
//
// The cursor keeps at most 4,096 ids (DefaultTailSeen; deflated, a
// cursor is at most some tens of KiB): when more documents than that fall
// in the window, L moves up past the oldest ones, so under a heavy write
// rate the effective window is the last 4,096 documents. If more documents than
// that share P's own K, the window closes and Tail goes on with
// search_after P alone, which is exact for one writer on one shard.
// Source-system documents are placed by their timestamp, so one is tailed
// only if its timestamp is within the window when it becomes visible.
//
// TailStart is the newest visible document, with the window behind it
// filled from the index. On an empty index it is "" (the start).
//
// # Turns
//
// Turn is one search on the turn key with its fallbacks (turn_id; else
// trace_id where there is no turn_id; else event_id where there is
// neither), sorted into causal order client-side.
//
// Turns pages like the embedded index does: it walks the matching
// documents newest first (doc values of the three key fields only),
// collecting turn keys until it has one more turn than the page holds
// that was not on an earlier page (plus a few, for turns that straddle
// the cursor), then sums up those turns with one aggregation restricted
// to their keys: a terms aggregation on the turn key (a painless script
// with the fallbacks) with min/max timestamp, max importance_score, a
// filter on success:false, a filter on "at or after the cursor" (the
// turn was on an earlier page), and top_hits of size 1 for the turn's
// first document in each stream. Session, agent and tenant come from the
// first document; for a turn whose first document lacks one of them a
// second aggregation over those turns finds the first document that has
// it (top_hits per field). The walk gives each row's latest document, and
// the cursor is the position of the last row's. So a page costs about
// (page + 1) x events per turn documents of doc values plus one
// aggregation over those turns, whatever the size of the index; a terms
// aggregation over the whole index ordered by a metric could not be paged
// without re-aggregating everything for each page (and its order could not
// break ties by _seq_no), and collapse cannot use a scripted key. The walk
// and the aggregation are two searches, not one snapshot: a document
// indexed between them can move its turn to an earlier page (it shows on
// the first page again).
//
// # Similarity
//
// See [Reader.Similar]. Without the k-NN plugin (or with
// Config.AssumeNoKNN), or on an index whose embedding is not a
// knn_vector, Similar's error wraps backend.ErrUnavailable.
//
// # Limits
//
// Document is a GET by id, so the index must be an index or an alias of
// one index. Free words go through the english analyzer: stems match
// ("memories" finds "memory") and a word that is only a stop word ("the")
// matches nothing. Tail's overlap window is measured on K, so it needs
// the writers' clocks to agree within it.
//
// # Errors
//
// Errors are one line naming the cluster URL and the index (*[Error]);
// they wrap the cause, so IsTransient tells transient ones
// (connection refused, timeouts, 429, 5xx). Shard failures in an
// otherwise successful answer are errors too: a partial answer would
// break the orders and cursors.

package osindex
