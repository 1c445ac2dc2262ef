package osindex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// The upgrade of a deployment's index (engram reindex --into): a new index
// with engram's mapping and the deployment's k-NN settings, filled from
// the archive, then an alias moved onto it in one request.

// CreateLike creates the index into for an upgrade of ix: engram's mapping
// with ix's embedding definition, extra fields, shards, replicas and k-NN
// settings as they are. An into that exists already is kept if it declares
// ingested_at (a resumed upgrade) and an error otherwise; created says which.
func (ix *Index) CreateLike(ctx context.Context, into string) (created bool, err error) {
	if into == "" || into == ix.cfg.Index {
		return false, fmt.Errorf("reindex --into %q: name a new index, not the one read from", into)
	}
	if m, err := ix.mappingOf(ctx, into); err == nil {
		for name, props := range m {
			if props[fIngestedAt] == nil {
				return false, fmt.Errorf("index %s exists without engram's mapping (no %s): not one an upgrade made; name another", name, fIngestedAt)
			}
		}
		return false, nil
	} else if !isStatus(err, http.StatusNotFound) {
		return false, err
	}
	src, err := ix.mappingOf(ctx, ix.cfg.Index)
	if err != nil {
		return false, err
	}
	var all map[string]struct {
		Settings map[string]any `json:"settings"`
	}
	q := url.Values{"flat_settings": {"true"}}
	if _, err := ix.do(ctx, "GET", "/"+url.PathEscape(ix.cfg.Index)+"/_settings", q, nil, &all); err != nil {
		return false, err
	}
	names := slices.Sorted(maps.Keys(src))
	if len(names) == 0 {
		return false, fmt.Errorf("index %s has no mapping to upgrade", ix.cfg.Index)
	}
	// Behind an alias of several indices, the first by name decides.
	first := names[0]
	idx := map[string]any{}
	for _, k := range []string{"number_of_shards", "number_of_replicas", "knn", "knn.algo_param.ef_search"} {
		if v, ok := all[first].Settings["index."+k]; ok {
			idx[k] = v
		}
	}
	props := properties(ix.knn, ix.cfg.Dimension, ix.cfg.KNNEngine, ix.cfg.SpaceType, "")
	for f, def := range src[first] {
		if _, ours := props[f]; !ours || f == fEmbedding || f == "structured" {
			props[f] = def // the deployment's own definition
		}
	}
	body, _ := json.Marshal(map[string]any{
		"settings": map[string]any{"index": idx},
		"mappings": map[string]any{"properties": props},
	})
	if _, err := ix.do(ctx, "PUT", "/"+url.PathEscape(into), nil, body, nil); err != nil {
		return false, fmt.Errorf("creating index %s: %w", into, err)
	}
	ix.cfg.Logf("opensearch %s: created index %s like %s (engram's mapping, its embedding and k-NN settings: %s)",
		ix.url, into, first, summarize(idx, src[first][fEmbedding]))
	return true, nil
}

// summarize is the settings CreateLike kept, for its log line.
func summarize(idx map[string]any, emb map[string]any) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(idx)) {
		parts = append(parts, fmt.Sprintf("%s=%v", k, idx[k]))
	}
	if emb != nil {
		b, _ := json.Marshal(emb)
		parts = append(parts, "embedding "+string(b))
	}
	return strings.Join(parts, ", ")
}

// mappingOf is the properties of each index behind name.
func (ix *Index) mappingOf(ctx context.Context, name string) (map[string]map[string]map[string]any, error) {
	var got map[string]struct {
		Mappings struct {
			Properties map[string]map[string]any `json:"properties"`
		} `json:"mappings"`
	}
	if _, err := ix.do(ctx, "GET", "/"+url.PathEscape(name)+"/_mapping", nil, nil, &got); err != nil {
		return nil, err
	}
	out := map[string]map[string]map[string]any{}
	for k, v := range got {
		out[k] = v.Mappings.Properties
	}
	return out, nil
}

func isStatus(err error, status int) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Status == status
}

// SwapAlias points alias at into alone, in one _aliases request that
// removes it from the indices it names now and adds it to into, so a
// reader of the alias sees either the old index or the new one, never
// neither nor both. The old indices are kept. It returns them (none when
// the alias did not exist). An alias cannot share its name with an index:
// if alias names one (a deployment that reads experience_events directly),
// the error says to choose another name.
func (ix *Index) SwapAlias(ctx context.Context, alias, into string) ([]string, error) {
	if alias == "" || alias == into {
		return nil, fmt.Errorf("--swap-alias %q: name an alias other than the new index", alias)
	}
	old, err := ix.AliasIndices(ctx, alias)
	if err != nil {
		return nil, err
	}
	var actions []any
	for _, o := range old {
		if o != into {
			actions = append(actions, map[string]any{"remove": map[string]any{"index": o, "alias": alias}})
		}
	}
	actions = append(actions, map[string]any{"add": map[string]any{"index": into, "alias": alias}})
	body, _ := json.Marshal(map[string]any{"actions": actions})
	if _, err := ix.do(ctx, "POST", "/_aliases", nil, body, nil); err != nil {
		return nil, fmt.Errorf("moving alias %s to %s: %w", alias, into, err)
	}
	return slices.DeleteFunc(old, func(o string) bool { return o == into }), nil
}

// AliasIndices is the indices alias names now (none when there is no such
// alias). An index of that name is an error saying to choose another
// name: SwapAlias could never move it.
func (ix *Index) AliasIndices(ctx context.Context, alias string) ([]string, error) {
	var cur map[string]json.RawMessage
	_, err := ix.do(ctx, "GET", "/_alias/"+url.PathEscape(alias), nil, nil, &cur)
	switch {
	case isStatus(err, http.StatusNotFound):
		if status, herr := ix.do(ctx, "HEAD", "/"+url.PathEscape(alias), nil, nil, nil); herr == nil && status == http.StatusOK {
			return nil, fmt.Errorf("%s is an index, not an alias, and an alias cannot take the name of an index: "+
				"choose another alias name (say %s_current) and point engram and the readers at it (--opensearch-index)", alias, alias)
		}
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading alias %s: %w", alias, err)
	}
	return slices.Sorted(maps.Keys(cur)), nil
}
