package openclaw

import (
	"cmp"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"unicode/utf8"

	"github.com/clawledger/clawledger"
)

// SubagentRunsFile is the file-era registry of sub-agent runs, relative to
// the state dir; 2026.7+ keeps the runs in the state database's
// subagent_runs instead.
const SubagentRunsFile = "subagents/runs.json"

// ReadSubagentRuns reads a state dir's subagents/runs.json (nil when there
// is none), masked.
func ReadSubagentRuns(fsys FS, dir string, m Masker) ([]clawledger.SubagentLink, error) {
	data, _, err := readSmall(fsys, filepath.Join(dir, filepath.FromSlash(SubagentRunsFile)), MaxConfigBytes)
	if err != nil || data == nil {
		return nil, err
	}
	links, err := ParseSubagentRuns(data, m)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", SubagentRunsFile, err)
	}
	return links, nil
}

// ParseSubagentRuns decodes subagents/runs.json ({"version":1|2,"runs":
// {runId: record}}) into parent/child links, oldest first. Records without
// a child or a requester session are skipped, as OpenClaw skips them.
func ParseSubagentRuns(data []byte, m Masker) ([]clawledger.SubagentLink, error) {
	v, err := DecodeConfig(data)
	if err != nil {
		return nil, err
	}
	runs, _ := lookup(v, "runs").(map[string]any)
	var out []clawledger.SubagentLink
	for id, r := range runs {
		if l, ok := subagentLink(id, r, m); ok {
			l.Source = SubagentRunsFile
			out = append(out, l)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].CreatedAt != out[j].CreatedAt {
			return out[i].CreatedAt < out[j].CreatedAt
		}
		return out[i].RunID < out[j].RunID
	})
	return out, nil
}

// SubagentRun decodes one run record (a value of runs.json's runs, or a
// subagent_runs row's payload_json); runID is its key.
func SubagentRun(runID string, record []byte, m Masker) (clawledger.SubagentLink, bool) {
	v, err := DecodeConfig(record)
	if err != nil {
		return clawledger.SubagentLink{}, false
	}
	return subagentLink(runID, v, m)
}

func subagentLink(runID string, r any, m Masker) (clawledger.SubagentLink, bool) {
	if _, ok := r.(map[string]any); !ok {
		return clawledger.SubagentLink{}, false
	}
	r = m.Tree(r)
	l := clawledger.SubagentLink{
		RunID:                cmp.Or(lookupString(r, "runId"), runID),
		ChildSessionKey:      lookupString(r, "childSessionKey"),
		RequesterSessionKey:  lookupString(r, "requesterSessionKey"),
		ControllerSessionKey: lookupString(r, "controllerSessionKey"),
		Label:                lookupString(r, "label"),
		Task:                 truncateText(cmp.Or(lookupString(r, "task"), lookupString(r, "taskName")), clawledger.MaxTaskText),
		Model:                lookupString(r, "model"),
		Status:               cmp.Or(lookupString(r, "outcome", "status"), lookupString(r, "lastStatus")),
		Error:                truncateText(lookupString(r, "outcome", "error"), clawledger.MaxTaskText),
		CreatedAt:            timestampOfTree(lookup(r, "createdAt")),
		StartedAt:            timestampOfTree(lookup(r, "startedAt")),
		EndedAt:              timestampOfTree(lookup(r, "endedAt")),
	}
	return l, l.ChildSessionKey != "" && l.RequesterSessionKey != ""
}

// timestampOfTree reads a decoded epoch-ms number or ISO time.
func timestampOfTree(v any) int64 {
	switch x := v.(type) {
	case string:
		return timestampText(x)
	case json.Number:
		return timestampText(string(x))
	}
	return 0
}

// truncateText cuts s to at most max bytes on a rune boundary.
func truncateText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	for max > 0 && !utf8.RuneStart(s[max]) {
		max--
	}
	return s[:max]
}
