package openclaw

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/jsondepth"
	"github.com/titanous/json5"
)

type rawIndexEntry struct {
	SessionID        flexString      `json:"sessionId"`
	ActiveSessionID  flexString      `json:"activeSessionId"`
	UpdatedAt        json.RawMessage `json:"updatedAt"`
	SessionFile      flexString      `json:"sessionFile"`
	ChatType         flexString      `json:"chatType"`
	Channel          flexString      `json:"channel"`
	Provider         flexString      `json:"provider"` // old name of channel
	LastChannel      flexString      `json:"lastChannel"`
	LastProvider     flexString      `json:"lastProvider"` // old name of lastChannel
	LastTo           flexString      `json:"lastTo"`
	Label            flexString      `json:"label"`
	DisplayName      flexString      `json:"displayName"`
	Subject          flexString      `json:"subject"`
	GroupID          flexString      `json:"groupId"`
	ModelProvider    flexString      `json:"modelProvider"`
	Model            json.RawMessage `json:"model"`
	ThinkingLevel    flexString      `json:"thinkingLevel"`
	SpawnedBy        flexString      `json:"spawnedBy"`
	ParentSessionKey flexString      `json:"parentSessionKey"`
	InputTokens      flexInt         `json:"inputTokens"`
	OutputTokens     flexInt         `json:"outputTokens"`
	TotalTokens      flexInt         `json:"totalTokens"`
	CacheRead        flexInt         `json:"cacheRead"`
	CacheWrite       flexInt         `json:"cacheWrite"`
	ContextTokens    flexInt         `json:"contextTokens"`
	CompactionCount  flexInt         `json:"compactionCount"`
	TokenCounts      *struct {
		Input  flexInt `json:"input"`
		Output flexInt `json:"output"`
		Total  flexInt `json:"total"`
	} `json:"tokenCounts"`
}

// IndexEntryFromJSON decodes one SessionEntry object (a database's
// entry_json), applying the field renames OpenClaw applies on load; one
// nested deeper than MaxJSONDepth is refused.
func IndexEntryFromJSON(key string, raw []byte) (clawledger.IndexEntry, error) {
	if err := CheckDepth(raw); err != nil {
		return clawledger.IndexEntry{}, err
	}
	return indexEntryFromJSON(key, raw)
}

// indexEntryFromJSON is IndexEntryFromJSON of an entry of a document
// already checked.
func indexEntryFromJSON(key string, raw []byte) (clawledger.IndexEntry, error) {
	var r rawIndexEntry
	if err := json.Unmarshal(raw, &r); err != nil {
		return clawledger.IndexEntry{}, err
	}
	e := clawledger.IndexEntry{
		Key:              key,
		SessionID:        cmp.Or(string(r.SessionID), string(r.ActiveSessionID)),
		UpdatedAt:        Timestamp(r.UpdatedAt),
		SessionFile:      string(r.SessionFile),
		ChatType:         string(r.ChatType),
		Channel:          cmp.Or(string(r.Channel), string(r.Provider)),
		LastChannel:      cmp.Or(string(r.LastChannel), string(r.LastProvider)),
		LastTo:           string(r.LastTo),
		Label:            string(r.Label),
		DisplayName:      string(r.DisplayName),
		Subject:          string(r.Subject),
		GroupID:          string(r.GroupID),
		ModelProvider:    string(r.ModelProvider),
		ThinkingLevel:    string(r.ThinkingLevel),
		SpawnedBy:        string(r.SpawnedBy),
		ParentSessionKey: string(r.ParentSessionKey),
		InputTokens:      int64(r.InputTokens),
		OutputTokens:     int64(r.OutputTokens),
		TotalTokens:      int64(r.TotalTokens),
		CacheRead:        int64(r.CacheRead),
		CacheWrite:       int64(r.CacheWrite),
		ContextTokens:    int64(r.ContextTokens),
		CompactionCount:  int64(r.CompactionCount),
	}
	// model is a string, or {provider, model} in the wrapped shape
	if m := bytes.TrimSpace(r.Model); len(m) > 0 {
		if m[0] == '{' {
			var mm struct {
				Provider flexString `json:"provider"`
				Model    flexString `json:"model"`
			}
			if json.Unmarshal(m, &mm) == nil {
				e.Model = string(mm.Model)
				e.ModelProvider = cmp.Or(e.ModelProvider, string(mm.Provider))
			}
		} else {
			var s flexString
			_ = json.Unmarshal(m, &s)
			e.Model = string(s)
		}
	}
	if r.TokenCounts != nil && e.InputTokens == 0 && e.OutputTokens == 0 {
		e.InputTokens, e.OutputTokens, e.TotalTokens = int64(r.TokenCounts.Input), int64(r.TokenCounts.Output), int64(r.TokenCounts.Total)
	}
	return e, nil
}

