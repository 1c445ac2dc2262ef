package ui

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"engram/ui/topics"
	"engram/ui/uikit"
)

// avroMessages are two Avro messages as the Kafka bus hands them to the
// view (cli's busMessage): one decoded to its event's JSON, with its
// schema id, and one whose schema id the registry does not know, its wire
// bytes as they are and the reason after its own headers.
func avroMessages(at time.Time) []uikit.BusMessage {
	signal := `{"eventId":"cs-sig-1","timestamp":"2026-05-08T10:00:02.000Z","type":"environmental_observation","subtype":"OperationalSignal","context":{"sessionId":"system:ambient:telemetry","source":"system"},"input":{"text":"Error rate above 5% on checkout"},"payload":{"source":"prometheus","severity":"high","affectedServices":["checkout"]}}`
	const unknownID = 0x7ffffff2
	wire := append(binary.BigEndian.AppendUint32([]byte{0}, unknownID), 0x0e, 'c', 's', '-', 's', 'i', 'g', 0x1b, '[', '2', 'J')
	return []uikit.BusMessage{
		{Topic: "experience.raw", Partition: 4, Offset: 9120, Time: at, Key: "cs-sig-1", Value: []byte(signal),
			Headers: []uikit.BusHeader{{Key: "(avro schema id)", Value: "7"}}},
		{Topic: "experience.raw", Partition: 4, Offset: 9121, Time: at.Add(time.Second), Key: "cs-sig-2", Value: wire,
			Headers: []uikit.BusHeader{
				{Key: "(avro schema id)", Value: fmt.Sprint(unknownID)},
				{Key: "(avro error)", Value: fmt.Sprintf("avro: schema id %d is unknown to the schema registry http://registry:8080/apis/ccompat/v7: HTTP 404: No content with id: %d", unknownID, unknownID)},
			}},
	}
}

// TestGoldenTopicsAvro: the Topics view at 80x24 with a decoded Avro
// message beside one that does not decode (its bytes shown escaped, never
// raw), and that one opened: its schema id and why it is not decoded.
func TestGoldenTopicsAvro(t *testing.T) {
	t.Run("list_80x24", func(t *testing.T) {
		m, b := topicsModel(t, 80, 24)
		feed(t, m, b, avroMessages(testNow))
		send(t, m, topics.StatsMsg{Stats: grown(b.stats, 12, 8), At: testNow.Add(4 * time.Second)})
		out := screen(m)
		if !strings.Contains(out, "cs-sig-1") || !strings.Contains(out, "cs-sig-2") || strings.Contains(out, "\x1b[2J") {
			t.Fatalf("the two Avro messages, escaped:\n%s", out)
		}
		golden.RequireEqual(t, []byte(out))
	})
	t.Run("undecodable_80x24", func(t *testing.T) {
		m, b := topicsModel(t, 80, 24)
		feed(t, m, b, avroMessages(testNow))
		press(t, m, "enter") // the newest: the undecodable one
		out := screen(m)
		if !strings.Contains(out, `"(avro error)": "avro: schema id 2147483634 is unknown to the schema`) || strings.Contains(out, "\x1b[2J") {
			t.Fatalf("the opened message does not say why it is not decoded:\n%s", out)
		}
		golden.RequireEqual(t, []byte(out))
	})
}
