// Package osindex is engram's OpenSearch index: the associative layer
// (schema.md section 4, index "experience_events") kept in an OpenSearch
// cluster, written with the _bulk API through opensearch-go v4. It
// implements ingest.Index; [Index.Client] hands the same client to the read
// side.
//
// # Opening
//
// [Open] builds the client (basic auth, a CA bundle added to the system
// roots), asks the cluster for its root document and its plugins, and
// makes sure the index is there. Every failure of Open is one line that
// names the URL and says what to do: connection refused ("is OpenSearch
// running at URL?"), an untrusted certificate ("set --opensearch-ca ..."),
// 401 ("check OPENSEARCH_USERNAME/OPENSEARCH_PASSWORD"), 403, a timeout.
//
// # The index
//
// When the index does not exist, Open creates it with [IndexDefinition]: the
// source system's mapping plus engram's extension fields ([ExtensionFields]:
// turn_id, tenant_id, trace_id, tool keyword; success boolean; latency_ms
// long; ingested_at date). With the k-NN plugin, embedding is a knn_vector
// of Config.Dimension (hnsw, Config.KNNEngine, default lucene, space
// Config.SpaceType, default l2, m 16, ef_construction 128) and the index
// has index.knn true and knn.algo_param.ef_search 100. Without the plugin
// embedding is a float field that is neither indexed nor given doc values:
// the vector is kept in _source, so documents read back whole, but it cannot
// be searched; such an index has to be reindexed to get vector search once
// the plugin is installed.
//
// structured is an object, as the source system maps it, so each key
// becomes a field with the type of its first value, and a later document
// whose structured content contradicts it ({"subject": "text"}, then
// {"subject": {...}}) is rejected with mapper_parsing_exception. For
// free-form content Config.StructuredType "flat_object" (OpenSearch 2.7+)
// takes any shape, with the leaves searchable as keywords by dotted path.
//
// [Index.KNN] says whether the cluster has the k-NN plugin, [Index.VectorSearch]
// whether this index's embedding is a knn_vector (of [Index.Dimension]).
//
// An index engram creates has 1 primary shard and 0 replicas unless
// Config.Shards / Config.Replicas say otherwise (the source system uses 3
// and 1). A single node cannot allocate a replica of its own shards, so with
// replicas the index stays yellow there; on a cluster of several nodes set
// Replicas to 1 or more.
//
// When the index exists (created by the source system, or by another engram),
// its settings and existing fields are left alone: Open only adds the
// extension fields it lacks with PUT _mapping, and logs (Config.Logf) a field
// whose existing type does not take what engram writes (a boolean
// latency_ms, say), since documents that carry it will be rejected. An embedding whose knn_vector
// dimension differs from Config.Dimension is an error: every write would
// fail. Two processes creating the index at once is fine: the loser of the
// race sees resource_already_exists_exception and carries on as if the index
// had been there.
//
// # Writing
//
// [Index.Write] sends create actions (op_type create) in _bulk requests of
// at most Config.BatchDocs documents and Config.BatchBytes bytes (a single
// larger document goes alone). A document whose id is already in the index
// is answered 409 version_conflict_engine_exception: it is kept as it was
// and reported Created=false with no error, so a re-run never makes a
// second document. Every other per-item failure is an *[ItemError] carrying
// the status, type and reason OpenSearch gave (mapper_parsing_exception,
// ...). A failure of a whole request gives its error to every document of
// that request. Write sets ingested_at (RFC 3339, UTC, milliseconds) in
// the documents it sends and, for those created, on the caller's structs.
// An empty embedding is sent as null (a knn_vector rejects []), and
// [Index.Get] gives it back as an empty slice.
//
// Refresh follows Config.Refresh: "false" (the default: documents become
// searchable with the index's refresh interval, one second by default),
// "true" or "wait_for".
//
// Write does not retry. The transport's own retries are disabled too: a
// retried _bulk whose first attempt was applied would report the documents
// it created as duplicates. [IsTransient] tells errors worth retrying
// (connection refused or reset, timeouts, 429, 5xx) from the others.
package osindex
