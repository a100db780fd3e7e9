package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawledger/clawledger/ledger"
	"github.com/clawledger/clawledger/view"
)

// Tool names.
const (
	toolSearch   = "search"
	toolAround   = "around"
	toolEntry    = "get_entry"
	toolSessions = "sessions"
	toolUsage    = "usage"
	toolTools    = "tools"
	toolQuery    = "episodes_query"
	toolReplay   = "episodes_replay"
	toolAppend   = "episodes_append"
)

// anyJSON is the schema of a value that may be any JSON (a payload, refs).
var anyJSON = &jsonschema.Schema{Types: []string{"null", "boolean", "number", "string", "array", "object"}}

// typeSchemas are the schemas of types the inference gets wrong: raw JSON
// (inferred as bytes), and view.Scope, embedded in events answers, whose
// field of its own name Go's visibility rules hide from the inference.
var typeSchemas = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[json.RawMessage](): anyJSON,
	reflect.TypeFor[view.Scope](): {Type: "object", Properties: map[string]*jsonschema.Schema{
		"scope": {Types: []string{"null", "string"}, Description: "the scope read (null: every scope)"}, "global": {Type: "boolean"}}},
}

// schemaFor is T's JSON Schema, with adjust's changes (enums, bounds).
func schemaFor[T any](adjust map[string]func(*jsonschema.Schema)) (*jsonschema.Schema, error) {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: typeSchemas})
	if err != nil {
		return nil, err
	}
	for name, f := range adjust {
		p := s.Properties[name]
		if p == nil {
			return nil, errors.New("schema: no property " + name)
		}
		f(p)
	}
	return s, nil
}

func enum(values ...string) func(*jsonschema.Schema) {
	return func(s *jsonschema.Schema) {
		for _, v := range values {
			s.Enum = append(s.Enum, v)
		}
	}
}

func bounds(lo, hi int) func(*jsonschema.Schema) {
	return func(s *jsonschema.Schema) {
		s.Minimum, s.Maximum = jsonschema.Ptr(float64(lo)), jsonschema.Ptr(float64(hi))
	}
}

func defaultTo(v any) func(*jsonschema.Schema) {
	return func(s *jsonschema.Schema) { s.Default, _ = json.Marshal(v) }
}

// both applies several changes to one property.
func both(fs ...func(*jsonschema.Schema)) func(*jsonschema.Schema) {
	return func(s *jsonschema.Schema) {
		for _, f := range fs {
			f(s)
		}
	}
}

// tool describes one tool: its name, description, whether it only reads,
// the changes to its schemas, and its handler.
type tool[In, Out any] struct {
	name, title, description string
	readOnly                 bool
	adjust                   map[string]func(*jsonschema.Schema)
	handle                   func(ctx context.Context, in In) (*Out, string, error)
}

// add adds t to srv with its schemas; a handler's error becomes a tool
// error the model can act on, and its text the result's text content.
func (t tool[In, Out]) add(srv *mcp.Server, s *server) error {
	in, err := schemaFor[In](t.adjust)
	if err != nil {
		return err
	}
	s.bound(in)
	out, err := schemaFor[Out](nil)
	if err != nil {
		return err
	}
	hints := &mcp.ToolAnnotations{Title: t.title, ReadOnlyHint: t.readOnly, OpenWorldHint: jsonschema.Ptr(false)}
	if !t.readOnly {
		hints.DestructiveHint = jsonschema.Ptr(false) // events are only ever appended
		hints.IdempotentHint = true                   // on their event id
	}
	mcp.AddTool(srv, &mcp.Tool{Name: t.name, Title: t.title, Description: t.description, Annotations: hints, InputSchema: in, OutputSchema: out},
		func(ctx context.Context, _ *mcp.CallToolRequest, args In) (*mcp.CallToolResult, *Out, error) {
			res, text, err := t.handle(ctx, args)
			if err != nil {
				return nil, nil, s.toolError(err)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, res, nil
		})
	return nil
}

// bound limits the arguments every tool may have alike: max_bytes to the
// budgets, agent and agent_id to the server's agents.
func (s *server) bound(in *jsonschema.Schema) {
	if p := in.Properties["max_bytes"]; p != nil {
		bounds(MinBudget, MaxBudget)(p)
	}
	for _, name := range []string{"agent", "agent_id"} {
		if p := in.Properties[name]; p != nil && len(s.agents) > 0 {
			enum(s.agents...)(p)
		}
	}
}

// addTools adds every tool (episodes_append only when writes are allowed).
func (s *server) addTools(srv *mcp.Server) error {
	adders := []interface {
		add(*mcp.Server, *server) error
	}{s.searchTool(), s.aroundTool(), s.entryTool(), s.sessionsTool(), s.usageTool(), s.toolsTool(), s.queryTool(), s.replayTool()}
	if s.writes {
		adders = append(adders, s.appendTool())
	}
	for _, a := range adders {
		if err := a.add(srv, s); err != nil {
			return err
		}
	}
	return nil
}

// budgeted is the argument every tool that reads has: its result's budget.
type budgeted struct {
	MaxBytes int `json:"max_bytes,omitempty" jsonschema:"byte budget of the result (default 16384)"`
}

// span is the time range a listing is narrowed to.
type span struct {
	Since string `json:"since,omitempty" jsonschema:"only since this time: YYYY-MM-DD, an RFC 3339 time, or an age such as 12h or 7d"`
	Until string `json:"until,omitempty" jsonschema:"only before this time (a date includes its whole day)"`
}

// listing reads what the listings take alike: the agent asked for,
// within the server's scope, and the span in loc (see ledger.ParseRange).
func (s *server) listing(agent string, r span, loc *time.Location) (scoped string, from, to int64, err error) {
	if scoped, err = s.agent("agent", agent); err != nil {
		return "", 0, 0, err
	}
	from, to, err = ledger.ParseRange(r.Since, r.Until, time.Now(), loc)
	return scoped, from, to, err
}
