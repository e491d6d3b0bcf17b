package mem0

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strconv"
	"time"

	"github.com/memcluster/memcluster/apiv1"
	"github.com/memcluster/memcluster/memory"
)

// metaAppID keeps mem0's app_id on a memory: memcluster has no apps, so it is a label only (not filterable).
const metaAppID = "mem0_app_id"

// memoryOut is a memory as mem0 answers it. run_id and session_id carry the same value: the platform's get
// and list answer session_id, its search run_id.
type memoryOut struct {
	ID             string            `json:"id"`
	Memory         string            `json:"memory"`
	Hash           string            `json:"hash"`
	UserID         *string           `json:"user_id"`
	AgentID        *string           `json:"agent_id"`
	AppID          *string           `json:"app_id"`
	RunID          *string           `json:"run_id"`
	SessionID      *string           `json:"session_id"`
	Metadata       map[string]string `json:"metadata"`
	Categories     []string          `json:"categories"`
	Immutable      bool              `json:"immutable"`
	ExpirationDate *string           `json:"expiration_date"`
	CreatedAt      time.Time         `json:"created_at"`
	UpdatedAt      time.Time         `json:"updated_at"`
	Score          *float64          `json:"score,omitempty"`
	// Type is memcluster's kind of memory (episodic, semantic, …): an addition mem0's clients ignore.
	Type string `json:"type"`
}

func orNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func toMem0(m memory.Memory) memoryOut {
	sum := md5.Sum([]byte(m.Text))
	meta := map[string]string{}
	for k, v := range m.Metadata {
		if k != metaAppID {
			meta[k] = v
		}
	}
	tags := m.Tags
	if tags == nil {
		tags = []string{}
	}
	return memoryOut{ID: memID(m.UserID, m.ID), Memory: m.Text, Hash: hex.EncodeToString(sum[:]),
		UserID: orNil(m.UserID), AgentID: orNil(m.AgentID), AppID: orNil(m.Metadata[metaAppID]),
		RunID: orNil(m.RunID), SessionID: orNil(m.RunID), Metadata: meta, Categories: tags,
		CreatedAt: m.CreatedAt, UpdatedAt: m.CreatedAt, Type: string(m.Type)}
}

func searchHits(rs []apiv1.SearchResult) []memoryOut {
	out := make([]memoryOut, len(rs))
	for i, r := range rs {
		out[i] = toMem0(r.Memory)
		s := r.Score
		out[i].Score = &s
	}
	return out
}

// metadataIn turns mem0's free-form metadata into memcluster's string map: strings as they are, numbers and
// booleans as their JSON text; nested values cannot be kept and are refused.
func metadataIn(m map[string]any, appID string) (map[string]string, error) {
	out := map[string]string{}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch v := m[k].(type) {
		case string:
			out[k] = v
		case bool:
			out[k] = strconv.FormatBool(v)
		case json.Number:
			out[k] = v.String()
		case float64:
			out[k] = strconv.FormatFloat(v, 'g', -1, 64)
		case nil:
		default:
			return nil, invalidf("metadata.%s: memcluster metadata values are strings, numbers or booleans, not nested values", k)
		}
	}
	if appID != "" {
		out[metaAppID] = appID
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}
