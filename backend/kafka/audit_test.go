package kafka

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"engram/model"
)

// The audit value put together around a notification is byte for byte
// what json.Marshal of the auditRecord gives.
func TestAuditValueAsMarshalled(t *testing.T) {
	payloads := []any{
		model.Enriched{EventID: "e<1>&\u2028", ObjectStorageKey: "tab\there \"quoted\" ünïcode", ImportanceScore: 0.125, Tags: []string{"a", "<b>"}},
		model.Indexed{EventID: "e2", Timestamp: "2026-03-01T00:00:00Z"},
		map[string]any{"nested": map[string]any{"x": []int{1, 2}}, "s": "</script>"},
	}
	for _, topic := range []string{"experience.enriched", `odd"topic\name`} {
		for _, p := range payloads {
			v, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			kr := &kgo.Record{Topic: topic, Value: v}
			fast, err := auditValue(kr, "2026-12-01T20:00:00.000Z", true)
			if err != nil {
				t.Fatal(err)
			}
			slow, err := auditValue(kr, "2026-12-01T20:00:00.000Z", false)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(fast, slow) {
				t.Errorf("topic %q:\n got  %s\n want %s", topic, fast, slow)
			}
		}
	}
}
