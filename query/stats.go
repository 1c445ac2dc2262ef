package query

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// The fields Stats splits the documents by.
const (
	ByType    = "type"
	ByOutcome = "outcome"
	ByAgent   = "agent"
	ByTool    = "tool"
	ByTag     = "tag"
	BySession = "session"
	ByTenant  = "tenant"
)

// StatsFields lists the values StatsQuery.By takes ("" is no split).
var StatsFields = []string{ByType, ByOutcome, ByAgent, ByTool, ByTag, BySession, ByTenant}

// The group names Stats gives what has no value of its own.
const (
	// GroupOther is every group past the top N, together.
	GroupOther = "(other)"
	// GroupNone is the documents without the field (no agent, no tag).
	GroupNone = "(none)"
	// The outcomes: success true, false, absent.
	OutcomeOK      = "ok"
	OutcomeFailed  = "failed"
	OutcomeUnknown = "unknown"
)

// DefaultTop is how many groups Stats keeps unless StatsQuery.Top says.
const DefaultTop = 5

// maxBuckets bounds the buckets of one answer: an --every too small for
// the range is refused rather than answered with a million rows.
const maxBuckets = 2000

// DistBins is how many equal bins of [0, 1] a Dist counts in.
const DistBins = 5

// StatsQuery asks for the shape over time of the documents matching Expr
// whose timestamps are in [Since, Until).
type StatsQuery struct {
	Expr         string
	Since, Until time.Time
	// Every is the bucket width; 0 chooses one from the range (autoEvery).
	Every time.Duration
	// By splits each bucket by a field of StatsFields; "" does not.
	By string
	// Top is how many groups are kept, the most frequent over the whole
	// range; the rest are summed as GroupOther. 0 is DefaultTop.
	Top int
}

// Stats is what StatsQuery asked for.
type Stats struct {
	Since, Until time.Time
	Every        time.Duration
	By           string
	// Groups are the groups kept, most documents first (ties by name),
	// then GroupOther when any document is in none of them.
	Groups []string
	// Buckets are every bucket of the range, oldest first, empty ones too.
	Buckets []Bucket
	// Total is each group over the whole range (aligned with Groups),
	// All every document of it.
	Total []Agg
	All   Agg
	// Approximate: the percentiles are estimates (OpenSearch's t-digest);
	// counts and sums are exact either way.
	Approximate bool
}

// Bucket is one time bucket: [Start, Start+Every).
type Bucket struct {
	Start time.Time
	All   Agg
	// Groups is aligned with Stats.Groups.
	Groups []Agg
}

// Agg is what is known of a set of documents.
type Agg struct {
	Count int64
	// Failures is the documents whose success is false.
	Failures int64
	// Latency is over the documents that have one.
	Latency Percentiles
	// Reward and Importance are over every document (the index holds a
	// value for each).
	Reward, Importance Dist
}

// FailureRate is Failures over Count (0 with no documents).
func (a Agg) FailureRate() float64 {
	if a.Count == 0 {
		return 0
	}
	return float64(a.Failures) / float64(a.Count)
}

// Percentiles are nearest-rank percentiles of latency in milliseconds:
// Pn is the smallest value at least n% of the N values are at or below.
type Percentiles struct {
	N             int64
	P50, P95, P99 float64
}

// Dist is a mean and a histogram over [0, 1] in DistBins equal bins (a
// value of 1 is in the last).
type Dist struct {
	Mean float64
	Bins [DistBins]int64
}

// bin is the bin of Dist that v falls in.
func bin(v float64) int { return max(0, min(DistBins-1, int(v*DistBins))) }

// Rank is the 1-based rank of the nearest-rank percentile p (0–100) of n
// sorted values.
func Rank(p, n int64) int64 { return max(1, (p*n+99)/100) }

// StatsReader is the part of a Reader that answers Stats.
type StatsReader interface {
	Stats(ctx context.Context, q StatsQuery) (*Stats, error)
}

// everyLadder is the bucket widths autoEvery chooses from.
var everyLadder = []time.Duration{
	time.Minute, 5 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour,
	3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour, 7 * 24 * time.Hour,
}

// autoEvery is the narrowest width of the ladder that cuts d into at most
// 60 buckets.
func autoEvery(d time.Duration) time.Duration { return EveryFor(d, 60) }

