package detail

import "strings"

// indexHeld lists the archived members the index document holds
// (docs/data-contract.md, The index document), relative to the event. Members under a listed one are held too.
var indexHeld = map[string]bool{
	"eventId": true, "timestamp": true, "type": true,
	"context.sessionId": true, "context.userId": true, "context.agentId": true,
	"context.turnId": true, "context.tenantId": true, "context.traceId": true,
	"input.text": true, "input.embedding": true, "input.structured": true,
	"importanceScore": true, "evaluation.rewardScore": true,
	"internalState.confidence": true, "objectStorageKey": true, "tags": true,
	"action.tool": true, "result.success": true, "result.latencyMs": true,
}

// indexHolds: the index document holds the archived member at rel.
func indexHolds(rel string) bool {
	for p := rel; p != ""; {
		if indexHeld[p] {
			return true
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			return false
		}
		p = p[:i]
	}
	return false
}
