package osindex

import "maps"

// ExtensionFields are the fields engram adds to the source system's mapping
// (docs/data-contract.md, The index document), as OpenSearch field
// definitions.
func ExtensionFields() map[string]any {
	kw := func() map[string]any { return map[string]any{"type": "keyword"} }
	return map[string]any{
		"turn_id":     kw(),
		"tenant_id":   kw(),
		"trace_id":    kw(),
		"tool":        kw(),
		"success":     map[string]any{"type": "boolean"},
		"latency_ms":  map[string]any{"type": "long"},
		"ingested_at": map[string]any{"type": "date"},
		// source: context.source (model.SourceOf), added to an existing
		// index by completeMapping like every extension.
		"source": kw(),
	}
}

// embeddingField is the definition of the embedding field: a knn_vector of
// dim components indexed with hnsw when knn is true, else a float array
// kept only in _source (neither indexed nor with doc values).
func embeddingField(knn bool, dim int, engine, space string) map[string]any {
	if !knn {
		return map[string]any{"type": "float", "index": false, "doc_values": false}
	}
	return map[string]any{
		"type":      "knn_vector",
		"dimension": dim,
		"method": map[string]any{
			"name":       "hnsw",
			"engine":     engine,
			"space_type": space,
			"parameters": map[string]any{"m": hnswm, "ef_construction": hnswEfConstruction},
		},
	}
}

// properties is the mapping of an index engram creates: the source
// system's fields, its two declared float fields, and the extensions;
// structured is of type structuredType ("object" when empty).
func properties(knn bool, dim int, engine, space, structuredType string) map[string]any {
	if structuredType == "" {
		structuredType = "object"
	}
	kw := func() map[string]any { return map[string]any{"type": "keyword"} }
	fl := func() map[string]any { return map[string]any{"type": "float"} }
	p := map[string]any{
		"event_id":            kw(),
		"timestamp":           map[string]any{"type": "date"},
		"event_type":          kw(),
		"session_id":          kw(),
		"user_id":             kw(),
		"agent_id":            kw(),
		"summary":             map[string]any{"type": "text", "analyzer": "english"},
		"embedding":           embeddingField(knn, dim, engine, space),
		"structured":          map[string]any{"type": structuredType},
		"importance_score":    fl(),
		"reward_score":        fl(),
		"confidence":          fl(),
		"retrieval_count":     map[string]any{"type": "integer"},
		"decay_factor":        fl(),
		"object_storage_key":  kw(),
		"tags":                kw(),
		"retrieval_priority":  fl(),
		"reinforcement_score": fl(),
	}
	maps.Copy(p, ExtensionFields())
	return p
}

// indexDefinition is the body of the request that creates the index:
// settings (shards, replicas and, with knn, index.knn and ef_search) and
// mappings. cfg's defaults must be filled (Open does).
func indexDefinition(cfg Config, knn bool) map[string]any {
	settings := map[string]any{
		"number_of_shards":   cfg.Shards,
		"number_of_replicas": cfg.Replicas,
	}
	if knn {
		settings["knn"] = true
		settings["knn.algo_param.ef_search"] = defaultEfSearch
	}
	return map[string]any{
		"settings": map[string]any{"index": settings},
		"mappings": map[string]any{
			"properties": properties(knn, cfg.Dimension, cfg.KNNEngine, cfg.SpaceType, cfg.StructuredType),
		},
	}
}

// fieldType is the "type" of a field definition as GET _mapping returns it
// ("object" for an object without one).
func fieldType(def map[string]any) string {
	if t, ok := def["type"].(string); ok {
		return t
	}
	if _, ok := def["properties"]; ok {
		return "object"
	}
	return ""
}

// family groups the field types that accept the same JSON values: a
// document fits a field of another type of its family (numbers are
// coerced), not one of another family.
func family(typ string) string {
	switch typ {
	case "float", "double", "half_float", "scaled_float", "long", "integer", "short", "byte", "unsigned_long":
		return "number"
	case "keyword", "text", "match_only_text", "wildcard", "constant_keyword":
		return "string"
	case "date", "date_nanos":
		return "date"
	}
	return typ
}