// indexCap is MaxIndexBytes, but in tests.
var indexCap int64 = MaxIndexBytes

// ParseSessionIndex reads a sessions.json: a flat object sessionKey ->
// SessionEntry, or the wrapped {"version":2,"agents":{...}} shape. Standard
// JSON is decoded one entry at a time (indexes reach tens of MB); anything
// else falls back to a JSON5 parse, as OpenClaw's own loader does. Entries
// without a session id are dropped. An index over MaxIndexBytes, or nested
// deeper than MaxJSONDepth, is refused (a *TooBigError, IsTooDeep).
func ParseSessionIndex(r io.ReadSeeker) ([]clawledger.IndexEntry, error) {
	entries, err := streamIndex(jsondepth.Reader(&capReader{r: r, max: indexCap}, MaxJSONDepth))
	switch {
	case err == nil:
		return entries, nil
	case IsTooDeep(err), isTooBig(err):
		return nil, err
	}
	if _, serr := r.Seek(0, io.SeekStart); serr != nil {
		return nil, err
	}
	// the JSON5 fallback needs the whole document
	data, rerr := ReadWhole(r, indexCap)
	if rerr != nil {
		return nil, rerr
	}
	if err := CheckDepth(data); err != nil {
		return nil, err
	}
	var doc map[string]any
	if jerr := json5.Unmarshal(data, &doc); jerr != nil {
		return nil, fmt.Errorf("sessions index is neither JSON nor JSON5: %v", jerr)
	}
	if inner, ok := doc["agents"].(map[string]any); ok && doc["version"] != nil {
		doc = inner
	}
	var out []clawledger.IndexEntry
	for key, v := range doc {
		obj, ok := v.(map[string]any)
		if !ok {
			continue
		}
		b, _ := json.Marshal(obj)
		if e, err := indexEntryFromJSON(key, b); err == nil && e.SessionID != "" {
			out = append(out, e)
		}
	}
	return out, nil
}

func streamIndex(r io.Reader) ([]clawledger.IndexEntry, error) {
	dec := json.NewDecoder(r)
	var out []clawledger.IndexEntry
	if err := streamObject(dec, func(key string) error {
		if key == "agents" {
			// the wrapped shape: {"version":2,"agents":{key: entry}}
			return streamObject(dec, func(k string) error { return decodeIndexValue(dec, k, &out) })
		}
		return decodeIndexValue(dec, key, &out)
	}); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after the index object")
	}
	return out, nil
}

func decodeIndexValue(dec *json.Decoder, key string, out *[]clawledger.IndexEntry) error {
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return err
	}
	if len(raw) == 0 || raw[0] != '{' {
		return nil // "version": 2 and the like
	}
	e, err := indexEntryFromJSON(key, raw)
	if err == nil && e.SessionID != "" {
		*out = append(*out, e)
	}
	return nil
}

// streamObject reads one JSON object from dec, calling fn with each key; fn
// must consume the key's value.
func streamObject(dec *json.Decoder, fn func(key string) error) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("expected a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, ok := tok.(string)
		if !ok {
			return fmt.Errorf("expected an object key")
		}
		if err := fn(key); err != nil {
			return err
		}
	}
	_, err = dec.Token() // '}'
	return err
}
