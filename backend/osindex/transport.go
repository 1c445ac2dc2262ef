package osindex

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"

	"github.com/opensearch-project/opensearch-go/v4"
	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"

	"engram/backend"
)

// Error is a failure of a request: one line naming the cluster URL and
// index, what the reader was doing and what went wrong. It wraps the cause,
// so IsTransient classifies it as it would the cause (an
// *StatusError for an error answer, a network error otherwise).
type Error struct {
	Where string // "opensearch http://host:9200/index"
	Op    string // "search", "get event x", ...
	Err   error
}

func (e *Error) Error() string {
	msg := e.Err.Error()
	var se *StatusError
	var oe *net.OpError
	switch {
	case errors.As(e.Err, &oe):
		msg = oe.Error() // without the transport's "METHOD" "URL" prefix: the URL is named already
	case errors.As(e.Err, &se):
		msg = fmt.Sprintf("%d %s", se.Status, http.StatusText(se.Status))
		switch {
		case se.Cause != nil:
			msg += ": " + se.Cause.String()
		case se.Body != "":
			msg += ": " + se.Body
		}
	}
	return oneLine(e.Where + ": " + e.Op + ": " + msg)
}

func (e *Error) Unwrap() error { return e.Err }

func (r *Reader) fail(op string, err error) error {
	return &Error{Where: r.where, Op: op, Err: err}
}

// maxErrorBody bounds what is read of an error answer.
const maxErrorBody = 64 << 10

// send performs req and decodes a 2xx answer into out (nil: discard). A
// non-2xx answer is an *Error wrapping an *StatusError; its status
// is returned too (0 without an answer).
func (r *Reader) send(ctx context.Context, op, method string, req opensearch.Request, out any) (int, error) {
	if r.closed.Load() {
		return 0, r.fail(op, fmt.Errorf("index %w", backend.ErrClosed))
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	hr, err := req.GetRequest(method)
	if err != nil {
		return 0, r.fail(op, err)
	}
	if hr.Header == nil {
		hr.Header = http.Header{}
	}
	hr.Header.Set("Accept", "application/json")
	resp, err := r.api.Client.Stream(hr.WithContext(ctx))
	if resp == nil {
		if err == nil {
			err = errors.New("no response")
		}
		return 0, r.fail(op, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return resp.StatusCode, r.fail(op, statusError(op, resp.StatusCode, body))
	}
	if err != nil {
		return resp.StatusCode, r.fail(op, err)
	}
	if out == nil {
		_, err := io.Copy(io.Discard, resp.Body)
		if err != nil {
			return resp.StatusCode, r.fail(op, fmt.Errorf("reading the answer: %w", err))
		}
		return resp.StatusCode, nil
	}
	dec := json.NewDecoder(resp.Body)
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", err, ctx.Err())
		}
		return resp.StatusCode, r.fail(op, fmt.Errorf("reading the answer: %w", err))
	}
	return resp.StatusCode, nil
}

// hit is one search hit. Sort values are kept as their JSON text so that
// they go back into search_after exactly as they came.
type hit struct {
	ID     string                       `json:"_id"`
	Source json.RawMessage              `json:"_source"`
	Fields map[string][]json.RawMessage `json:"fields"`
	Sort   []json.RawMessage            `json:"sort"`
}

// result is the answer to one search (also one item of an _msearch).
type result struct {
	Shards struct {
		Total    int `json:"total"`
		Failed   int `json:"failed"`
		Failures []struct {
			Reason *Cause `json:"reason"`
		} `json:"failures"`
	} `json:"_shards"`
	Hits struct {
		Hits []hit `json:"hits"`
	} `json:"hits"`
	Aggregations json.RawMessage `json:"aggregations"`
	// Of an _msearch item.
	Status int             `json:"status"`
	Error  json.RawMessage `json:"error"`
}

// check turns shard failures of a 2xx answer into an error: a partial
// answer would break the orders and cursors built on it.
func (res *result) check(op string) error {
	if len(res.Error) > 0 && string(res.Error) != "null" {
		status := res.Status
		if status == 0 {
			status = http.StatusInternalServerError
		}
		return statusError(op, status, []byte(`{"error":`+string(res.Error)+`}`))
	}
	if res.Shards.Failed > 0 {
		reason := "no reason given"
		if len(res.Shards.Failures) > 0 && res.Shards.Failures[0].Reason != nil {
			reason = res.Shards.Failures[0].Reason.String()
		}
		return fmt.Errorf("%d of %d shards failed: %s", res.Shards.Failed, res.Shards.Total, reason)
	}
	return nil
}

// search runs one search body.
func (r *Reader) search(ctx context.Context, op string, body map[string]any) (*result, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, r.fail(op, err)
	}
	var res result
	req := &opensearchapi.SearchReq{Indices: []string{r.index}, Body: bytes.NewReader(b)}
	if _, err := r.send(ctx, op, http.MethodPost, req, &res); err != nil {
		return nil, err
	}
	if err := res.check(op); err != nil {
		return nil, r.fail(op, err)
	}
	return &res, nil
}

// msearch runs several search bodies in one _msearch request.
func (r *Reader) msearch(ctx context.Context, op string, bodies []map[string]any) ([]*result, error) {
	if len(bodies) == 1 {
		res, err := r.search(ctx, op, bodies[0])
		if err != nil {
			return nil, err
		}
		return []*result{res}, nil
	}
	var buf bytes.Buffer
	for _, b := range bodies {
		buf.WriteString("{}\n")
		line, err := json.Marshal(b)
		if err != nil {
			return nil, r.fail(op, err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	var ans struct {
		Responses []*result `json:"responses"`
	}
	req := opensearchapi.MSearchReq{Indices: []string{r.index}, Body: bytes.NewReader(buf.Bytes()),
		Header: http.Header{"Content-Type": {"application/x-ndjson"}}}
	if _, err := r.send(ctx, op, http.MethodPost, req, &ans); err != nil {
		return nil, err
	}
	if len(ans.Responses) != len(bodies) {
		return nil, r.fail(op, fmt.Errorf("_msearch answered %d of %d searches", len(ans.Responses), len(bodies)))
	}
	for _, res := range ans.Responses {
		if res == nil {
			return nil, r.fail(op, errors.New("_msearch answered null"))
		}
		if err := res.check(op); err != nil {
			return nil, r.fail(op, err)
		}
	}
	return ans.Responses, nil
}
