package openclaw

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"

	"github.com/titanous/json5"
	"github.com/valyala/fastjson"

	"github.com/clawledger/clawledger"
)

// decodeLenient decodes standard JSON, falling back to JSON5 (OpenClaw reads
// its own files with JSON5, so hand-edited files may use it), once data is
// known to nest no deeper than MaxJSONDepth.
func decodeLenient(data []byte, v any) error {
	if err := CheckDepth(data); err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err == nil {
		return nil
	}
	var doc any
	if err := json5.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("neither JSON nor JSON5: %v", err)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

type rawCronJob struct {
	ID          flexString      `json:"id"`
	AgentID     flexString      `json:"agentId"`
	SessionKey  flexString      `json:"sessionKey"`
	Name        flexString      `json:"name"`
	Description flexString      `json:"description"`
	Enabled     *flexBool       `json:"enabled"`
	CreatedAtMs json.RawMessage `json:"createdAtMs"`
	CreatedAt   json.RawMessage `json:"createdAt"`
	UpdatedAtMs json.RawMessage `json:"updatedAtMs"`
	UpdatedAt   json.RawMessage `json:"updatedAt"`
	Schedule    json.RawMessage `json:"schedule"`
	Payload     json.RawMessage `json:"payload"`
	Prompt      flexString      `json:"prompt"` // an older shape keeps the prompt at the top
	Delivery    json.RawMessage `json:"delivery"`
	State       json.RawMessage `json:"state"`
}

// CronJobFromJSON decodes one job object (a database's job_json); one
// nested deeper than MaxJSONDepth is refused.
func CronJobFromJSON(raw []byte) (clawledger.CronJob, error) {
	if err := CheckDepth(raw); err != nil {
		return clawledger.CronJob{}, err
	}
	var r rawCronJob
	if err := json.Unmarshal(raw, &r); err != nil {
		return clawledger.CronJob{}, err
	}
	j := clawledger.CronJob{
		ID:          string(r.ID),
		AgentID:     string(r.AgentID),
		SessionKey:  string(r.SessionKey),
		Name:        string(r.Name),
		Description: string(r.Description),
		Enabled:     r.Enabled == nil || bool(*r.Enabled),
		CreatedAt:   firstTimestamp(r.CreatedAtMs, r.CreatedAt),
		UpdatedAt:   firstTimestamp(r.UpdatedAtMs, r.UpdatedAt),
		Schedule:    r.Schedule,
		Payload:     r.Payload,
		Delivery:    r.Delivery,
		State:       r.State,
		Raw:         json.RawMessage(raw),
	}
	if len(j.Payload) == 0 && r.Prompt != "" {
		j.Payload, _ = json.Marshal(map[string]string{"kind": "agentTurn", "message": string(r.Prompt)})
	}
	return j, nil
}

func firstTimestamp(raws ...json.RawMessage) int64 {
	for _, r := range raws {
		if t := Timestamp(r); t != 0 {
			return t
		}
	}
	return 0
}

// ParseCronJobs decodes cron/jobs.json: {"version":1,"jobs":[...]} or a bare
// array of jobs, in JSON or JSON5.
func ParseCronJobs(data []byte) ([]clawledger.CronJob, error) {
	var raws []json.RawMessage
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '[' {
		if err := decodeLenient(data, &raws); err != nil {
			return nil, err
		}
	} else {
		var doc struct {
			Jobs []json.RawMessage `json:"jobs"`
		}
		if err := decodeLenient(data, &doc); err != nil {
			return nil, err
		}
		raws = doc.Jobs
	}
	var jobs []clawledger.CronJob
	for _, r := range raws {
		j, err := CronJobFromJSON(r)
		if err != nil || j.ID == "" {
			continue
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// ParseCronState decodes the jobs-state.json sidecar into job id -> state,
// accepting {"jobs":{id:state}}, {"jobs":[{id,state}]} and a bare {id:state}.
func ParseCronState(data []byte) (map[string]json.RawMessage, error) {
	var doc map[string]json.RawMessage
	if err := decodeLenient(data, &doc); err != nil {
		return nil, err
	}
	out := map[string]json.RawMessage{}
	jobs, ok := doc["jobs"]
	if !ok {
		for k, v := range doc {
			if len(v) > 0 && v[0] == '{' {
				out[k] = v
			}
		}
		return out, nil
	}
	var byID map[string]json.RawMessage
	if json.Unmarshal(jobs, &byID) == nil {
		for k, v := range byID {
			out[k] = stateOf(v)
		}
		return out, nil
	}
	var list []struct {
		ID    flexString      `json:"id"`
		JobID flexString      `json:"jobId"`
		State json.RawMessage `json:"state"`
	}
	if err := json.Unmarshal(jobs, &list); err != nil {
		return nil, err
	}
	for _, x := range list {
		if id := cmp.Or(string(x.ID), string(x.JobID)); id != "" && len(x.State) > 0 {
			out[id] = x.State
		}
	}
	return out, nil
}

// stateOf unwraps {"state":{...}} when a sidecar nests it.
func stateOf(v json.RawMessage) json.RawMessage {
	var w struct {
		State json.RawMessage `json:"state"`
	}
	if json.Unmarshal(v, &w) == nil && len(w.State) > 0 && w.State[0] == '{' {
		return w.State
	}
	return v
}

// ParseCronRun decodes one line of a cron run log. Lines whose action is not
// "finished" decode too (the caller decides what to keep).
func ParseCronRun(line []byte) (*clawledger.CronRun, error) {
	var run *clawledger.CronRun
	err := parseObject(line, func(v *fastjson.Value, repaired bool) {
		run = cronRunOf(v)
		run.Repaired = repaired
	})
	return run, err
}

func cronRunOf(v *fastjson.Value) *clawledger.CronRun {
	run := &clawledger.CronRun{
		Ts:             cmp.Or(timestampOf(v, "ts"), timestampOf(v, "timestamp")),
		JobID:          str(v, "jobId"),
		Action:         str(v, "action"),
		Status:         str(v, "status"),
		Error:          errorText(v.Get("error")),
		Summary:        str(v, "summary"),
		DeliveryStatus: str(v, "deliveryStatus"),
		SessionID:      str(v, "sessionId"),
		SessionKey:     str(v, "sessionKey"),
		RunAt:          timestampOf(v, "runAtMs"),
		DurationMs:     integer(v, "durationMs"),
		NextRunAt:      timestampOf(v, "nextRunAtMs"),
		Model:          str(v, "model"),
		Provider:       str(v, "provider"),
	}
	if d := v.Get("delivered"); d != nil && (d.Type() == fastjson.TypeTrue || d.Type() == fastjson.TypeFalse) {
		b := d.Type() == fastjson.TypeTrue
		run.Delivered = &b
	}
	if u := v.Get("usage"); u != nil && u.Type() == fastjson.TypeObject {
		run.Usage = usageOf(u)
	}
	return run
}