// Resolve fills in the defaults of q at now: the last 24 hours, the bucket
// width, the top. Buckets start at multiples of Every since the Unix epoch
// (UTC), so the hours of a day are its buckets; Since moves back to the
// start of its bucket. A query it cannot answer is an error saying why.
func (q StatsQuery) Resolve(now time.Time) (StatsQuery, error) {
	if q.Until.IsZero() {
		q.Until = now
	}
	if q.Since.IsZero() {
		q.Since = q.Until.Add(-24 * time.Hour)
	}
	if !q.Since.Before(q.Until) {
		return q, fmt.Errorf("stats: the range is empty (since %s is not before until %s)", q.Since.UTC().Format(time.RFC3339), q.Until.UTC().Format(time.RFC3339))
	}
	if q.Every < 0 || q.Every > 0 && q.Every < time.Millisecond {
		return q, fmt.Errorf("stats: every %s: want a duration of a millisecond or more", q.Every)
	}
	if q.Every == 0 {
		q.Every = autoEvery(q.Until.Sub(q.Since))
	}
	q.Since = q.Since.Truncate(q.Every)
	if n := q.Until.Sub(q.Since) / q.Every; n > maxBuckets {
		return q, fmt.Errorf("stats: every %s cuts the range into %d buckets, over %d: choose a wider --every or a shorter range", q.Every, n, maxBuckets)
	}
	if q.By != "" && !slices.Contains(StatsFields, q.By) {
		return q, fmt.Errorf("stats: by %q: want one of %v", q.By, StatsFields)
	}
	if q.Top < 0 {
		return q, fmt.Errorf("stats: top %d: want 1 or more", q.Top)
	}
	if q.Top == 0 {
		q.Top = DefaultTop
	}
	return q, nil
}

// NumBuckets is how many buckets the resolved q has.
func (q StatsQuery) NumBuckets() int {
	return int((q.Until.Sub(q.Since) + q.Every - 1) / q.Every)
}

// NewStats is the empty answer to the resolved q with groups: every bucket
// there, every Agg zero, for a backend to fill in.
func NewStats(q StatsQuery, groups []string) *Stats {
	s := &Stats{Since: q.Since, Until: q.Until, Every: q.Every, By: q.By, Groups: groups, Total: make([]Agg, len(groups))}
	s.Buckets = make([]Bucket, q.NumBuckets())
	for i := range s.Buckets {
		s.Buckets[i] = Bucket{Start: q.Since.Add(time.Duration(i) * q.Every), Groups: make([]Agg, len(groups))}
	}
	return s
}

// BucketOf is the index of the bucket of a timestamp in milliseconds, or
// -1 outside the range.
func (s *Stats) BucketOf(ms int64) int {
	lo, hi := s.Since.UnixMilli(), s.Until.UnixMilli()
	if ms < lo || ms >= hi {
		return -1
	}
	return int((ms - lo) / s.Every.Milliseconds())
}

// GroupIndex is the index in Groups of a document's group name: its own,
// else GroupOther's; -1 when neither is there.
func (s *Stats) GroupIndex(name string) int {
	if i := slices.Index(s.Groups, name); i >= 0 {
		return i
	}
	return slices.Index(s.Groups, GroupOther)
}

// TopGroups is the top n of counts (group name → documents), most first,
// ties by name, then GroupOther when any name is left out.
func TopGroups(counts map[string]int64, n int) []string {
	names := make([]string, 0, len(counts))
	for g := range counts {
		names = append(names, g)
	}
	slices.SortFunc(names, func(a, b string) int {
		if counts[a] != counts[b] {
			return int(min(1, max(-1, counts[b]-counts[a])))
		}
		return cmpString(a, b)
	})
	if len(names) > n {
		return append(names[:n:n], GroupOther)
	}
	return names
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// EveryFor is the narrowest width of the ladder that cuts d into at most
// n buckets (at least one bucket a column of a chart n wide).
func EveryFor(d time.Duration, n int) time.Duration {
	for _, e := range everyLadder {
		if int64(d/e) <= int64(n) {
			return e
		}
	}
	return everyLadder[len(everyLadder)-1]
}
