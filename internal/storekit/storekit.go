// Package storekit holds the Go both ledger stores (sqlite, postgres)
// run alike around their queries: what does not depend on the driver or
// the SQL dialect.
package storekit

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/clawledger/clawledger"
)

// NewestMigration is the version of the newest migration in fsys's
// migrations folder (goose names: "<version>_<name>.sql"), 0 if none.
func NewestMigration(fsys fs.FS) int64 {
	names, _ := fs.Glob(fsys, "migrations/*.sql") // a valid pattern
	var v int64
	for _, n := range names {
		var x int64
		if _, err := fmt.Sscanf(path.Base(n), "%d_", &x); err == nil && x > v {
			v = x
		}
	}
	return v
}

// LikeEscape escapes LIKE's wildcards (and its escape, a backslash), for a
// pattern written with ESCAPE '\'.
func LikeEscape(s string) string {
	return likeEscaper.Replace(s)
}

var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// RawJSON is a stored JSON text as a raw message (nil when empty).
func RawJSON(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

// NonNil is s, or an empty slice for nil (stored as [] rather than null).
func NonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// SessionStateColumns are the columns of a sessions row after its
// source_id, in the order SessionStateFields lists them.
const SessionStateColumns = `agent_id, session_id, version, cwd, parent_session, name, started_ms, first_ms, last_ms,
	first_user_text, entries, messages, user_messages, assistant_messages, tool_calls, tool_results, tool_errors,
	compactions, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost, models,
	last_entry_id, leaf_id, provider, model, api, thinking_level`

// SessionStateFields are the fields of s that SessionStateColumns hold,
// to scan into or read from; models stands for s.Models as JSON text.
func SessionStateFields(s *clawledger.Session, models *string) []any {
	return []any{&s.AgentID, &s.SessionID, &s.Version, &s.Cwd, &s.ParentSession, &s.Name, &s.StartedAt, &s.FirstAt, &s.LastAt,
		&s.FirstUserText, &s.Entries, &s.Messages, &s.UserMessages, &s.AssistantMessages, &s.ToolCalls, &s.ToolResults, &s.ToolErrors,
		&s.Compactions, &s.InputTokens, &s.OutputTokens, &s.CacheReadTokens, &s.CacheWriteTokens, &s.Cost, models,
		&s.LastEntryID, &s.LeafID, &s.Provider, &s.Model, &s.API, &s.ThinkingLevel}
}

// MemoryIndexFileRow is a row of memory_index_files: a file and the
// memory index it belongs to.
type MemoryIndexFileRow struct {
	Index int64
	clawledger.MemoryIndexFile
}

// AttachMemoryIndexFiles gives each memory index its files, in the rows'
// order.
func AttachMemoryIndexFiles(idx []clawledger.MemoryIndex, files []MemoryIndexFileRow) {
	at := map[int64]int{}
	for i := range idx {
		at[idx[i].ID] = i
	}
	for _, f := range files {
		if i, ok := at[f.Index]; ok {
			idx[i].Files = append(idx[i].Files, f.MemoryIndexFile)
		}
	}
}
