package mcpserver

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/ledger"
	"github.com/clawledger/clawledger/view"
)

// Resource URIs.
const (
	sessionURI      = "clawledger://session/"
	memoryURI       = "clawledger://memory/"
	sessionTemplate = sessionURI + "{id}{?after}"
	memoryTemplate  = memoryURI + "{+path}"
)

func (s *server) addResources(srv *mcp.Server) {
	srv.AddResourceTemplate(&mcp.ResourceTemplate{Name: "session", Title: "A session's conversation", URITemplate: sessionTemplate, MIMEType: "text/markdown",
		Description: "A session's conversation as it stands, filtered (user and assistant text, tool calls as name and target, failed tool results, compactions), as Markdown, each item naming its entry and line. {id} is a session id, a unique prefix, or a transcript path; a long transcript is cut to the byte budget and says which ?after=LINE reads on."},
		s.readSession)
	srv.AddResourceTemplate(&mcp.ResourceTemplate{Name: "memory", Title: "A memory file", URITemplate: memoryTemplate, MIMEType: "text/markdown",
		Description: "A memory file of an agent's workspace (MEMORY.md, USER.md, memory/**/*.md) as the ledger holds it, secrets masked, by its path relative to its state dir as search hits name it (clawledger://memory/workspace/MEMORY.md)."},
		s.readMemory)
}

// resourceError is a failure to read a resource: not found (also what is
// outside the server's scope) as MCP's resource-not-found error, else the
// message the model can act on.
func (s *server) resourceError(uri string, err error) error {
	if clawledger.ErrorCode(err) == clawledger.ENOTFOUND {
		return mcp.ResourceNotFoundError(uri)
	}
	return s.toolError(err)
}

// readSession renders a session's filtered transcript as Markdown, from
// the line after ?after=, cut to the server's budget.
func (s *server) readSession(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	ref, query, _ := strings.Cut(strings.TrimPrefix(uri, sessionURI), "?")
	ref = unescape(ref)
	var after int64
	if v, ok := strings.CutPrefix(query, "after="); ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return nil, s.toolError(clawledger.FieldErrorf("after", "must be a line number, not %q", v))
		}
		after = n
	}
	w := &window{}
	err := s.inScope(func(agent string) error {
		w = &window{}
		return s.svc.Show(ctx, ledger.ShowRequest{Session: ref, Agent: agent, Filtered: true, After: after, Refresh: ledger.QueryRefresh()}, w)
	})
	if err != nil {
		return nil, s.resourceError(uri, err)
	}
	head := renderHead(w.head, after)
	var b strings.Builder
	b.WriteString(head)
	budget := s.budget - len(head) - 200 // the cut's note
	for i, u := range w.units {
		it := *u.Item
		if t, cut := clip(it.Text, 4*maxItemText); cut {
			it.Text = t + fmt.Sprintf("\n[cut at %d of %d bytes: get_entry(session, entry %q) reads it whole]", 4*maxItemText, len(u.Item.Text), it.ID)
		}
		item := renderItem(&it)
		if b.Len()+len(item) > budget && i > 0 {
			line := w.units[i-1].Item.Line
			fmt.Fprintf(&b, "[cut to the %d-byte budget after line %d: read %s%s?after=%d for the rest]\n", s.budget, line, sessionURI, w.head.Session.SessionID, line)
			break
		}
		b.WriteString(item)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: b.String()}}}, nil
}

// renderHead is a session's heading: what it is and what the view leaves out.
func renderHead(h *view.ShowHead, after int64) string {
	var b strings.Builder
	x := h.Session
	fmt.Fprintf(&b, "# Session %s\n\nagent %s · %s · started %s · last active %s · %d messages\n", x.SessionID, x.Agent, x.Path, deref(x.StartedAt), deref(x.LastActivity), x.Messages)
	if h.Omitted != nil {
		fmt.Fprintf(&b, "(the conversation as it stands: %d entries of %d other branches left out)\n", h.Omitted.Entries, h.Omitted.Branches)
	}
	if after > 0 {
		fmt.Fprintf(&b, "(from line %d on)\n", after+1)
	}
	b.WriteString("\n")
	return b.String()
}

// readMemory returns a memory file, one content per state dir holding it,
// each cut to the largest budget.
func (s *server) readMemory(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	path := unescape(strings.TrimPrefix(uri, memoryURI))
	var files []view.MemoryFile
	agents := []string{""}
	if len(s.agents) > 0 {
		agents = s.agents
	}
	var err error
	for _, a := range agents {
		m, e := s.svc.Memory(ctx, ledger.MemoryRequest{Path: path, Agent: a, Refresh: ledger.QueryRefresh()})
		if e != nil {
			err = e
			if clawledger.ErrorCode(e) != clawledger.ENOTFOUND {
				break
			}
			continue
		}
		files = append(files, m.Files...)
	}
	if len(files) == 0 {
		return nil, s.resourceError(uri, err)
	}
	res := &mcp.ReadResourceResult{}
	for _, f := range files {
		text, cut := clip(f.Text, MaxBudget)
		if cut {
			text += fmt.Sprintf("\n[cut at %d of %d bytes: search it (source memory) for the lines you need]\n", MaxBudget, len(f.Text))
		}
		res.Contents = append(res.Contents, &mcp.ResourceContents{URI: uri, MIMEType: "text/markdown", Text: text})
	}
	return res, nil
}

// unescape undoes a URI's percent-encoding (a client may encode the
// slashes of a path); a malformed escape is taken as it is.
func unescape(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}
